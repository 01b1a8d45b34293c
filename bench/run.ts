// `npm run bench`: the service against a baseline Worker on the same runtime, in one run: what a maintainer reads
// before and after a change to decide it (bench/RESULTS.md). Per operation (create payment, get payment, idempotent
// replay, refund) one autocannon load drives both (bench/servers.ts, bench/load.ts) in rounds alternating which goes
// first: requests/s, p50/p99, workerd's CPU per request; then single requests give each one's D1 work (`X-D1-Stats`),
// and a refund's rows read after 1 and after BENCH_HISTORY earlier refunds of its payment. Then the per-key load: a
// quiet key alone, beside a flood over the operations' keys, beside one key of the same owner flooding beyond its
// limit. `-- --scale 1,2,4`: only the shard scale run, per shard count a fresh deployment, BENCH_SCALE_OWNERS merchants
// placed by the directory, creates spread over them, every D1 database one call at a time (`--d1-service-ms`, 30).
// `-- history`: only the history run, a merchant's first 1,000 payments against its millionth (bench/history.ts).
// Knobs: BENCH_DURATION (s per round, 5), BENCH_ROUNDS (4), BENCH_WARMUP (s, 3), BENCH_CONNECTIONS (16), BENCH_POOL
// (256), BENCH_SAMPLES (5), BENCH_OPS (create,get,replay,refund), BENCH_KEYS (32), BENCH_KEYLOAD_DURATION (s per
// phase, 10; 0 skips it), BENCH_KEYLOAD_RATE (20), BENCH_HISTORY (200; 0 skips it), BENCH_SCALE_OWNERS (8).
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../scripts/lib/admin.mjs';
import { auth, merchant, newMerchant, placement, send, sendOk } from './api.ts';
import { historyRun } from './history.ts';
import type { D1Stats } from './d1.ts';
import * as load from './load.ts';
import { fmt, LARGE, type Operation, type Side, type Summary } from './load.ts';
import { runGuarded, startBaseline, startService, stopAll, tempDir } from './servers.ts';

function setting(name: string, fallback: number, max: number, raw = process.env[name]): number {
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > max) throw new Error(`${name}: an integer from 0 to ${max}`);
  return value;
}
const flag = (name: string) => {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : process.argv[at + 1];
};

const DURATION_S = setting('BENCH_DURATION', 5, 120);
const ROUNDS = setting('BENCH_ROUNDS', 4, 20);
const WARMUP_S = setting('BENCH_WARMUP', 3, 60);
const CONNECTIONS = setting('BENCH_CONNECTIONS', 16, 256);
const POOL = setting('BENCH_POOL', 256, 5000);
const SAMPLES = setting('BENCH_SAMPLES', 5, 50);
// Each API key may send 500 requests per 10 s in `test` (docs/limits.md): the load is spread over many keys (32 keep
// each under its limit up to 1,600 requests/s); every request still goes through the rate limiter.
const KEYS = setting('BENCH_KEYS', 32, 256);
const KEYLOAD_S = setting('BENCH_KEYLOAD_DURATION', 10, 120);
const KEYLOAD_RATE = setting('BENCH_KEYLOAD_RATE', 20, 45);
const HISTORY = setting('BENCH_HISTORY', 200, 2000);
const SCALE = (flag('--scale') ?? '')
  .split(',')
  .filter(Boolean)
  .map((v) => setting('--scale', 1, 16, v));
const SERVICE_MS = setting('--d1-service-ms', 30, 1000, flag('--d1-service-ms'));
const SCALE_OWNERS = setting('BENCH_SCALE_OWNERS', 8, 64);
const SELECTED = (process.env.BENCH_OPS ?? load.OPERATIONS.join(',')).split(',') as Operation[];
if (SELECTED.some((op) => !load.OPERATIONS.includes(op)))
  throw new Error(`BENCH_OPS: some of ${load.OPERATIONS.join(',')}`);
