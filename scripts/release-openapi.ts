// `npm run openapi:release`: records the served description as the released one (openapi/released.json),
// the baseline the compatibility gate compares against (test/contract/compatibility.test.ts). Run it when
// a version is deployed to `live`, after its CHANGELOG.md entry; commit the file. Reads the description
// like `npm run generate:client` (throwaway local server, BASE_URL, or `--from <file>`).
// Runs on Node 22.18+ (type stripping): `npm run` uses the project's own Node.
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadServedDescription, serverLogFile } from './lib/served-description.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const RELEASED_PATH = join(ROOT, 'openapi', 'released.json');

async function main() {
  const description = (await loadServedDescription(
    process.argv,
    serverLogFile(ROOT, 'release-openapi-server.log'),
  )) as { servers?: unknown; info?: { version?: string } };
  // `servers` names the origin it was served from, not the contract.
  const { servers: _servers, ...released } = description;
  writeFileSync(RELEASED_PATH, `${JSON.stringify(released, null, 2)}\n`);
  console.log(`Wrote ${RELEASED_PATH} (info.version ${released.info?.version})`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((error: unknown) => {
    console.error(`openapi:release: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
}
