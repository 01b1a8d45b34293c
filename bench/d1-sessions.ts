// `npm run bench:d1-sessions`: what a D1 session costs in wrangler dev, apart from everything else. A trivial Worker
// (bench/d1-sessions/) reads one row per request, through the binding or through a session at the primary, as the
// service reads (deps.ts); both are loaded in alternating rounds and the workerd CPU per request compared.
// Locally, D1 is a Durable Object in the same workerd process: asked by a session, it computes the bookmark of its
// answer with the object's point-in-time API (`getCurrentBookmark`, miniflare's D1 database object), which it skips
// for the binding's own reads. So the difference measured here is the local emulation's way of making a bookmark (a
// deployed D1 returns one with a session's answers; what that costs there is not measurable here), and it is inside
// every service figure of `npm run bench`: the service's reads and the idempotency object's last write go through
// sessions (bench/RESULTS.md, notes).
// D1_SESSIONS_COMPARE picks another pair, to tell what else of a D1 call costs: `round-trips` (one read against three
// in a row), `statements` (a batch of two reads against five), `columns` (a batch of two reads of one column against
// two of 42 columns named as the service's payment row is). The service's operations differ from the bench's floor in
// their statements and rows, not in their round trips (bench/RESULTS.md, notes).
// D1_SESSIONS_WRITES=N measures again after N single-row writes through the binding (a run of `npm run bench` writes
// tens of thousands of rows before its gets): whether a session's extra cost grows with the database's writes.
//   D1_SESSIONS_COMPARE=sessions   D1_SESSIONS_ROUNDS=4   D1_SESSIONS_SECONDS=5   D1_SESSIONS_CONNECTIONS=8
//   D1_SESSIONS_WRITES=0
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
/** Each comparison: the two paths of bench/d1-sessions/worker.ts and what each does. */
const PAIRS = {
  sessions: [
    ['/plain', 'through the binding'],
    ['/session', 'through a session at the primary'],
  ],
  'round-trips': [
    ['/round-trips/1', 'one round trip'],
    ['/round-trips/3', 'three round trips in a row'],
  ],
  statements: [
    ['/statements/2', 'a batch of two statements'],
    ['/statements/5', 'a batch of five statements'],
  ],
  columns: [
    ['/columns/narrow', 'two reads of one column'],
    ['/columns/wide', 'two reads of 42 columns'],
  ],
} as const;
const COMPARE = (process.env.D1_SESSIONS_COMPARE ?? 'sessions') as keyof typeof PAIRS;
if (!Object.hasOwn(PAIRS, COMPARE)) throw new Error(`D1_SESSIONS_COMPARE is one of ${Object.keys(PAIRS).join(', ')}`);
const PAIR = PAIRS[COMPARE];
const PATHS = PAIR.map(([path]) => path);

async function main() {
  const state = mkdtempSync(join(tmpdir(), 'd1-sessions-'));
  let child: ChildProcess | undefined;
  try {
    const dev = await startWranglerDev({
      name: 'd1-sessions',
      args: ['-c', join(ROOT, 'bench', 'd1-sessions', 'wrangler.toml'), '--persist-to', join(state, 'state')],
      readyPath: PAIR[0][0],
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
  const [[first, firstLabel], [second, secondLabel]] = PAIR;
  const width = Math.max(firstLabel.length, secondLabel.length) + 1;
  console.log(`${label}:`);
  for (const [path, what] of PAIR) {
    const line = `${what}:`.padEnd(width);
    console.log(`  ${line} ${perRequest(path).toFixed(2)} ms (${totals.get(path)!.requests} requests)`);
  }
  console.log(
    `  ${secondLabel} cost ${(perRequest(second) - perRequest(first)).toFixed(2)} ms more than ${firstLabel}`,
  );
}

await main();