// Each operation's label and targets: the throughput ratio to the baseline that issue 33 holds it to (the service's
// before that issue), and its serial D1 round trips (the whole request, auth included).
const OPS: Record<Operation, [label: string, ratio: number, roundTrips: number | null]> = {
  create: ['create payment (POS, approved)', 0.72, 2],
  get: ['get payment', 0.83, 1],
  replay: ['idempotent replay', 0.92, null],
  refund: ['refund (0.01 of a large payment)', 0.67, 3],
};
const label = (op: Operation) => OPS[op][0];
const RESULTS_FILE = join(ROOT, 'bench', 'RESULTS.md');
const RUN_ID = randomBytes(4).toString('hex');
const log = (message: string) => console.log(`[bench] ${message}`);

// ------------------------------------------------------------------ load

/** Rows read by a refund after 1 and after HISTORY earlier refunds of its payment (one key, one at a time). */
async function refundRows(side: Side) {
  const create = side.request.create(load.nextNumber('service:create', side.keys));
  const payment = await send(side.server.baseUrl, { ...create, body: create.body!.replace('"10.00"', `"${LARGE}"`) });
  const rows: History = [];
  for (let n = 0; n <= HISTORY; n++) {
    const { d1 } = await sendOk(
      side.server.baseUrl,
      load.refund(`/v1/payments/${payment.body.data.id}`, `history-${RUN_ID}-${n}`, {
        Authorization: create.headers.Authorization!,
      }),
    );
    if (n === 1 || n === HISTORY) rows.push({ after: n, rowsRead: d1?.rowsRead ?? null });
  }
  return rows;
}

// ------------------------------------------------------------------ report

const cell = (stats: D1Stats | null, pick: keyof D1Stats) =>
  stats ? `${stats[pick]}${stats.unmetered > 0 ? ` (+${stats.unmetered} unmetered)` : ''}` : 'n/a';
/** RESULTS.md as the run found it: its Scale section and Notes are kept. */
const previous = existsSync(RESULTS_FILE) ? readFileSync(RESULTS_FILE, 'utf8') : '# Benchmark\n\n## Notes\n';
const sectionPattern = (name: string) => new RegExp(`<!-- ${name}:start -->[\\s\\S]*?<!-- ${name}:end -->`);
const section = (name: string) => sectionPattern(name).exec(previous)?.[0] ?? null;

type History = { after: number; rowsRead: number | null }[];

function targets(results: Result[], history: History): string[] {
  const lines: string[] = [];
  const check = (ok: boolean, label: string, detail: string) =>
    lines.push(`- ${ok ? 'met' : '**missed**'}: ${label}: ${detail}`);
  for (const r of results) {
    const [, ratio, roundTrips] = OPS[r.op];
    const rounds = r.service.roundRps.map((x, i) => fmt(x / r.baseline.roundRps[i]!, 2)).join(', ');
    check(r.ratio >= ratio, `${label(r.op)} ≥ ${ratio}× baseline`, `${fmt(r.ratio, 2)}× (rounds ${rounds})`);
    const trips = r.d1?.roundTrips ?? NaN;
    if (roundTrips !== null) check(trips <= roundTrips, `≤ ${roundTrips} serial D1 round trips`, `${trips}`);
    if (r.op !== 'get') continue;
    const cpu = r.service.cpuMsPerRequest / r.baseline.cpuMsPerRequest;
    check(cpu <= 1.5, "workerd CPU ≤ 1.5× the baseline's", `${fmt(cpu, 2)}×`);
    check((r.d1?.rowsRead ?? NaN) <= 2, 'rows read ≤ 2', `${r.d1?.rowsRead}`);
  }
  const [first, last] = history;
  const detail = history.map((h) => `${h.rowsRead} after ${h.after}`).join(', ');
  if (first && last)
    check(first.rowsRead === last.rowsRead, 'rows read per refund independent of earlier ones', detail);
  return lines;
}

