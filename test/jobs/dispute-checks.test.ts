import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { env } from 'cloudflare:workers';
import { DISPUTE_CHECK_MIN_GAP_MS, OPEN_DISPUTE_CHECK_GAP_MS } from '../../src/domain/dispute-checks.ts';
import {
  DISPUTE_CHECKS_PER_OWNER_PER_RUN,
  DISPUTE_CHECKS_PER_RUN,
  runDisputeChecks,
} from '../../src/jobs/dispute-checks.ts';
import { call, createKey, seedSession, type Session } from '../helpers/api.ts';
import { dataPlane, depsOfOwner, onEveryShard, shardOf } from '../helpers/shards.ts';
import { MercadoPagoSimulator, MP_BASE } from '../simulators/mercadopago.ts';
import { STRIPE_ORIGIN, StripeSimulator, stripeId } from '../simulators/stripe.ts';

/**
 * Disputes whose notification was lost (docs/dispute-checks.md): the processor opens or decides a dispute and
 * no notification reaches us; the scheduled re-read of the payment's disputes finds it, through the path of a
 * verified notification (the same events, sent once), and a read that finds nothing new changes nothing.
 */

const stripe = new StripeSimulator();
const mp = new MercadoPagoSimulator();
const mpAccount = mp.addAccount({ currency: 'ARS' });
const TERMINAL = 'NEWLAND_N950__N950NCB801293399';
mp.addTerminal(mpAccount, TERMINAL);

const urlOf = (input: RequestInfo | URL) =>
  typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;

beforeAll(() => {
  vi.spyOn(globalThis, 'fetch').mockImplementation((input, init) => {
    const url = urlOf(input);
    if (url.startsWith(`${STRIPE_ORIGIN}/`)) return stripe.fetch(input, init);
    if (url.startsWith(`${MP_BASE}/`)) return mp.fetch(input, init);
    return Promise.reject(new TypeError(`network access refused in tests: ${url}`));
  });
});
afterAll(() => vi.mocked(globalThis.fetch).mockRestore());

interface Owner {
  session: Session;
  key: { id: string; secret: string };
  stripe: string;
  mp: string;
}

async function owner(): Promise<Owner> {
  const session = await seedSession();
  const key = await createKey(session);
  const method = async (spec: Record<string, unknown>) => {
    const created = await call('POST', '/v1/account/payment-methods', {
      token: session.accessToken,
      body: { name: 'Counter', ...spec },
    });
    expect(created.status, created.text).toBe(201);
    const id = created.body.data.id as string;
    const link = await call('POST', `/v1/account/payment-methods/${id}/api-keys`, {
      token: session.accessToken,
      body: { api_key_id: key.id },
    });
    expect(link.status, link.text).toBe(201);
    return id;
  };
  return {
    session,
    key,
    stripe: await method({
      connector_definition_version_id: 'cnv_stripe_pos_v1',
      credentials: { secret_key: `sk_test_${stripeId('k').slice(2)}`, webhook_secret: stripe.webhookSecret },
      configuration: { reader_id: 'tmr_DisputeCounter01' },
    }),
    mp: await method({
      connector_definition_version_id: 'cnv_mercadopago_pos_v1',
      credentials: { access_token: mpAccount.accessToken, webhook_secret: mpAccount.webhookSecret },
      configuration: { terminal_id: TERMINAL },
    }),
  };
}

let o: Owner;
beforeAll(async () => {
  o = await owner();
});

type Payment = { id: string; processor_reference: string; updated_at: string; [key: string]: unknown };

async function approved(by: Owner, method: string, value = '30.00', currency = 'USD'): Promise<Payment> {
  const res = await call('POST', '/v1/payments', {
    token: by.key.secret,
    body: { amount: { value, currency }, external_reference: `order-${crypto.randomUUID()}`, payment_method: method },
    headers: { 'Idempotency-Key': crypto.randomUUID() },
  });
  expect(res.status, res.text).toBe(201);
  expect(res.body.data.status).toBe('approved');
  return res.body.data;
}

const read = async (id: string, by = o) =>
  (await call('GET', `/v1/payments/${id}`, { token: by.key.secret })).body.data;
