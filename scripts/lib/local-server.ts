// A throwaway local server started exactly as `npm start` does (scripts/start.mjs), in a fresh temporary
// state directory (PAYMENT_SERVICE_STATE_DIR: its own .dev.vars with fresh secrets and
// ALLOW_INSECURE_WEBHOOKS=true from .dev.vars.example, its own D1 / Durable Object state), so the
// developer's `.dev.vars` and `.wrangler/state` are never touched, on a free port. Used by the Node test
// project (test-node/global-setup.ts) and by `npm run generate:client` when no BASE_URL is given.
// `stop()` ends the whole process group (start.mjs, wrangler, workerd) and removes the directory.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const READY_TIMEOUT_MS = 120_000;

export interface LocalServer {
  /** e.g. http://127.0.0.1:41234 */
  baseUrl: string;
  /** The bootstrap admin of that server (its .dev.vars). */
  adminEmail: string;
  adminPassword: string;
  stop(): Promise<void>;
  /**
   * SIGKILL to the whole process group at once, as a crash would end it (no graceful shutdown); the state
   * directory is kept so that a server started again on it (`stateDir`) resumes the same data.
   */
  kill(): Promise<void>;
}

export interface LocalServerOptions {
  logFile: string;
  /** Keep the state here (created if missing) and leave it in place on stop; default: a fresh temporary one, removed on stop. */
  stateDir?: string;
  /** Default: a free port. */
  port?: number;
  /** More `wrangler dev` arguments (scripts/start.mjs passes them on): another entry, `--var`s. */
  wranglerArgs?: string[];
}

/** A free TCP port on 127.0.0.1 (bound and released at once). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export const exited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;

/** Signals the whole process group of `child` (it must have been spawned `detached`). */
export function killGroup(child: ChildProcess, signal: NodeJS.Signals) {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // The group is gone already.
  }
}

async function waitUntilReady(baseUrl: string, child: ChildProcess, logFile: string) {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (exited(child))
      throw new Error(`npm start exited (${child.exitCode ?? child.signalCode}) before serving; see ${logFile}`);
    try {
      const res = await fetch(`${baseUrl}/openapi.json`, { signal: AbortSignal.timeout(5_000) });
      if (res.ok) {
        await res.json();
        return;
      }
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`the server did not answer GET /openapi.json within ${READY_TIMEOUT_MS / 1000} s; see ${logFile}`);
}

/** Starts the server, resolves once GET /openapi.json answers; its output goes to `logFile`. */
export async function startLocalServer({
  logFile,
  stateDir: keptStateDir,
  port: fixedPort,
  wranglerArgs = [],
}: LocalServerOptions): Promise<LocalServer> {
  if (keptStateDir) mkdirSync(keptStateDir, { recursive: true });
  const stateDir = keptStateDir ?? mkdtempSync(join(tmpdir(), 'payment-service-local-'));
  const port = fixedPort ?? (await freePort());
  const baseUrl = `http://127.0.0.1:${port}`;
  mkdirSync(dirname(logFile), { recursive: true });
  const log = createWriteStream(logFile, { flags: keptStateDir ? 'a' : 'w' });

  // process.execPath: the Node running this (the project's Node 22 under `npm run` / `npm test`).
  const child = spawn(process.execPath, [join(ROOT, 'scripts', 'start.mjs'), ...wranglerArgs], {
    cwd: ROOT,
    // Its own process group, so stop() reaches wrangler and workerd too.
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PORT: String(port), PAYMENT_SERVICE_STATE_DIR: stateDir, CI: 'true' },
  });
  child.stdout?.pipe(log, { end: false });
  child.stderr?.pipe(log, { end: false });

  const stop = async () => {
    if (!exited(child)) {
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      killGroup(child, 'SIGTERM');
      const timer = setTimeout(() => killGroup(child, 'SIGKILL'), 10_000);
      await gone;
      clearTimeout(timer);
    }
    // Children that outlived start.mjs (wrangler, workerd) share its group.
    killGroup(child, 'SIGKILL');
    log.end();
    if (!keptStateDir) rmSync(stateDir, { recursive: true, force: true });
  };

  const kill = async () => {
    const gone = exited(child)
      ? Promise.resolve()
      : new Promise<void>((resolve) => child.once('exit', () => resolve()));
    killGroup(child, 'SIGKILL');
    await gone;
    log.end();
  };

  try {
    await waitUntilReady(baseUrl, child, logFile);
  } catch (error) {
    await stop();
    throw error;
  }

  const vars = readFileSync(join(stateDir, '.dev.vars'), 'utf8');
  const value = (name: string, fallback: string) =>
    new RegExp(`^${name}=(.+)$`, 'm').exec(vars)?.[1]?.trim() || fallback;
  return {
    baseUrl,
    adminEmail: value('BOOTSTRAP_ADMIN_EMAIL', 'admin@example.com'),
    adminPassword: value('BOOTSTRAP_ADMIN_PASSWORD', 'admin-password'),
    stop,
    kill,
  };
}