function render(results: Result[], history: History, perKey: [string, string, Summary][], minutes: number): string {
  const lines = [
    '# Benchmark: the service against its platform baseline',
    '',
    'Written by `npm run bench` (bench/run.ts), which keeps the Scale (`--scale`) and History (`-- history`) sections and',
    'the Notes. The baseline (bench/baseline) does only the unavoidable work of each operation on the same runtime: create',
    'and refund one Durable Object call and one D1 batch, get one indexed read, replay one Durable Object call. Ratios',
    'compare the two measured in the same run, in alternating rounds, so a busy machine slows both alike.',
    '',
    `Run of ${new Date().toISOString()}, ${fmt(minutes)} min: ${load.machine()}. ${CONNECTIONS} connections, ${WARMUP_S} s warm-up, ${ROUNDS} rounds × ${DURATION_S} s per side, a pool of ${POOL} payments per side.`,
    '',
    '## Results',
    '',
    '| operation | side | req/s | ratio | p50 ms | p99 ms | non-2xx | D1 statements | D1 round trips | rows read | rows written | workerd CPU ms/req |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...results.flatMap((r) =>
      (
        [
          [label(r.op), 'service', r.service, r.d1, `**${fmt(r.ratio, 2)}×**`],
          ['', 'baseline', r.baseline, r.baselineD1, '1.00×'],
        ] as const
      ).map(
        ([label, side, s, d1, ratio]) =>
          `| ${label} | ${side} | ${fmt(s.rps)} | ${ratio} | ${fmt(s.p50)} | ${fmt(s.p99)} | ${s.non2xx} | ${cell(d1, 'statements')} | ${cell(d1, 'roundTrips')} | ${cell(d1, 'rowsRead')} | ${cell(d1, 'rowsWritten')} | ${fmt(s.cpuMsPerRequest, 2)} |`,
      ),
    ),
    '',
    `D1: the middle of ${SAMPLES} single requests after the load (D1's own \`rows_read\` / \`rows_written\`), the idempotency object's share included. CPU: utime + stime of the side's workerd processes over its rounds, per request.`,
    ...(history.length > 0
      ? [
          '',
          `A refund of a payment reads ${history.map((h) => `${h.rowsRead ?? 'n/a'} rows after ${h.after} earlier refund(s)`).join(', ')}.`,
        ]
      : []),
    ...results.flatMap((r) =>
      r.service.failures.length > 0
        ? ['', `${r.op}: ${r.service.statuses}; first: \`${r.service.failures[0]!.replaceAll('`', "'")}\``]
        : [],
    ),
  ];
  if (perKey.length > 0)
    lines.push(
      '',
      '## Per-key load: one key flooding, another of the same owner',
      '',
      `Get payment, ${KEYLOAD_S} s per phase. A quiet key reads at ${KEYLOAD_RATE} requests/s: alone; beside a flood of ${CONNECTIONS} connections over ${KEYS} keys of the same owner, none reaching its limit; beside one other key of the owner flooding far beyond its limit of 500 requests per 10 s (docs/limits.md), answered \`429\` once its own budget is spent. Locally one isolate serves every request, so what a flood is served delays the quiet key.`,
      '',
      '| phase | key | req/s | answers (status × count) | p50 ms | p99 ms |',
      '| --- | --- | ---: | --- | ---: | ---: |',
      ...perKey.map(
        ([phase, key, s]) => `| ${phase} | ${key} | ${fmt(s.rps)} | ${s.statuses} | ${fmt(s.p50)} | ${fmt(s.p99)} |`,
      ),
    );
  lines.push(
    '',
    '## Targets',
    '',
    ...targets(results, history),
    '',
    ...['scale', 'history'].flatMap((name) => (section(name) ? [section(name)!, ''] : [])),
  );
  lines.push('## Notes', '', section('notes') ?? '<!-- notes:start -->\n<!-- notes:end -->', '');
  return lines.join('\n');
}

// ------------------------------------------------------------------ runs