const disputesOf = async (id: string, by = o) => {
  const res = await call('GET', `/v1/payments/${id}/disputes`, { token: by.key.secret });
  expect(res.status, res.text).toBe(200);
  return res.body.data as { id: string; status: string; [key: string]: unknown }[];
};
const eventTypes = async (id: string, by = o) =>
  ((await call('GET', `/v1/payments/${id}/events?limit=100`, { token: by.key.secret })).body.data as { type: string }[])
    .map((e) => e.type)
    .reverse();
const checkAt = async (id: string) =>
  (await dataPlane.prepare('SELECT dispute_check_at FROM payments WHERE id = ?').bind(id).first<{
    dispute_check_at: number | null;
  }>())!.dispute_check_at;
const run = (now: number) => onEveryShard((deps) => runDisputeChecks(deps, now));
/** Stripe's dispute reads of these PaymentIntents since `from` (GET /v1/disputes, by payment_intent or by id). */
const stripeReads = (from: number, paymentIntents: string[]) =>
  stripe.requests
    .slice(from)
    .filter(
      (r) =>
        r.method === 'GET' &&
        r.path.startsWith('/v1/disputes') &&
        paymentIntents.includes(String(r.params.payment_intent ?? '')),
    );

describe('dispute re-reads (Stripe)', () => {
  it('a dispute opened at Stripe whose notification was lost is found by the next due read: visible, dispute.created once; a read with nothing new changes nothing', async () => {
    const payment = await approved(o, o.stripe);
    const due = await checkAt(payment.id);
    expect(due).toBeGreaterThanOrEqual(Date.parse(payment.updated_at) + DISPUTE_CHECK_MIN_GAP_MS);

    stripe.openDispute(payment.processor_reference); // its events are never delivered
    const before = stripe.requests.length;
    await run(due! - 1);
    expect(stripeReads(before, [payment.processor_reference])).toHaveLength(0);
    expect(await disputesOf(payment.id)).toEqual([]);

    await run(due!);
    expect(stripeReads(before, [payment.processor_reference])).toHaveLength(1);
    const [dispute] = await disputesOf(payment.id);
    expect(dispute).toMatchObject({ payment_id: payment.id, status: 'needs_response', reason: 'fraudulent' });
    expect(dispute!.funds_withdrawn_at).toEqual(expect.any(String));
    expect(await eventTypes(payment.id)).toEqual(['payment.approved', 'dispute.created']);
    const after = await read(payment.id);
    expect(after).toMatchObject({ status: 'approved', charged_back_at: null });
    // An open dispute is read again within the open-dispute gap.
    const next = await checkAt(payment.id);
    expect(next).toBeGreaterThan(due!);
    expect(next).toBeLessThanOrEqual(due! + OPEN_DISPUTE_CHECK_GAP_MS);

    const quiet = stripe.requests.length;
    await run(next!);
    expect(stripeReads(quiet, [payment.processor_reference])).toHaveLength(1);
    expect(await disputesOf(payment.id)).toEqual([dispute]);
    expect(await read(payment.id)).toEqual(after);
    expect(await eventTypes(payment.id)).toEqual(['payment.approved', 'dispute.created']);
  });

  it('a dispute decided lost while its notification was lost ends lost with charged_back_at, dispute.closed and payment.charged_back once', async () => {
    const payment = await approved(o, o.stripe, '31.00');
    const opened = stripe.openDispute(payment.processor_reference);
    const due = await checkAt(payment.id);
    await run(due!);
    const [dispute] = await disputesOf(payment.id);
    expect(dispute!.status).toBe('needs_response');

    stripe.closeDispute(opened.id, 'lost'); // `charge.dispute.closed` is lost too
    const next = await checkAt(payment.id);
    await run(next!);
    expect((await disputesOf(payment.id))[0]).toMatchObject({ id: dispute!.id, status: 'lost' });
    const charged = await read(payment.id);
    expect(charged.status).toBe('approved');
    expect(charged.charged_back_at).toEqual(expect.any(String));
    const told = await eventTypes(payment.id);
    // One change's events share its moment (their order within it is the list's tie-break, not asserted).
    expect([...told].sort()).toEqual(['dispute.closed', 'dispute.created', 'payment.approved', 'payment.charged_back']);

    // Closed: back on the window's schedule, and a read that finds the same changes nothing.
    const later = await checkAt(payment.id);
    expect(later).toBeGreaterThan(next!);
    await run(later!);
    expect(await read(payment.id)).toEqual(charged);
    expect(await eventTypes(payment.id)).toEqual(told);
  });

  it(`at most ${DISPUTE_CHECKS_PER_OWNER_PER_RUN} payments of one owner per run (${DISPUTE_CHECKS_PER_RUN} per shard): the rest wait, their slots kept`, async () => {
    const busy = await owner();
    const made: Payment[] = [];
    for (let i = 0; i < DISPUTE_CHECKS_PER_OWNER_PER_RUN + 2; i++)
      made.push(await approved(busy, busy.stripe, `4${i}.00`));
    const references = made.map((p) => p.processor_reference);
    const due = Math.max(...(await Promise.all(made.map((p) => checkAt(p.id)))).map(Number));
    const before = stripe.requests.length;
    const runs = await run(due);
    expect(stripeReads(before, references)).toHaveLength(DISPUTE_CHECKS_PER_OWNER_PER_RUN);
    for (const shard of runs) expect(shard.read).toBeLessThanOrEqual(DISPUTE_CHECKS_PER_RUN);
    const waiting = (await Promise.all(made.map((p) => checkAt(p.id)))).filter((at) => at! <= due);
    expect(waiting).toHaveLength(2);

    const second = stripe.requests.length;
    await run(due);
    expect(stripeReads(second, references)).toHaveLength(2);
    // Nothing was disputed: nothing recorded, nothing told.
    for (const p of made) expect(await eventTypes(p.id, busy)).toEqual(['payment.approved']);
  });

  it('past the window, an open dispute is read by id until it closes; a payment without one is not read again', async () => {
    const payment = await approved(o, o.stripe, '32.00');
    const opened = stripe.openDispute(payment.processor_reference);
    await run((await checkAt(payment.id))!);
    expect((await disputesOf(payment.id))[0]!.status).toBe('needs_response');
    const quiet = await approved(o, o.stripe, '33.00');

    const pastWindow = Date.now() + 121 * 86_400_000;
    stripe.closeDispute(opened.id, 'won');
    const before = stripe.requests.length;
    await run(pastWindow);
    const made = stripe.requests.slice(before);
    expect(made.filter((r) => r.path === `/v1/disputes/${opened.id}`)).toHaveLength(1);
    expect(stripeReads(before, [payment.processor_reference, quiet.processor_reference])).toHaveLength(0);
    expect((await disputesOf(payment.id))[0]).toMatchObject({ status: 'won' });
    expect(await checkAt(payment.id)).toBeNull();
    expect(await checkAt(quiet.id)).toBeNull();
  });
});

