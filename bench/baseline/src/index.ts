// The bench's baseline Worker (bench/run.ts): per operation, only the work no payment API on this
// platform can skip, so the service's numbers can be read as a ratio to it.
//   POST /payments                 one Durable Object call (the idempotency record) + one D1 batch write
//   GET  /payments/:id             one indexed D1 read
//   POST /payments (same key)      one Durable Object call answering the stored body (a replay)
//   POST /payments/:id/refunds     one Durable Object call + one D1 batch write
// With `X-Bench-Round-Trips: service`, every operation takes the service's shape instead: its serial D1 round
// trips, each as small as it can be, queried as the service queries them (read replication): the get through a
// D1 session, and in the Durable Object every round trip through the binding (at the primary) but the last
// write, through a session at the primary, whose bookmark is the answer's `X-Read-Bookmark`. Create writes the
// payment `pending` before the processor and approves it after (2); the get reads it (1); refund reads the
// payment, reserves the refund, then settles it (3). Nothing else changes, so the ratio of this shape to the
// plain one is the most a service making those round trips that way can reach.
// No authentication, validation or processor. `BENCH_D1_DELAY_MS` adds the latency model's delay to every
// D1 round trip, as on the service. Every response carries `X-D1-Stats`, measured with the
// bench's meter (bench/d1-meter.ts), as the service is under the bench, so both sides pay the same for it.
import { DurableObject } from 'cloudflare:workers';
import { D1_STATS_HEADER, emptyD1Stats, formatD1Stats, meteredD1, type D1Stats } from '../../d1-meter.ts';

interface Env {
  DB: D1Database;
  STORE: DurableObjectNamespace<BaselineStore>;
  /** The bench's latency model: every D1 round trip waits this long first (as the service's does). */
  BENCH_D1_DELAY_MS?: string;
}

const meterOptions = (env: Env) => ({ delayMs: Number(env.BENCH_D1_DELAY_MS ?? 0) || 0 });

/** `one`: a single D1 batch; `service`: the service's serial round trips (the header above). */
type Shape = 'one' | 'service';

type Command =
  | { operation: 'create_payment'; body: string; shape: Shape }
  | { operation: 'create_refund'; paymentId: string; body: string; shape: Shape };

interface Answer {
  status: number;
  body: string;
  replayed: boolean;
  stats: D1Stats;
  /** The session's bookmark after the writes, in the service's shape. */
  bookmark?: string;
}

interface PaymentInput {
  amount?: { value?: string; currency?: string };
  external_reference?: string;
  payment_method?: string;
}

const toMinor = (value: string | undefined) => Math.round(Number(value ?? '0') * 100);
const toValue = (minor: number) => (minor / 100).toFixed(2);
const iso = (ms: number) => new Date(ms).toISOString();
const READ_BOOKMARK_HEADER = 'X-Read-Bookmark';

/**
 * The database as a shape queries it: `db` for every round trip but the one whose answer carries the bookmark,
 * `bookmarked` for that one (the get's read, an operation's last write). `one`: the binding for both. `service`:
 * the binding, and a session at the primary for the bookmarked round trip (deps.ts, the idempotency object).
 */
function databaseFor(env: Env, shape: Shape, stats: D1Stats) {
  const session = shape === 'service' ? env.DB.withSession('first-primary') : null;
  // The meter wraps what answers `prepare` and `batch`, which a session does as the database does.
  const db = meteredD1(env.DB, stats, meterOptions(env));
  const handle = session ?? env.DB;
  const bookmarked = session ? meteredD1(handle as D1Database, stats, meterOptions(env)) : db;
  return { db, bookmarked, session };
}