/** One operation on both sides: a warm-up each, then rounds, each side first in turn, then the D1 samples. */
async function measure(op: Operation, service: Side, baseline: Side) {
  const drive = (s: Side, seconds: number) =>
    load.drive(s.server, `${s.server.name}:${op}`, s.request[op], seconds, CONNECTIONS);
  await drive(service, WARMUP_S);
  await drive(baseline, WARMUP_S);
  const rounds: load.Round[][] = [[], []];
  // A machine slowing down within a round slows each side alike over the rounds.
  for (let round = 0; round < ROUNDS; round++)
    for (const i of round % 2 === 0 ? [0, 1] : [1, 0])
      rounds[i]!.push(await drive([service, baseline][i]!, DURATION_S));
  const [s, b] = [load.summarize(rounds[0]!), load.summarize(rounds[1]!)];
  // One API key (as a busy key's), fresh request numbers.
  const sample = async (s: Side) =>
    (await load.oneAtATime(s.server, () => s.request[op](load.nextNumber(`${s.server.name}:${op}`, s.keys)), SAMPLES))
      .d1;
  const [d1, baselineD1] = [await sample(service), await sample(baseline)];
  log(
    `${label(op)}: ${fmt(s.rps / b.rps, 2)}×; CPU ${fmt(s.cpuMsPerRequest, 2)} against ${fmt(b.cpuMsPerRequest, 2)} ms`,
  );
  return { op, service: s, baseline: b, d1, baselineD1, ratio: s.rps / b.rps };
}
type Result = Awaited<ReturnType<typeof measure>>;

async function main() {
  const began = Date.now();
  const dir = tempDir('bench');
  log(`state in ${dir}; starting the service and the baseline...`);
  const [{ server, token }, baselineServer] = await Promise.all([startService(dir), startBaseline(dir)]);
  log(`creating ${KEYS} API keys, a sandbox POS method and ${POOL} payments per side...`);
  const { keys, method } = await merchant(server.baseUrl, token, KEYS + 2);
  const [quiet, flooding] = keys.splice(KEYS, 2) as [(typeof keys)[0], (typeof keys)[0]];
  const [service, baseline] = await Promise.all([
    load.side(server, {
      prefix: '/v1',
      keys: KEYS,
      keyOf: (n) => auth(keys[n % KEYS]!.secret),
      methodOf: () => method,
      pool: POOL,
    }),
    load.side(baselineServer, { prefix: '', keys: 1, keyOf: () => ({}), methodOf: () => 'pm_baseline', pool: POOL }),
  ]);
  const results: Result[] = [];
  for (const op of SELECTED) results.push(await measure(op, service, baseline));
  const history = HISTORY > 0 ? await refundRows(service) : [];
  const perKey: [string, string, Summary][] = [];
  if (KEYLOAD_S > 0) {
    log('per-key load...');
    const read = (secret: string) => (n: number) => ({ ...service.request.get(n), headers: auth(secret) });
    const steady = () => load.drive(server, 'quiet', read(quiet.secret), KEYLOAD_S, 2, KEYLOAD_RATE);
    perKey.push(['quiet key alone', 'quiet', load.summarize([await steady()])]);
    for (const [phase, key, request] of [
      [`flood over ${KEYS} keys (none limited)`, 'flood', service.request.get],
      ['one key flooding beyond its limit', 'flooding key', read(flooding.secret)],
    ] as const) {
      const [q, f] = await Promise.all([steady(), load.drive(server, key, request, KEYLOAD_S, CONNECTIONS)]);
      perKey.push([phase, 'quiet', load.summarize([q])], ['', key, load.summarize([f])]);
    }
  }
  const markdown = render(results, history, perKey, (Date.now() - began) / 60_000);
  writeFileSync(RESULTS_FILE, markdown);
  console.log(markdown.slice(markdown.indexOf('## Results'), markdown.indexOf('## Notes')));
}

/**
 * Per shard count: a fresh deployment with that many shards, SCALE_OWNERS merchants placed by the directory, and the
 * same load of creates spread over them, every database one call at a time; perfect scaling is N times one shard's.
 * Each database's writer (`/__bench/d1-writers`) is read before and after the rounds, so its figures are theirs.
 */
