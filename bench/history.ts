// `npm run bench -- history`: what a merchant's history costs a request. Merchants A and B on one shard, a sandbox QR
// method each. A's history is written straight into the shard's SQLite file, the server stopped meanwhile: 1,000
// payments, then 1,000,000, each with an event (and a refund if refunded), and A's counters recounted from its rows.
// At each size, one request at a time: latency p50 / p95, workerd's CPU and D1's rows read (`X-D1-Stats`) of A's lists,
// reports, get, refund and create, and B's create alone and while 8 connections poll A's payments list.
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { BUCKET_SPANS, DAY_MS } from '../src/domain/buckets.ts';
import { eventTypeFor, type PaymentStatus } from '../src/domain/payment-state.ts';
import { auth, newMerchant, placement, type RequestSpec, send } from './api.ts';
import * as load from './load.ts';
import { fmt } from './load.ts';
import { startService, stop } from './servers.ts';

const [SAMPLES, POLL_S, KEYS, RUN_ID] = [40, 10, 16, randomBytes(4).toString('hex')];
/** A's statuses by the fill's row number `i` (70% approved, as the issue's), as SQL: each up to its share of 100. */
const MIX: [PaymentStatus, number][] = Object.entries({
  ...{ approved: 70, expired: 80, refunded: 86, partially_refunded: 92, canceled: 97, declined: 100 },
}) as never;
const byStatus = (then: (status: PaymentStatus) => string) =>
  `CASE ${MIX.map(([status, upTo]) => `WHEN i % 100 < ${upTo} THEN ${then(status)}`).join(' ')} END`;

/** The shard's SQLite file (wrangler's local state) that holds `ownerId`'s payments. */
function shardFile(state: string, ownerId: string): string {
  const dir = join(state, 'v3', 'd1', 'miniflare-D1DatabaseObject');
  for (const name of readdirSync(dir).filter((n) => n.endsWith('.sqlite'))) {
    const db = new DatabaseSync(join(dir, name), { readOnly: true });
    const shard = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'payments'").get();
    const found = shard && db.prepare('SELECT 1 FROM payments WHERE owner_id = ? LIMIT 1').get(ownerId);
    db.close();
    if (found) return join(dir, name);
  }
  throw new Error(`no shard under ${dir} holds ${ownerId}'s payments`);
}

/**
 * A's payments up to `size`, over the last 365 days, in one transaction: copies of A's oldest, each with its own id
 * (newId's shape, counting up), reference, status, times and running totals, its event (and refund) likewise; then
 * A's counters recounted from its rows as migration 0005 counts existing rows. Returns a payment 90% deep, and more.
 */
