// `npm run bench:d1-sessions`: what a D1 session costs in wrangler dev, apart from everything else. A trivial Worker
// (bench/d1-sessions/) reads one row per request, through the binding or through a session at the primary, as the
// service reads (deps.ts); both are loaded in alternating rounds and the workerd CPU per request compared.
// Locally, D1 is a Durable Object in the same workerd process: asked by a session, it computes the bookmark of its
// answer with the object's point-in-time API (`getCurrentBookmark`, miniflare's D1 database object), which it skips
// for the binding's own reads. So the difference measured here is the local emulation's way of making a bookmark (a
// deployed D1 returns one with a session's answers; what that costs there is not measurable here), and it is inside
// every service figure of `npm run bench`: the service's reads and the idempotency object's last write go through
// sessions (bench/RESULTS.md, notes).
// D1_SESSIONS_WRITES=N measures again after N single-row writes through the binding (a run of `npm run bench` writes
// tens of thousands of rows before its gets): whether a session's extra cost grows with the database's writes.
//   D1_SESSIONS_ROUNDS=4   D1_SESSIONS_SECONDS=5   D1_SESSIONS_CONNECTIONS=8   D1_SESSIONS_WRITES=0
// Loopback only. Not part of `npm test`.
import autocannon from 'autocannon';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../scripts/lib/admin.mjs';
import { killGroup } from '../scripts/lib/local-server.ts';
import { CLK_TCK, cpuTicks, workerdPids } from './workerd-cpu.ts';
import { startWranglerDev } from './wrangler-dev.ts';

const ROUNDS = Number(process.env.D1_SESSIONS_ROUNDS ?? 4);
const SECONDS = Number(process.env.D1_SESSIONS_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.D1_SESSIONS_CONNECTIONS ?? 8);
const WRITES = Number(process.env.D1_SESSIONS_WRITES ?? 0);
const WARMUP_S = 2;
const PATHS = ['/plain', '/session'] as const;

async function main() {
  const state = mkdtempSync(join(tmpdir(), 'd1-sessions-'));
  let child: ChildProcess | undefined;
  try {
    const dev = await startWranglerDev({
      name: 'd1-sessions',
      args: ['-c', join(ROOT, 'bench', 'd1-sessions', 'wrangler.toml'), '--persist-to', join(state, 'state')],
      readyPath: '/plain',
      logFile: join(state, 'wrangler.log'),
      spawned: (spawned) => (child = spawned),
    });
    const pids = workerdPids(dev.child.pid!);
    console.log(`${ROUNDS} rounds × ${SECONDS} s per side, ${CONNECTIONS} connections; workerd CPU per request:`);
    await compare(dev.baseUrl, pids, 'on an empty database');
    if (WRITES > 0) {
      const written = await autocannon({
        url: `${dev.baseUrl}/write`,
        method: 'POST',
        connections: CONNECTIONS,
        amount: WRITES,
      });
      if (written.non2xx > 0 || written.errors > 0)
        throw new Error(`writes: ${written.non2xx} non-2xx, ${written.errors} errors`);
      await compare(dev.baseUrl, pids, `after ${WRITES} writes`);
    }
  } finally {
    if (child) killGroup(child, 'SIGKILL');
    rmSync(state, { recursive: true, force: true });
  }
}

/** Both reads in alternating rounds; prints the workerd CPU per request of each. */
async function compare(base: string, pids: number[], label: string) {
  // A warm-up per side first, discarded: the first load of a path would also pay for compiling its code.
  for (const path of PATHS) await autocannon({ url: base + path, connections: CONNECTIONS, duration: WARMUP_S });
  const totals = new Map(PATHS.map((path) => [path, { requests: 0, ticks: 0 }]));
  for (let round = 0; round < ROUNDS; round++) {
    // Each side first in turn, so a machine slowing down over the run slows both alike.
    for (const path of round % 2 === 0 ? PATHS : [...PATHS].reverse()) {
      const before = cpuTicks(pids);
      const result = await autocannon({ url: base + path, connections: CONNECTIONS, duration: SECONDS });
      const total = totals.get(path)!;
      total.ticks += cpuTicks(pids) - before;
      total.requests += result.requests.total;
      if (result.non2xx > 0 || result.errors > 0)
        throw new Error(`${path}: ${result.non2xx} non-2xx, ${result.errors} errors`);
    }
  }
  const perRequest = (path: (typeof PATHS)[number]) => {
    const { requests, ticks } = totals.get(path)!;
    return ((ticks / CLK_TCK) * 1000) / requests;
  };
  const plain = perRequest('/plain');
  const session = perRequest('/session');
  console.log(`${label}:`);
  console.log(
    `  through the binding:              ${plain.toFixed(2)} ms (${totals.get('/plain')!.requests} requests)`,
  );
  console.log(
    `  through a session at the primary: ${session.toFixed(2)} ms (${totals.get('/session')!.requests} requests)`,
  );
  console.log(`  a session's query costs ${(session - plain).toFixed(2)} ms more`);
}

await main();