async function scale() {
  const began = Date.now();
  const rows: string[] = [];
  let one = NaN;
  for (const shards of SCALE) {
    const dir = tempDir('scale');
    log(`${shards} shard(s): a fresh deployment, ${SCALE_OWNERS} merchants...`);
    const { server, token } = await startService(dir, {
      shards,
      vars: ['--var', `BENCH_D1_SERVICE_MS:${SERVICE_MS}`],
    });
    const base = server.baseUrl;
    const owners: { secret: string; method: string; shard: string }[] = [];
    for (let i = 0; i < SCALE_OWNERS; i++) {
      const { id, keys, method } = await newMerchant(base, token, `Shop ${i}`, 1);
      owners.push({ secret: keys[0]!.secret, method, shard: await placement(base, token, id) });
    }
    const owner = (n: number) => owners[n % owners.length]!;
    const keyOf = (n: number) => auth(owner(n).secret);
    const { request } = await load.side(server, {
      prefix: '/v1',
      keys: owners.length,
      keyOf,
      methodOf: (n) => owner(n).method,
      pool: 0,
    });
    const create = request.create;
    await load.drive(server, 'scale', create, WARMUP_S, CONNECTIONS);
    type Writers = Record<string, { calls: number; busyMs: number }>;
    const writers = async () =>
      (await send(base, { method: 'GET', path: '/__bench/d1-writers', headers: {} })).body as Writers;
    const before = await writers();
    const rounds: load.Round[] = [];
    for (let round = 0; round < ROUNDS; round++)
      rounds.push(await load.drive(server, 'scale', create, DURATION_S, CONNECTIONS));
    const after = await writers();
    const s = load.summarize(rounds);
    const busy = Object.keys(after).map((db) => {
      const [calls, busyMs] = [
        after[db]!.calls - (before[db]?.calls ?? 0),
        after[db]!.busyMs - (before[db]?.busyMs ?? 0),
      ];
      return { db, perCreate: calls / s.requests, busy: busyMs / (1000 * rounds.reduce((t, r) => t + r.seconds, 0)) };
    });
    if (shards === 1) one = s.rps;
    const speedup = s.rps / one;
    const placed = [...new Set(owners.map((o) => o.shard))]
      .sort()
      .map((shard) => `${shard}: ${owners.filter((o) => o.shard === shard).length}`);
    rows.push(
      `| ${shards} | ${placed.join(', ')} | ${fmt(s.rps)} | ${fmt(speedup, 2)} | **${fmt(speedup / shards, 2)}** | ${fmt(s.p50)} | ${fmt(s.p99)} | ${s.non2xx} | ${busy.map((w) => `${w.db} ${fmt(w.perCreate, 2)} calls/create, ${fmt(100 * w.busy, 0)}% busy`).join('; ')} | ${fmt(100 * s.cpuShare, 0)}% |`,
    );
    log(`  ${fmt(s.rps)} creates/s (${s.statuses})`);
    await stopAll();
  }
  const text = [
    '<!-- scale:start -->',
    `## Scale: creates per second with ${SCALE.join(', ')} shards (single-writer model)`,
    '',
    `\`npm run bench -- --scale ${SCALE.join(',')}\` on ${new Date().toISOString()} (${load.machine()}; ${fmt((Date.now() - began) / 60_000)} min). Each shard count on a fresh deployment, ${SCALE_OWNERS} merchants placed by the directory (fewest owners first), creates spread evenly over them: ${CONNECTIONS} connections, ${ROUNDS} rounds × ${DURATION_S} s after a ${WARMUP_S} s warm-up. Every D1 database runs one call at a time, ${SERVICE_MS} ms each (bench/d1.ts), so the databases, not this machine's CPU, are the bottleneck while workerd's CPU share stays well under 100%.`,
    '',
    '| shards | merchants per shard | creates/s | × one shard | ratio to perfect (N ×) | p50 ms | p99 ms | non-2xx | each database | workerd CPU |',
    '| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |',
    ...rows,
    '<!-- scale:end -->',
  ].join('\n');
  keepSection('scale', text);
}

/** RESULTS.md with section `name` (scale, history) replaced by `text`, or added before the Notes. */
function keepSection(name: string, text: string) {
  const next = section(name)
    ? previous.replace(sectionPattern(name), text)
    : previous.replace(/^## Notes/m, `${text}\n\n## Notes`);
  writeFileSync(RESULTS_FILE, next);
}

await runGuarded(async () => {
  if (process.argv.includes('history')) keepSection('history', await historyRun(tempDir('history')));
  else await (SCALE.length > 0 ? scale() : main());
  log(`wrote ${RESULTS_FILE}`);
});
