// Builds the dashboard, then starts the service the way a user does (`npm start` = scripts/start.mjs) for the
// Node test project: a fresh temporary state directory (never the developer's `.dev.vars` or `.wrangler/state`), a free
// port, ready once GET /openapi.json answers (scripts/lib/local-server.ts). Provides the base URL and the
// bootstrap admin to the tests (`inject('baseUrl')`), and on teardown ends the whole process group.
// The server's output goes to test-results/node-server.log.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startLocalServer } from '../scripts/lib/local-server.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** e.g. http://127.0.0.1:41234, the local server of this run. */
    baseUrl: string;
    /** Bootstrap admin of that server (its .dev.vars, made from .dev.vars.example). */
    adminEmail: string;
    adminPassword: string;
  }
}

export const SERVER_LOG = join(import.meta.dirname, '..', 'test-results', 'node-server.log');

export default async function setup(project: TestProject) {
  // The dashboard as its sources are now (npm install built it once; an edit since would otherwise go untested).
  execFileSync(process.execPath, [join(import.meta.dirname, '..', 'scripts', 'build-dashboard.mjs')], {
    stdio: 'inherit',
  });
  const server = await startLocalServer({ logFile: SERVER_LOG });
  project.provide('baseUrl', server.baseUrl);
  project.provide('adminEmail', server.adminEmail);
  project.provide('adminPassword', server.adminPassword);
  return server.stop;
}