function fill(file: string, ownerId: string, size: number) {
  // The stopped server's workerd may hold the file a moment longer.
  const db = new DatabaseSync(file, { timeout: 30_000 });
  // A rollback journal while filling (the server's WAL would take the whole fill once more), the server's mode after.
  const { journal_mode: mode } = db.prepare('PRAGMA journal_mode').get()!;
  db.exec('PRAGMA cache_size = -400000; PRAGMA journal_mode = DELETE');
  const [scope, owned] = ['owner_id = ? AND environment = ?', [ownerId, 'test']];
  const tpl = db.prepare(`SELECT * FROM payments WHERE ${scope} ORDER BY created_at LIMIT 1`).get(...owned)!;
  const have = Number(db.prepare(`SELECT count(*) AS n FROM payments WHERE ${scope}`).get(...owned)!.n);
  const tail = randomBytes(6).toString('hex');
  const id = (prefix: string) => `'${prefix}_' || printf('%08d', i) || '${tail}'`;
  const [end, year] = [Date.now() - 60_000, 365 * DAY_MS];
  const at = `${end - year} + (i - ${have}) * ${year} / ${size - have}`;
  const refunded = byStatus((s) =>
    s === 'refunded' ? 't.amount_minor' : s === 'partially_refunded' ? 't.amount_minor / 2' : '0',
  );
  /** Rows of `table` copied from its row `t` (the template's) but for `changes`, one per `i` from `have` to `size`. */
  const copy = (table: string, where: string, changes: Record<string, string>) => {
    const columns = db
      .prepare(`SELECT name FROM pragma_table_info('${table}')`)
      .all()
      .map((c) => c.name as string);
    const values = columns.map((c) => changes[c] ?? `t.${c}`);
    const rows = `WITH RECURSIVE n(i) AS (SELECT ${have} UNION ALL SELECT i + 1 FROM n WHERE i < ${size - 1})`;
    db.prepare(`INSERT INTO ${table} (${columns}) ${rows} SELECT ${values} FROM n, ${where}`).run(tpl.id as string);
  };
  db.exec('BEGIN');
  copy('payments', 'payments t WHERE t.id = ?', {
    ...{ id: id('pay'), status: byStatus((s) => `'${s}'`), processor_status: byStatus((s) => `'${s}'`) },
    ...{ created_at: at, updated_at: `${at} + 1000`, expires_at: `t.expires_at - t.created_at + ${at}`, version: '2' },
    ...{
      external_reference: "'history-' || i",
      processor_idempotency_key: id('pay'),
      processor_reference: `'sbx_' || ${id('pay')}`,
    },
    ...{ amount_refunded: refunded, refund_count: `${refunded} > 0`, attempt_key: 'NULL', attempt_fingerprint: 'NULL' },
  });
  copy('payment_events', 'payment_events t WHERE t.id = (SELECT id FROM payment_events WHERE payment_id = ? LIMIT 1)', {
    ...{ id: id('evt'), payment_id: id('pay'), type: byStatus((s) => `'${eventTypeFor(s)}'`) },
    created_at: `${at} + 1000`,
    payload: `replace(replace(t.payload, t.id, ${id('evt')}), t.payment_id, ${id('pay')})`,
  });
  db.exec(`INSERT INTO refunds (id, payment_id, owner_id, amount_minor, currency, status, processor_reference, processor_idempotency_key, processor_attempts, created_at, updated_at)
    SELECT 'ref' || substr(id, 4), id, owner_id, amount_refunded, currency, 'approved', 'sbx_ref' || substr(id, 4), 'ref' || substr(id, 4), 1, updated_at, updated_at
    FROM payments WHERE id LIKE 'pay_%${tail}' AND amount_refunded > 0`);
  // The quarter hours' counters from the rows, the larger spans' from those.
  for (const [table, rows, keys, sums] of [
    ['payment_counters', 'payments', 'status, payment_method_id, currency', 'count(*), sum(amount_minor)'],
    ['event_counters', 'payment_events', 'type', 'count(*)'],
  ] as const) {
    db.prepare(`DELETE FROM ${table} WHERE ${scope}`).run(...owned);
    const group = `GROUP BY ${keys.split(',').map((_, k) => k + 5)}, 4`;
    for (const { span, size: ms } of [...BUCKET_SPANS].reverse().concat({ span: 'all', size: 0 } as never)) {
      const [bucket, source] = span === 'quarter' ? ['created_at', rows] : ['bucket', table];
      const select = `SELECT owner_id, environment, '${span}', ${ms ? `(${bucket} / ${ms}) * ${ms}` : 0}, ${keys}`;
      const counted = span === 'quarter' ? sums : sums.replace('count(*)', 'sum(count)');
      const from = `${source} WHERE ${scope}${span === 'quarter' ? '' : " AND span = 'quarter'"}`;
      db.prepare(`INSERT INTO ${table} ${select}, ${counted} FROM ${from} ${group}`).run(...owned);
    }
  }
  db.exec(`COMMIT; PRAGMA journal_mode = ${mode}`);
  const newest = (status: string, skip: number, limit: number) =>
    db
      .prepare(
        `SELECT id FROM payments WHERE ${scope} AND status LIKE ? ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`,
      )
      .all(...owned, status, limit, skip)
      .map((row) => row.id as string);
  const picked = { deep: newest('%', size * 0.9, 1)[0]!, approved: newest('approved', 100, SAMPLES + 3) };
  db.close();
  return picked;
}

type Stage = { size: number; rows: Map<string, load.Measure>; poll: load.Summary };

