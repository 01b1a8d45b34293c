// The served /openapi.json, read the way `npm run generate:client` and `npm run openapi:release` do:
// `--from <file>` a saved description, BASE_URL a running server's, otherwise a throwaway local server
// started from the working tree (temporary state, free port; about 20 s).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startLocalServer } from './local-server.ts';

export async function loadServedDescription(argv: string[], logFile: string): Promise<unknown> {
  const fromIndex = argv.indexOf('--from');
  if (fromIndex !== -1) {
    const file = argv[fromIndex + 1];
    if (!file) throw new Error('--from needs a file');
    return JSON.parse(readFileSync(file, 'utf8'));
  }
  if (process.env.BASE_URL) {
    const res = await fetch(new URL('/openapi.json', process.env.BASE_URL));
    if (!res.ok) throw new Error(`GET ${process.env.BASE_URL}/openapi.json answered ${res.status}`);
    return res.json();
  }
  console.log('Starting a throwaway local server...');
  const server = await startLocalServer({ logFile });
  try {
    const res = await fetch(`${server.baseUrl}/openapi.json`);
    if (!res.ok) throw new Error(`GET /openapi.json answered ${res.status}`);
    return await res.json();
  } finally {
    await server.stop();
  }
}

export const serverLogFile = (root: string, name: string) => join(root, 'test-results', name);
