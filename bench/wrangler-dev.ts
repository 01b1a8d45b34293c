// A local `wrangler dev` for the bench's tools (run.ts, d1-sessions.ts): started in its own process group on free
// loopback ports, offline, and awaited until it answers. Measurement only; nothing of it runs in the service.
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { ROOT, wranglerBin } from '../scripts/lib/admin.mjs';
import { exited, freePort } from '../scripts/lib/local-server.ts';

const HOST = '127.0.0.1';
const READY_TIMEOUT_MS = 180_000;

export interface WranglerDev {
  child: ChildProcess;
  baseUrl: string;
  logFile: string;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Starts `wrangler dev <args>`, its output in `logFile`, and waits until `readyPath` answers below 500.
 * `spawned` gets the child at once, so a caller's cleanup reaches it even if it never becomes ready.
 */
export async function startWranglerDev(options: {
  name: string;
  args: string[];
  readyPath: string;
  logFile: string;
  spawned?: (child: ChildProcess) => void;
}): Promise<WranglerDev> {
  const { name, args, readyPath, logFile } = options;
  const port = await freePort();
  const inspectorPort = await freePort();
  const fd = openSync(logFile, 'w');
  const child = spawn(
    process.execPath,
    [
      wranglerBin(),
      'dev',
      ...args,
      '--port',
      String(port),
      '--ip',
      HOST,
      '--inspector-port',
      String(inspectorPort),
      '--inspector-ip',
      HOST,
      '--show-interactive-dev-session=false',
      '--log-level',
      'warn',
    ],
    {
      cwd: ROOT,
      // Its own process group: the cleanup reaches wrangler and every workerd it starts.
      detached: true,
      stdio: ['ignore', fd, fd],
      env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CLOUDFLARE_CF_FETCH_ENABLED: 'false', CI: 'true' },
    },
  );
  closeSync(fd);
  options.spawned?.(child);
  const baseUrl = `http://${HOST}:${port}`;
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (exited(child))
      throw new Error(
        `${name}: wrangler dev exited (${child.exitCode ?? child.signalCode}); see its log:\n${tail(logFile)}`,
      );
    try {
      const res = await fetch(baseUrl + readyPath, { signal: AbortSignal.timeout(5_000) });
      await res.arrayBuffer();
      if (res.status < 500) return { child, baseUrl, logFile };
    } catch {
      // Not listening yet.
    }
    await sleep(250);
  }
  throw new Error(`${name}: not ready within ${READY_TIMEOUT_MS / 1000} s; see its log:\n${tail(logFile)}`);
}

/** The last lines of a server's log, for an error message. */
function tail(file: string, lines = 30) {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}