/** One per idempotency key, like the service's IdempotencyStore: the first call writes, later ones replay. */
export class BaselineStore extends DurableObject<Env> {
  async run(command: Command): Promise<Answer> {
    const stored = await this.ctx.storage.get<{ status: number; body: string; bookmark?: string }>('response');
    if (stored) return { ...stored, replayed: true, stats: emptyD1Stats() };
    const stats = emptyD1Stats();
    const { db, bookmarked, session } = databaseFor(this.env, command.shape, stats);
    const response =
      command.operation === 'create_payment'
        ? await createPayment(db, bookmarked, command.body, command.shape)
        : await createRefund(db, bookmarked, command.paymentId, command.body, command.shape);
    const bookmark = session?.getBookmark();
    const kept = bookmark ? { ...response, bookmark } : response;
    await this.ctx.storage.put('response', kept);
    return { ...kept, replayed: false, stats };
  }
}

async function createPayment(db: D1Database, bookmarked: D1Database, text: string, shape: Shape) {
  const input = JSON.parse(text) as PaymentInput;
  const now = Date.now();
  const id = `pay_${crypto.randomUUID().replaceAll('-', '')}`;
  const minor = toMinor(input.amount?.value);
  const currency = input.amount?.currency ?? 'USD';
  const data = {
    id,
    status: 'approved',
    amount: { value: toValue(minor), currency },
    external_reference: input.external_reference ?? id,
    payment_method: input.payment_method ?? 'pm',
    processor_reference: `sbx_pay_${id.slice(4, 28)}`,
    action: { type: 'none' },
    description: null,
    metadata: null,
    webhook_url: null,
    created_at: iso(now),
    updated_at: iso(now),
  };
  const eventId = `evt_${crypto.randomUUID().replaceAll('-', '')}`;
  const insertPayment = (status: string, version: number) =>
    db
      .prepare(
        `INSERT INTO payments (id, owner_id, environment, payment_method_id, api_key_id, reference_scope, external_reference, amount_minor, currency,
          status, version, processor_reference, processor_idempotency_key, processor_attempts, processor_status, description, created_at, updated_at)
         VALUES (?, 'usr_baseline', 'test', ?, 'key_baseline', 'key_baseline', ?, ?, ?, ?, ?, ?, ?, 1, 'sandbox_approved', NULL, ?, ?)`,
      )
      .bind(
        id,
        data.payment_method,
        data.external_reference,
        minor,
        currency,
        status,
        version,
        data.processor_reference,
        id,
        now,
        now,
      );
  const insertEventOn = (on: D1Database) =>
    on
      .prepare('INSERT INTO payment_events (id, payment_id, type, payload, created_at) VALUES (?, ?, ?, ?, ?)')
      .bind(
        eventId,
        id,
        'payment.approved',
        JSON.stringify({ id: eventId, type: 'payment.approved', data: { payment: data } }),
        now,
      );
  if (shape === 'one') {
    await db.batch([insertPayment('approved', 2), insertEventOn(db)]);
  } else {
    // Recorded before the processor is asked, approved after.
    await insertPayment('pending', 1).run();
    await bookmarked.batch([
      bookmarked
        .prepare("UPDATE payments SET status = 'approved', version = 2, updated_at = ? WHERE id = ?")
        .bind(now, id),
      insertEventOn(bookmarked),
    ]);
  }
  return { status: 201, body: JSON.stringify({ data }) };
}