describe('dispute re-reads (Mercado Pago)', () => {
  it('a chargeback Mercado Pago opened and decided while its notifications were lost is found: lost, charged_back_at', async () => {
    const payment = await approved(o, o.mp, '500.00', 'ARS');
    mp.chargeBack(payment.processor_reference); // its order notification is never sent
    const due = await checkAt(payment.id);
    await run(due!);
    const [dispute] = await disputesOf(payment.id);
    expect(dispute).toMatchObject({ status: 'needs_response', amount: { value: '500.00', currency: 'ARS' } });

    mp.decideChargeback(payment.processor_reference, 'lost');
    await run((await checkAt(payment.id))!);
    expect((await disputesOf(payment.id))[0]).toMatchObject({ id: dispute!.id, status: 'lost' });
    expect((await read(payment.id)).charged_back_at).toEqual(expect.any(String));
    const told = await eventTypes(payment.id);
    expect(told.filter((t) => t.startsWith('dispute.'))).toEqual(['dispute.created', 'dispute.closed']);
    expect(told.filter((t) => t === 'payment.charged_back')).toHaveLength(1);
  });
});

describe('dispute re-reads: fairness and broken rows', () => {
  const setMethodSecrets = (methodId: string, ciphertext: string | null) =>
    env.DB.prepare('UPDATE payment_methods SET secrets_ciphertext = ? WHERE id = ?').bind(ciphertext, methodId).run();

  it('an owner with more due reads than a run looks at does not keep another owner waiting', async () => {
    const light = await owner();
    // The job's limits are per shard: the heavy owner must share the light one's.
    let heavy = await owner();
    for (let tries = 0; (await shardOf(heavy.session.user.id)) !== (await shardOf(light.session.user.id)); tries++) {
      expect(tries).toBeLessThan(20);
      heavy = await owner();
    }
    const mine = await approved(light, light.stripe, '50.00');
    const due = (await checkAt(mine.id))!;
    // The heavy owner's backlog: more due rows than the old JS cap ever looked at, all older than the light one's.
    const template = (await dataPlane
      .prepare('SELECT * FROM payments WHERE id = ?')
      .bind((await approved(heavy, heavy.stripe, '51.00')).id)
      .first<Record<string, unknown>>())!;
    const columns = Object.keys(template);
    const shard = (await depsOfOwner(heavy.session.user.id)).d1;
    for (let n = 0; n < DISPUTE_CHECKS_PER_RUN * 4 + 5; n++) {
      const row: Record<string, unknown> = {
        ...template,
        id: `pay_backlog${n}_${crypto.randomUUID().slice(0, 8)}`,
        external_reference: `backlog-${crypto.randomUUID()}`,
        dispute_check_at: due - 1_000 - n,
      };
      await shard
        .prepare(
          `INSERT INTO payments (${columns.map((c) => `"${c}"`).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
        )
        .bind(...columns.map((c) => row[c]))
        .run();
    }
    stripe.openDispute(mine.processor_reference); // its events are never delivered
    await run(due);
    expect((await disputesOf(mine.id, light)).map((d) => d.status)).toEqual(['needs_response']);
    expect(await checkAt(mine.id)).toBeGreaterThan(due);
  });

  it('a payment whose method cannot be opened spends its slot (put off, not first in line forever)', async () => {
    const broken = await owner();
    const payment = await approved(broken, broken.stripe, '52.00');
    const due = (await checkAt(payment.id))!;
    await setMethodSecrets(broken.stripe, 'not-a-ciphertext');
    await run(due);
    expect(await checkAt(payment.id)).toBe(due + DISPUTE_CHECK_MIN_GAP_MS);
  });

  it('a method whose credentials are removed is not read, and its payments stay scheduled (an open dispute too)', async () => {
    const paused = await owner();
    const payment = await approved(paused, paused.stripe, '53.00');
    const due = (await checkAt(payment.id))!;
    const stored = (await env.DB.prepare('SELECT secrets_ciphertext FROM payment_methods WHERE id = ?')
      .bind(paused.stripe)
      .first<{ secrets_ciphertext: string }>())!.secrets_ciphertext;
    await setMethodSecrets(paused.stripe, null);
    stripe.openDispute(payment.processor_reference);
    const before = stripe.requests.length;
    await run(due);
    expect(stripeReads(before, [payment.processor_reference])).toHaveLength(0);
    const next = await checkAt(payment.id);
    expect(next).toBeGreaterThan(due);

    // The credentials back: the next slot reads and finds the dispute.
    await setMethodSecrets(paused.stripe, stored);
    await run(next!);
    expect((await disputesOf(payment.id, paused)).map((d) => d.status)).toEqual(['needs_response']);
  });

  it('the window’s last slot, reached a little after the window’s end, still lists the payment’s disputes', async () => {
    const payment = await approved(o, o.stripe, '54.00');
    const createdAt = Date.parse(payment.created_at as string);
    const end = createdAt + 120 * 86_400_000;
    await dataPlane.prepare('UPDATE payments SET dispute_check_at = ? WHERE id = ?').bind(end, payment.id).run();
    stripe.openDispute(payment.processor_reference); // opened on the window's last day, its events lost
    await run(end + 60_000);
    expect((await disputesOf(payment.id)).map((d) => d.status)).toEqual(['needs_response']);
  });
});
