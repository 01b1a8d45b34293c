// The bench's local servers (run.ts, profile.ts), the service (`wrangler dev bench/instrumented.ts --env test`) and the
// baseline (bench/baseline), each on a fresh state in its own process group on free loopback ports; and the CPU time
// of their workerd processes.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { randomBytes } from 'node:crypto';
import { isAbsolute, join } from 'node:path';
import { ensureAdmin, ROOT, runWrangler, wranglerBin } from '../scripts/lib/admin.mjs';
import { databaseBindings } from '../scripts/lib/databases.mjs';
import { exited, freePort, killGroup } from '../scripts/lib/local-server.ts';
import { login } from './api.ts';
import { platformModelVars } from './platform-model.ts';

/** A local server: its process group's leader, its URL, and its isolate's DevTools inspector (bench/profile.ts). */
export type Server = { name: string; child: ChildProcess; baseUrl: string; inspectorUrl: string };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const [started, dirs]: [ChildProcess[], string[]] = [[], []];

/** Stops the servers (whole process groups), their state kept (bench/history.ts writes into it meanwhile). */
export async function stop(...servers: ChildProcess[]) {
  for (const child of servers) if (!exited(child)) killGroup(child, 'SIGTERM');
  for (let i = 0; i < 100 && servers.some((child) => !exited(child)); i++) await sleep(100);
  for (const child of servers) killGroup(child, 'SIGKILL');
}

/** A fresh temporary directory for a run's state and logs, removed by `stopAll`. */
export function tempDir(name: string): string {
  dirs.push(mkdtempSync(join(tmpdir(), `payment-service-${name}-`)));
  return dirs.at(-1)!;
}

/** Stops every server started and removes every temporary directory. */
export async function stopAll() {
  await stop(...started);
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/**
 * Runs `task` and exits with its outcome, every server stopped and directory removed first, also on a signal or after
 * 45 minutes: the servers run in process groups of their own, which a Ctrl-C at the terminal does not reach.
 */
export async function runGuarded(task: () => Promise<void>): Promise<never> {
  setTimeout(() => void stopAll().finally(() => process.exit(1)), 45 * 60_000).unref();
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
    process.once(signal, () => void stopAll().finally(() => process.exit(130)));
  let exitCode = 0;
  try {
    await task();
  } catch (error) {
    console.error(`[bench] failed: ${(error as Error).stack ?? error}`);
    exitCode = 1;
  } finally {
    await stopAll();
  }
  process.exit(exitCode);
}

/** `wrangler dev <args>`, its output in `<dir>/<name>.log`, awaited until `readyPath` answers below 500. */
async function startWrangler(name: string, dir: string, args: string[], readyPath: string): Promise<Server> {
  const [port, inspector] = [await freePort(), await freePort()];
  const logFile = join(dir, `${name}.log`);
  const fd = openSync(logFile, 'w');
  const flags = ['--port', String(port), '--ip', '127.0.0.1', '--inspector-port', String(inspector)];
  const child = spawn(process.execPath, [wranglerBin(), 'dev', ...args, ...flags, '--inspector-ip', '127.0.0.1'], {
    cwd: ROOT,
    // Its own process group: stopAll reaches wrangler and every workerd it starts.
    detached: true,
    stdio: ['ignore', fd, fd],
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CLOUDFLARE_CF_FETCH_ENABLED: 'false', CI: 'true' },
  });
  closeSync(fd);
  started.push(child);
  const baseUrl = `http://127.0.0.1:${port}`;
  for (const deadline = Date.now() + 180_000; Date.now() < deadline; await sleep(250)) {
    if (exited(child)) break;
    try {
      const res = await fetch(baseUrl + readyPath, { signal: AbortSignal.timeout(5_000) });
      await res.arrayBuffer();
      if (res.status < 500) return { name, child, baseUrl, inspectorUrl: `http://127.0.0.1:${inspector}` };
    } catch {
      // Not listening yet.
    }
  }
  throw new Error(`${name}: wrangler dev did not start; its log:\n${readFileSync(logFile, 'utf8').slice(-3000)}`);
}