/** The run; returns its section of bench/RESULTS.md. */
export async function historyRun(dir: string): Promise<string> {
  const began = Date.now();
  let { server, token, state, restart } = await startService(dir, { shards: 1 });
  const a = await newMerchant(server.baseUrl, token, 'A', KEYS, 'cnv_sandbox_qr_v1');
  const b = await newMerchant(server.baseUrl, token, 'B', 1, 'cnv_sandbox_qr_v1');
  const placed = [await placement(server.baseUrl, token, a.id), await placement(server.baseUrl, token, b.id)];
  const key = (m: typeof a, n: number) => auth(m.keys[n % m.keys.length]!.secret);
  const create = (m: typeof a, name: string) =>
    load.creates({ prefix: '/v1', keyOf: (n) => key(m, n), methodOf: () => m.method }, name);
  const get = (path: string) => (n: number) => ({ method: 'GET' as const, path, headers: key(a, n) });
  await send(server.baseUrl, create(a, 'first')(0));
  const stages: Stage[] = [];
  for (const size of [1_000, 1_000_000]) {
    await stop(server.child);
    const filling = Date.now();
    const picked = fill(shardFile(state, a.id), a.id, size);
    console.log(`[bench] A filled to ${size} payments in ${fmt((Date.now() - filling) / 1000)} s; measuring...`);
    server = await restart();
    const now = Date.now();
    const iso = (days: number) => new Date(now - days * DAY_MS).toISOString();
    const requests: [string, (n: number) => RequestSpec][] = [
      ['payments list, first page', get('/v1/payments')],
      ['payments list, `status=approved`', get('/v1/payments?status=approved')],
      ['payments list, `starting_after` 90% deep', get(`/v1/payments?starting_after=${picked.deep}`)],
      ['payments list, `offset=10000`', get('/v1/payments?offset=10000')],
      ['events list, first page', get('/v1/events')],
      ['report, 30 days', get('/v1/reports/payments')],
      ['report, 366 days', get(`/v1/reports/payments?created_gte=${iso(366)}&created_lt=${iso(0)}`)],
      ['get payment', get(`/v1/payments/${picked.approved[0]}`)],
      ['refund 0.01', (n) => load.refund(`/v1/payments/${picked.approved[n]}`, `r-${RUN_ID}-${size}-${n}`, key(a, n))],
      ['A creates', create(a, `a-${size}`)],
      ['B creates', create(b, `b-${size}`)],
    ];
    const rows = new Map<string, load.Measure>();
    for (const [label, request] of requests) rows.set(label, await load.oneAtATime(server, request, SAMPLES));
    let done = false;
    const [round, polled] = await Promise.all([
      load.drive(server, `poll-${size}`, get('/v1/payments'), POLL_S, 8).finally(() => (done = true)),
      load.oneAtATime(server, create(b, `polled-${size}`), SAMPLES, () => done),
    ]);
    stages.push({
      size,
      rows: rows.set("B creates while 8 connections poll A's payments list", polled),
      poll: load.summarize([round]),
    });
  }
  await stop(server.child);
  const [small, large] = stages as [Stage, Stage];
  const ratio = (x: number, y: number) => (Number.isFinite(y / x) ? `${fmt(y / x, 2)}×` : 'n/a');
  const cells = (m: load.Measure) => `${fmt(m.p50)} | ${fmt(m.p95)} | ${fmt(m.cpu, 2)} | ${m.d1?.rowsRead}`;
  const total = (stage: Stage) => stage.rows.get('payments list, first page')!.total;
  return [
    '<!-- history:start -->',
    "## History: a merchant's first 1,000 payments against its millionth",
    '',
    `\`npm run bench -- history\` (bench/history.ts), ${new Date().toISOString()}, ${fmt((Date.now() - began) / 60_000)} min: ${load.machine()}. Merchants A and B on ${placed.join(' and ')}, a sandbox QR method each. A's history written into the shard's SQLite file (70% approved, one event each, a refund per refunded payment, the counters recounted), its payments list answering \`total\` ${total(small)} and ${total(large)}. Per request ${SAMPLES} one at a time after 3: p50 / p95 ms at the client, workerd's CPU ms per request, D1 rows read (the middle one, the whole request's). Goal: rows read independent of the history, p50 at 1M within 1.2× of 1k.`,
    '',
    `| request | p50 at ${small.size} | p95 | CPU | rows read | p50 at ${large.size} | p95 | CPU | rows read | p50 ratio | CPU ratio | rows read ratio |`,
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...[...small.rows].map(([label, x]) => {
      const y = large.rows.get(label)!;
      return `| ${label} | ${cells(x)} | ${cells(y)} | **${ratio(x.p50, y.p50)}** | ${ratio(x.cpu, y.cpu)} | ${ratio(x.d1?.rowsRead ?? NaN, y.d1?.rowsRead ?? NaN)} |`;
    }),
    '',
    `The poller read ${fmt(small.poll.rps)} and ${fmt(large.poll.rps)} lists/s (p50 ${fmt(small.poll.p50)} and ${fmt(large.poll.p50)} ms; workerd CPU ${fmt(small.poll.cpuMsPerRequest, 2)} and ${fmt(large.poll.cpuMsPerRequest, 2)} ms per list, B's creates beside them included).`,
    '<!-- history:end -->',
  ].join('\n');
}