async function createRefund(db: D1Database, bookmarked: D1Database, paymentId: string, text: string, shape: Shape) {
  const input = JSON.parse(text) as PaymentInput;
  const now = Date.now();
  const id = `ref_${crypto.randomUUID().replaceAll('-', '')}`;
  const minor = toMinor(input.amount?.value);
  const currency = input.amount?.currency ?? 'USD';
  const insertRefund = (status: string) =>
    db
      .prepare(
        'INSERT INTO refunds (id, payment_id, amount_minor, currency, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      )
      .bind(id, paymentId, minor, currency, status, now, now);
  const refundedOn = (on: D1Database) =>
    on
      .prepare("UPDATE payments SET version = version + 1, status = 'partially_refunded', updated_at = ? WHERE id = ?")
      .bind(now, paymentId);
  if (shape === 'one') {
    await db.batch([insertRefund('approved'), refundedOn(db)]);
  } else {
    // The payment read to decide, the refund reserved before the processor is asked, then settled.
    await db.prepare('SELECT * FROM payments WHERE id = ?').bind(paymentId).first();
    await db.batch([
      insertRefund('created'),
      db.prepare('UPDATE payments SET version = version + 1 WHERE id = ?').bind(paymentId),
    ]);
    await bookmarked.batch([
      bookmarked.prepare("UPDATE refunds SET status = 'approved', updated_at = ? WHERE id = ?").bind(now, id),
      refundedOn(bookmarked),
    ]);
  }
  const data = {
    id,
    payment_id: paymentId,
    status: 'approved',
    amount: { value: toValue(minor), currency },
    reason: null,
    processor_reference: `sbx_ref_${id.slice(4, 28)}`,
    created_at: iso(now),
    updated_at: iso(now),
  };
  return { status: 201, body: JSON.stringify({ data }) };
}

const shapeOf = (request: Request): Shape =>
  request.headers.get('x-bench-round-trips') === 'service' ? 'service' : 'one';

const json = (status: number, body: string, headers: Record<string, string> = {}) =>
  new Response(body, { status, headers: { 'Content-Type': 'application/json', ...headers } });

async function idempotent(
  env: Env,
  request: Request,
  name: string,
  command: (body: string, shape: Shape) => Command,
): Promise<Response> {
  const key = request.headers.get('idempotency-key');
  if (!key) return json(400, '{"error":"idempotency_key_required"}');
  const shape = shapeOf(request);
  const stub = env.STORE.get(env.STORE.idFromName(`${name}${shape}:${key}`));
  const answer = await stub.run(command(await request.text(), shape));
  return json(answer.status, answer.body, {
    [D1_STATS_HEADER]: formatD1Stats(answer.stats),
    ...(answer.replayed ? { 'Idempotent-Replayed': 'true' } : {}),
    ...(answer.bookmark ? { [READ_BOOKMARK_HEADER]: answer.bookmark } : {}),
  });
}

export default {
  async fetch(request, env): Promise<Response> {
    const { pathname } = new URL(request.url);
    const parts = pathname.split('/').filter(Boolean);
    if (request.method === 'POST' && pathname === '/payments') {
      return idempotent(env, request, 'create_payment:', (body, shape) => ({
        operation: 'create_payment',
        body,
        shape,
      }));
    }
    if (request.method === 'GET' && parts.length === 2 && parts[0] === 'payments') {
      const stats = emptyD1Stats();
      const { bookmarked, session } = databaseFor(env, shapeOf(request), stats);
      const row = await bookmarked
        .prepare('SELECT * FROM payments WHERE id = ?')
        .bind(parts[1])
        .first<Record<string, unknown>>();
      const bookmark = session?.getBookmark();
      const read: Record<string, string> = bookmark ? { [READ_BOOKMARK_HEADER]: bookmark } : {};
      if (!row) return json(404, '{"error":"payment_not_found"}', { [D1_STATS_HEADER]: formatD1Stats(stats), ...read });
      const data = {
        id: row.id,
        status: row.status,
        amount: { value: toValue(Number(row.amount_minor)), currency: row.currency },
        external_reference: row.external_reference,
        payment_method: row.payment_method_id,
        processor_reference: row.processor_reference,
        description: row.description,
        metadata: null,
        webhook_url: null,
        created_at: iso(Number(row.created_at)),
        updated_at: iso(Number(row.updated_at)),
      };
      return json(200, JSON.stringify({ data }), { [D1_STATS_HEADER]: formatD1Stats(stats), ...read });
    }
    if (request.method === 'POST' && parts.length === 3 && parts[0] === 'payments' && parts[2] === 'refunds') {
      const paymentId = parts[1]!;
      return idempotent(env, request, 'create_refund:', (body, shape) => ({
        operation: 'create_refund',
        paymentId,
        body,
        shape,
      }));
    }
    return json(404, '{"error":"not_found"}');
  },
} satisfies ExportedHandler<Env>;