async function migrate(binding: string, state: string, config: string[]) {
  const args = ['d1', 'migrations', 'apply', binding, '--local', '--persist-to', state, ...config];
  const migrated = await runWrangler(args, { capture: true, env: { CI: 'true' } });
  if (migrated.code !== 0) throw new Error(`${binding} migrations failed:\n${migrated.stdout}`);
}

/**
 * The service on a fresh state in `dir`: the project's wrangler.toml with its paths made absolute, without its
 * `[assets]` (deployed, Cloudflare's asset router in front of the Worker is not the Worker's work), with `shards`
 * shard databases when given; migrated, with fresh secrets and an admin, whose access token comes back; `restart`
 * serves the same state again once stopped.
 */
export async function startService(dir: string, options: { shards?: number; vars?: string[] } = {}) {
  const toml = readFileSync(join(ROOT, 'wrangler.toml'), 'utf8');
  const absolute = (path: string) => (isAbsolute(path) ? path : join(ROOT, path));
  let sections = toml
    .replace(/^(main|migrations_dir)\s*=\s*"([^"]+)"/gm, (_, key, path) => `${key} = "${absolute(path)}"`)
    .split(/^(?=\[)/m)
    .filter((section) => !section.startsWith('[assets]'));
  const isShard = (s: string) => s.startsWith('[[env.test.d1_databases]]') && /^binding = "SHARD_/m.test(s);
  const shard = sections.find(isShard)!;
  const { shards } = options;
  if (shards !== undefined) {
    sections = sections.filter((s) => !isShard(s));
    for (let i = 0; i < shards; i++) {
      const id = `00000000-0000-4000-8000-${(0x5d000 + i).toString(16).padStart(12, '0')}`;
      sections.push(
        `\n${shard
          .replace(/SHARD_\d+/, `SHARD_${i}`)
          .replace(/shard-\d+/, `shard-${i}`)
          .replace(/"[0-9a-f-]{36}"/, `"${id}"`)}`,
      );
    }
  }
  const config = ['-c', join(dir, 'wrangler.toml'), '--env', 'test'];
  writeFileSync(config[1]!, sections.join(''));
  const state = join(dir, 'service-state');
  mkdirSync(state);
  const databases = databaseBindings('test', config[1]);
  for (const binding of [databases.control, ...databases.shards]) await migrate(binding, state, config);
  const [email, password] = [`bench-${randomBytes(4).toString('hex')}@example.com`, randomBytes(18).toString('hex')];
  const admin = { email, password };
  await ensureAdmin({ env: 'test', target: ['--local', '--persist-to', state], name: 'Bench Admin', ...admin });
  const devVars = join(dir, '.dev.vars');
  const [jwt, pepper, ring] = [0, 0, 0].map(() => randomBytes(32));
  const vars = `JWT_SIGNING_KEY=${jwt!.toString('hex')}\nAPI_KEY_PEPPER=${pepper!.toString('hex')}\n`;
  writeFileSync(devVars, `${vars}CREDENTIALS_ENCRYPTION_KEYS=k1:${ring!.toString('base64')}\n`);
  const args = ['bench/instrumented.ts', ...config, '--persist-to', state, '--env-file', devVars];
  const models = [...platformModelVars(toml), ...(options.vars ?? [])];
  const restart = () => startWrangler('service', dir, [...args, ...models], '/openapi.json');
  const server = await restart();
  return { server, token: await login(server.baseUrl, admin), state, restart };
}

export async function startBaseline(dir: string): Promise<Server> {
  const config = ['-c', join('bench', 'baseline', 'wrangler.toml')];
  const state = join(dir, 'baseline-state');
  await migrate('DB', state, config);
  return startWrangler('baseline', dir, [...config, '--persist-to', state], '/payments/none');
}

/** Clock ticks per second, the unit of /proc's CPU times. */
export const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** utime + stime of the workerd processes of `server`'s process group (its pid is the group's id), in clock ticks. */
export function workerdTicks(server: Server): number {
  let ticks = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let text: string;
    try {
      text = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    // "pid (comm) state ppid pgrp ... utime stime ...": comm may hold spaces, so split after the last ')'.
    const close = text.lastIndexOf(')');
    const fields = text.slice(close + 2).split(' ');
    if (text.slice(text.indexOf('(') + 1, close) === 'workerd' && Number(fields[2]) === server.child.pid)
      ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks;
}
