// The bench's baseline Worker (bench/run.ts): per operation only the work no payment API on this platform can skip,
// so the service's numbers read as a ratio to it. Create and refund: one Durable Object call (the idempotency record)
// and one D1 batch; get: one indexed read; replay: one Durable Object call answering the stored body. No
// authentication, validation or processor. Its D1 binding is metered (`X-D1-Stats`) as the service's is.
import { DurableObject } from 'cloudflare:workers';
import { D1_STATS_HEADER, emptyD1Stats, instrumentedD1, type D1Stats } from '../../d1.ts';

type Env = { DB: D1Database; STORE: DurableObjectNamespace<BaselineStore> };

type Command =
  | { operation: 'create_payment'; body: string }
  | { operation: 'create_refund'; paymentId: string; body: string };

type PaymentInput = {
  amount?: { value?: string; currency?: string };
  external_reference?: string;
  payment_method?: string;
};

const toMinor = (value: string | undefined) => Math.round(Number(value ?? '0') * 100);
const newId = (prefix: string) => `${prefix}_${crypto.randomUUID().replaceAll('-', '')}`;

/** One per idempotency key, like the service's IdempotencyStore: the first call writes, later ones replay. */
export class BaselineStore extends DurableObject<Env> {
  async run(command: Command): Promise<{ status: number; body: string; replayed: boolean; stats: D1Stats }> {
    const stored = await this.ctx.storage.get<{ status: number; body: string }>('response');
    if (stored) return { ...stored, replayed: true, stats: emptyD1Stats() };
    const stats = emptyD1Stats();
    const db = instrumentedD1(this.env.DB, { stats });
    const response =
      command.operation === 'create_payment'
        ? await createPayment(db, command.body)
        : await createRefund(db, command.paymentId, command.body);
    await this.ctx.storage.put('response', response);
    return { ...response, replayed: false, stats };
  }
}

/** The resource the baseline answers, about as large as the service's. */
const resource = (
  id: string,
  status: string,
  minor: number,
  currency: string,
  extra: Record<string, unknown>,
  now: number,
) => ({
  id,
  status,
  amount: { value: (minor / 100).toFixed(2), currency },
  processor_reference: `sbx_${id.slice(0, 28)}`,
  ...extra,
  created_at: new Date(now).toISOString(),
  updated_at: new Date(now).toISOString(),
});

async function createPayment(db: D1Database, text: string) {
  const input = JSON.parse(text) as PaymentInput;
  const [now, id, eventId] = [Date.now(), newId('pay'), newId('evt')];
  const [minor, currency] = [toMinor(input.amount?.value), input.amount?.currency ?? 'USD'];
  const [reference, method] = [input.external_reference ?? id, input.payment_method ?? 'pm'];
  const data = resource(
    id,
    'approved',
    minor,
    currency,
    {
      external_reference: reference,
      payment_method: method,
      action: { type: 'none' },
      description: null,
      metadata: null,
      webhook_url: null,
    },
    now,
  );
  await db.batch([
    db
      .prepare(
        `INSERT INTO payments (id, owner_id, environment, payment_method_id, api_key_id, reference_scope, external_reference, amount_minor, currency,
          status, version, processor_reference, processor_idempotency_key, processor_attempts, processor_status, description, created_at, updated_at)
         VALUES (?, 'usr_baseline', 'test', ?, 'key_baseline', 'key_baseline', ?, ?, ?, 'approved', 2, ?, ?, 1, 'sandbox_approved', NULL, ?, ?)`,
      )
      .bind(id, method, reference, minor, currency, data.processor_reference, id, now, now),
    db
      .prepare('INSERT INTO payment_events (id, payment_id, type, payload, created_at) VALUES (?, ?, ?, ?, ?)')
      .bind(
        eventId,
        id,
        'payment.approved',
        JSON.stringify({ id: eventId, type: 'payment.approved', data: { payment: data } }),
        now,
      ),
  ]);
  return { status: 201, body: JSON.stringify({ data }) };
}

async function createRefund(db: D1Database, paymentId: string, text: string) {
  const input = JSON.parse(text) as PaymentInput;
  const [now, id] = [Date.now(), newId('ref')];
  const [minor, currency] = [toMinor(input.amount?.value), input.amount?.currency ?? 'USD'];
  await db.batch([
    db
      .prepare(
        'INSERT INTO refunds (id, payment_id, amount_minor, currency, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      )
      .bind(id, paymentId, minor, currency, 'approved', now, now),
    db
      .prepare("UPDATE payments SET version = version + 1, status = 'partially_refunded', updated_at = ? WHERE id = ?")
      .bind(now, paymentId),
  ]);
  const data = resource(id, 'approved', minor, currency, { payment_id: paymentId, reason: null }, now);
  return { status: 201, body: JSON.stringify({ data }) };
}

const json = (status: number, body: string, headers: Record<string, string> = {}) =>
  new Response(body, { status, headers: { 'Content-Type': 'application/json', ...headers } });

async function idempotent(env: Env, request: Request, command: (body: string) => Command): Promise<Response> {
  const key = request.headers.get('idempotency-key');
  if (!key) return json(400, '{"error":"idempotency_key_required"}');
  const body = await request.text();
  const stub = env.STORE.get(env.STORE.idFromName(`${command(body).operation}:${key}`));
  const answer = await stub.run(command(body));
  return json(answer.status, answer.body, {
    [D1_STATS_HEADER]: JSON.stringify(answer.stats),
    ...(answer.replayed ? { 'Idempotent-Replayed': 'true' } : {}),
  });
}

async function getPayment(env: Env, id: string): Promise<Response> {
  const stats = emptyD1Stats();
  const row = await instrumentedD1(env.DB, { stats })
    .prepare('SELECT * FROM payments WHERE id = ?')
    .bind(id)
    .first<Record<string, unknown>>();
  const headers = { [D1_STATS_HEADER]: JSON.stringify(stats) };
  if (!row) return json(404, '{"error":"payment_not_found"}', headers);
  const extra = {
    external_reference: row.external_reference,
    payment_method: row.payment_method_id,
    description: row.description,
    metadata: null,
    webhook_url: null,
  };
  const data = resource(
    id,
    String(row.status),
    Number(row.amount_minor),
    String(row.currency),
    extra,
    Number(row.updated_at),
  );
  return json(200, JSON.stringify({ data }), headers);
}

export default {
  async fetch(request, env): Promise<Response> {
    const parts = new URL(request.url).pathname.split('/').filter(Boolean);
    if (parts[0] !== 'payments') return json(404, '{"error":"not_found"}');
    if (request.method === 'POST' && parts.length === 1)
      return idempotent(env, request, (body) => ({ operation: 'create_payment', body }));
    if (request.method === 'GET' && parts.length === 2) return getPayment(env, parts[1]!);
    if (request.method === 'POST' && parts.length === 3 && parts[2] === 'refunds')
      return idempotent(env, request, (body) => ({ operation: 'create_refund', paymentId: parts[1]!, body }));
    return json(404, '{"error":"not_found"}');
  },
} satisfies ExportedHandler<Env>;
