import { dataPlane, depsOfPayment } from '../helpers/shards.ts';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { MAX_TERMINAL_CHECKS } from '../../src/domain/terminal-checks.ts';
import { runTerminalChecks } from '../../src/jobs/terminal-checks.ts';
import { call, createKey, expectError, seedSession, type Session } from '../helpers/api.ts';
import { STRIPE_ORIGIN, StripeSimulator, stripeId, type SignedDelivery } from '../simulators/stripe.ts';

/**
 * Stripe end to end through the API: methods created with POST /v1/account/payment-methods, the Worker's
 * outbound fetch (the Worker runs in the tests' isolate) answered by the Stripe simulator, and payments,
 * cancels, refunds and processor notifications through their public routes. Every call goes through
 * `call`, so the leak scan sees every response: the Stripe credentials sent may appear in none.
 */

const READER = 'tmr_ApiCounter01';
const sim = new StripeSimulator();
const secretKey = `sk_test_${stripeId('k').slice(2)}`;

let session: Session;
let apiKey: { id: string; secret: string };
let pos: string;
let qr: string;
let paynow: string;

const urlOf = (input: RequestInfo | URL) =>
  typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;

beforeAll(async () => {
  // Only Stripe is answered (by the simulator); anything else would be the network, which tests never reach.
  vi.spyOn(globalThis, 'fetch').mockImplementation((input, init) => {
    if (urlOf(input).startsWith(`${STRIPE_ORIGIN}/`)) return sim.fetch(input, init);
    return Promise.reject(new TypeError(`network access refused in tests: ${urlOf(input)}`));
  });
  session = await seedSession();
  apiKey = await createKey(session);
  pos = await addMethod('cnv_stripe_pos_v1', { reader_id: READER });
  qr = await addMethod('cnv_stripe_qr_v1', { payment_method_type: 'promptpay', qr_ttl_seconds: 600 });
  paynow = await addMethod('cnv_stripe_qr_v1', { payment_method_type: 'paynow' });
});

afterAll(() => {
  vi.mocked(globalThis.fetch).mockRestore();
});

beforeEach(() => {
  sim.clearInjections();
  sim.readerMode = 'auto';
  sim.refundMode = 'auto';
});

async function addMethod(
  versionId: string,
  configuration?: Record<string, unknown>,
  credentials = { secret_key: secretKey, webhook_secret: sim.webhookSecret },
): Promise<string> {
  const res = await call('POST', '/v1/account/payment-methods', {
    token: session.accessToken,
    body: {
      connector_definition_version_id: versionId,
      name: 'Stripe',
      credentials,
      ...(configuration ? { configuration } : {}),
    },
  });
  expect(res.status, res.text).toBe(201);
  expect(res.body.data).toMatchObject({
    provider: 'stripe',
    type: versionId.includes('_qr_') ? 'qr' : 'pos',
    capabilities: ['payments', 'refunds', 'cancellations'],
  });
  const link = await call('POST', `/v1/account/payment-methods/${res.body.data.id}/api-keys`, {
    token: session.accessToken,
    body: { api_key_id: apiKey.id },
  });
  expect(link.status, link.text).toBe(201);
  return res.body.data.id;
}

function pay(
  method: string,
  value: string,
  options: { key?: string; currency?: string; configuration?: Record<string, unknown>; reference?: string } = {},
) {
  const body = {
    amount: { value, currency: options.currency ?? 'USD' },
    external_reference: options.reference ?? `order-${crypto.randomUUID()}`,
    payment_method: method,
    ...(options.configuration ? { configuration: options.configuration } : {}),
  };
  return call('POST', '/v1/payments', {
    token: apiKey.secret,
    body,
    headers: { 'Idempotency-Key': options.key ?? crypto.randomUUID() },
  });
}

const post = (path: string, body?: unknown, key: string = crypto.randomUUID()) =>
  call('POST', path, {
    token: apiKey.secret,
    ...(body !== undefined ? { body } : {}),
    headers: { 'Idempotency-Key': key },
  });

const getPayment = (id: string) => call('GET', `/v1/payments/${id}`, { token: apiKey.secret });

const notify = (method: string, delivery: Pick<SignedDelivery, 'rawBody' | 'headers'>) =>
  call('POST', `/v1/processor-notifications/${method}`, { rawBody: delivery.rawBody, headers: delivery.headers });

async function paymentRow(id: string) {
  return dataPlane
    .prepare('SELECT * FROM payments WHERE id = ?')
    .bind(id)
    .first<{ status: string; processor_reference: string | null; processor_attempts: number }>();
}

async function refundRow(id: string) {
  return dataPlane
    .prepare('SELECT * FROM refunds WHERE id = ?')
    .bind(id)
    .first<{ status: string; processor_reference: string | null }>();
}

async function pendingQr(value = '350.00') {
  const res = await pay(qr, value, { currency: 'THB' });
  expect(res.status, res.text).toBe(201);
  expect(res.body.data.status).toBe('pending');
  return res.body.data as { id: string; processor_reference: string; action: { type: string; qr_data: string } };
}

// ---------------------------------------------------------------------------------------------------------
describe('Stripe payment methods', () => {
  it('are listed in GET /v1/connectors with their currencies and schemas', async () => {
    const res = await call('GET', '/v1/connectors?limit=100', { token: session.accessToken });
    expect(res.status).toBe(200);
    const stripe = (res.body.data as { provider: string; type: string; versions: any[] }[]).filter(
      (c) => c.provider === 'stripe',
    );
    expect(stripe.map((c) => c.type).sort()).toEqual(['pos', 'qr']);
    const posVersion = stripe.find((c) => c.type === 'pos')!.versions[0];
    const qrVersion = stripe.find((c) => c.type === 'qr')!.versions[0];
    expect(posVersion).toMatchObject({
      id: 'cnv_stripe_pos_v1',
      status: 'published',
      currencies: ['USD', 'EUR', 'SGD'],
    });
    expect(qrVersion).toMatchObject({ id: 'cnv_stripe_qr_v1', status: 'published', currencies: ['THB', 'SGD'] });
    expect(posVersion.credentials_schema.required.sort()).toEqual(['secret_key', 'webhook_secret']);
    expect(posVersion.credentials_schema.additionalProperties).toBe(false);
    expect(posVersion.configuration_schema.required ?? []).toEqual([]);
    expect(qrVersion.configuration_schema.properties.payment_method_type).toMatchObject({
      enum: ['promptpay', 'paynow'],
      default: 'promptpay',
    });
  });

  it('never echo the credentials, and refuse malformed ones naming the field only', async () => {
    const credentials = {
      secret_key: `sk_test_${stripeId('e').slice(2)}`,
      webhook_secret: `whsec_${stripeId('w').slice(2)}`,
    };
    const res = await call('POST', '/v1/account/payment-methods', {
      token: session.accessToken,
      body: { connector_definition_version_id: 'cnv_stripe_pos_v1', name: 'Stripe', credentials },
    });
    expect(res.status).toBe(201);
    expect(res.text).not.toContain(credentials.secret_key);
    expect(res.text).not.toContain(credentials.webhook_secret);
    const bad = { secret_key: `pk_test_${stripeId('p').slice(2)}`, webhook_secret: credentials.webhook_secret };
    const refused = await call('POST', '/v1/account/payment-methods', {
      token: session.accessToken,
      body: { connector_definition_version_id: 'cnv_stripe_pos_v1', name: 'Stripe', credentials: bad },
    });
    const error = expectError(refused, 400, 'invalid_request');
    expect(JSON.stringify(error.details)).toContain('credentials.secret_key');
    expect(refused.text).not.toContain(bad.secret_key);
  });
});

// ---------------------------------------------------------------------------------------------------------
describe('Stripe POS payments through the API', () => {
  it('approved: the PaymentIntent carries our payment id, the payment its reference', async () => {
    const res = await pay(pos, '25.00');
    expect(res.status, res.text).toBe(201);
    expect(res.body.data).toMatchObject({
      status: 'approved',
      action: { type: 'none' },
      amount: { value: '25.00', currency: 'USD' },
    });
    const pi = sim.paymentIntentFor(res.body.data.id)!;
    expect(pi).toMatchObject({
      amount: 2500,
      currency: 'usd',
      status: 'succeeded',
      metadata: { payment_id: res.body.data.id, external_reference: res.body.data.external_reference },
    });
    expect(res.body.data.processor_reference).toBe(pi.id);
  });

  it('ending 51 → 201 declined', async () => {
    const res = await pay(pos, '10.51');
    expect(res.status, res.text).toBe(201);
    expect(res.body.data.status).toBe('declined');
  });

  it('ending 54 → 201 failed', async () => {
    const res = await pay(pos, '10.54');
    expect(res.status, res.text).toBe(201);
    expect(res.body.data.status).toBe('failed');
  });

  it('ending 52 → 504 processor_timeout, payment pending; the retry with the same key resumes the same PaymentIntent', async () => {
    const key = crypto.randomUUID();
    const reference = `order-${crypto.randomUUID()}`;
    const first = await pay(pos, '10.52', { key, reference });
    expectError(first, 504, 'processor_timeout');
    const { results } = await dataPlane
      .prepare('SELECT * FROM payments WHERE external_reference = ?')
      .bind(reference)
      .all<{ id: string; status: string; processor_reference: string | null }>();
    expect(results).toHaveLength(1);
    const paymentId = results[0]!.id;
    expect(results[0]).toMatchObject({ status: 'pending', processor_reference: null });
    expect(sim.paymentIntentCount(paymentId)).toBe(1);

    const retry = await pay(pos, '10.52', { key, reference });
    expect(retry.status, retry.text).toBe(201);
    expect(retry.body.data).toMatchObject({
      id: paymentId,
      status: 'approved',
      processor_reference: sim.paymentIntentFor(paymentId)!.id,
    });
    expect(sim.paymentIntentCount(paymentId)).toBe(1);
  });

  it('ending 53 → 503 processor_unavailable, payment created; the retry succeeds with one PaymentIntent', async () => {
    const key = crypto.randomUUID();
    const reference = `order-${crypto.randomUUID()}`;
    expectError(await pay(pos, '10.53', { key, reference }), 503, 'processor_unavailable');
    const retry = await pay(pos, '10.53', { key, reference });
    expect(retry.status, retry.text).toBe(201);
    expect(retry.body.data.status).toBe('approved');
    expect(sim.paymentIntentCount(retry.body.data.id)).toBe(1);
  });

  it('a Stripe 5xx → 503 with the processor code kept in details; nothing of Stripe’s body', async () => {
    sim.inject('server_error', { path: '/v1/payment_intents' });
    const res = await pay(pos, '12.00');
    const error = expectError(res, 503, 'processor_unavailable');
    expect(error.details).toEqual({ processor_code: 'api_error' });
    expect(res.text).not.toContain('Stripe’s end');
  });

  it('the same key sent with other parameters (Stripe: 400 idempotency_error) → 504 processor_timeout, the payment kept pending, not failed', async () => {
    const reference = `order-${crypto.randomUUID()}`;
    sim.inject('idempotency_error', { path: '/v1/payment_intents' });
    expect(expectError(await pay(pos, '12.00', { reference }), 504, 'processor_timeout').details).toEqual({
      processor_code: 'idempotency_error',
    });
    const { results } = await dataPlane
      .prepare('SELECT status FROM payments WHERE external_reference = ?')
      .bind(reference)
      .all<{ status: string }>();
    expect(results).toEqual([{ status: 'pending' }]);
  });

  it('a currency the version does not take → 422 unsupported_currency', async () => {
    expectError(await pay(pos, '25.00', { currency: 'BRL' }), 422, 'unsupported_currency');
    expectError(await pay(pos, '25.00', { currency: 'THB' }), 422, 'unsupported_currency');
    expectError(await pay(qr, '25.00', { currency: 'USD' }), 422, 'unsupported_currency');
  });

  it('without a reader_id the payment fails (422); the payment’s configuration may name the reader', async () => {
    const bare = await addMethod('cnv_stripe_pos_v1');
    const refused = await pay(bare, '25.00');
    expect(expectError(refused, 422, 'connector_configuration_invalid').details).toEqual({
      processor_code: 'stripe_reader_missing',
    });
    const ok = await pay(bare, '25.00', { configuration: { reader_id: 'tmr_OtherCounter02' } });
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body.data.status).toBe('approved');
    expect(sim.requestsTo('POST', '/v1/terminal/readers/tmr_OtherCounter02/process_payment_intent')).toHaveLength(1);
  });

  it('credentials Stripe rejects → 422 connector_configuration_invalid; Stripe’s message is not passed on', async () => {
    const rejected = `sk_test_${stripeId('r').slice(2)}`;
    sim.rejectKey(rejected);
    const method = await addMethod(
      'cnv_stripe_pos_v1',
      { reader_id: READER },
      { secret_key: rejected, webhook_secret: sim.webhookSecret },
    );
    const res = await pay(method, '25.00');
    expectError(res, 422, 'connector_configuration_invalid');
    expect(res.text).not.toContain('Invalid API Key');
  });

  it('a live key on the test deployment → 422 before anything reaches Stripe', async () => {
    const method = await addMethod(
      'cnv_stripe_pos_v1',
      { reader_id: READER },
      { secret_key: `sk_live_${stripeId('l').slice(2)}`, webhook_secret: sim.webhookSecret },
    );
    const before = sim.requests.length;
    expect(expectError(await pay(method, '25.00'), 422, 'connector_configuration_invalid').details).toEqual({
      processor_code: 'stripe_key_environment_mismatch',
    });
    expect(sim.requests.length).toBe(before);
  });
});

// ---------------------------------------------------------------------------------------------------------
describe('Stripe QR payments through the API', () => {
  it('PromptPay: pending with qr_data exactly as Stripe’s next_action gives it, shown again on read', async () => {
    const payment = await pendingQr();
    const pi = sim.paymentIntents.get(payment.processor_reference)!;
    expect(payment.action).toEqual({
      type: 'display_qr',
      qr_data: pi.next_action!.promptpay_display_qr_code!.data,
      expires_at: expect.any(String),
    });
    expect(pi).toMatchObject({ amount: 35_000, currency: 'thb', payment_method_types: ['promptpay'] });
    const read = await getPayment(payment.id);
    expect(read.body.data.action).toEqual(payment.action);
  });

  it('PayNow (SGD): pending with the PayNow code', async () => {
    const res = await pay(paynow, '12.30', { currency: 'SGD' });
    expect(res.status, res.text).toBe(201);
    const pi = sim.paymentIntents.get(res.body.data.processor_reference)!;
    expect(res.body.data.action).toEqual({
      type: 'display_qr',
      qr_data: pi.next_action!.paynow_display_qr_code!.data,
      expires_at: expect.any(String),
    });
  });
});

// ---------------------------------------------------------------------------------------------------------
describe('Stripe notifications through POST /v1/processor-notifications/{payment_method_id}', () => {
  it('a signed payment_intent.succeeded approves the payment; its duplicate changes nothing', async () => {
    const payment = await pendingQr();
    sim.payQr(payment.processor_reference);
    const delivery = await sim.deliver(sim.eventFor('payment_intent.succeeded', payment.processor_reference));
    const res = await notify(qr, delivery);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toEqual({ received: true, outcome: 'applied' });
    expect((await getPayment(payment.id)).body.data.status).toBe('approved');

    const again = await notify(qr, delivery);
    expect(again.body.data.outcome).toBe('duplicate');
    expect(
      (await notify(qr, await sim.deliver(sim.eventFor('payment_intent.succeeded', payment.processor_reference)))).body
        .data.outcome,
    ).toBe('duplicate');
  });

  it('a late event (requires_action after success) is recorded and ignored', async () => {
    const payment = await pendingQr();
    sim.payQr(payment.processor_reference);
    await notify(qr, await sim.deliver(sim.eventFor('payment_intent.succeeded', payment.processor_reference)));
    const late = await notify(
      qr,
      await sim.deliver(sim.eventFor('payment_intent.requires_action', payment.processor_reference)),
    );
    expect(late.body.data.outcome).toBe('ignored');
    expect((await getPayment(payment.id)).body.data.status).toBe('approved');
  });

  it('a QR payment the bank declines: payment_intent.payment_failed → declined', async () => {
    const payment = await pendingQr('100.51');
    sim.declineQr(payment.processor_reference);
    const res = await notify(
      qr,
      await sim.deliver(sim.eventFor('payment_intent.payment_failed', payment.processor_reference)),
    );
    expect(res.body.data.outcome).toBe('applied');
    expect((await getPayment(payment.id)).body.data.status).toBe('declined');
  });

  it.each([
    ['forged (another secret)', () => ({ secret: `whsec_${stripeId('f', 32).slice(2)}` })],
    ['stale (t 301 s old)', () => ({ timestamp: Math.floor(Date.now() / 1000) - 301 })],
    [
      'tampered (succeeded written into the body after signing)',
      () => ({ tamper: (raw: string) => raw.replace(/"status": "requires_action"/g, '"status": "succeeded"') }),
    ],
  ])('a %s notification → 401, payment untouched', async (_, options) => {
    const payment = await pendingQr();
    const event = sim.eventFor('payment_intent.requires_action', payment.processor_reference);
    const res = await notify(qr, await sim.deliver(event, options()));
    expectError(res, 401, 'unauthorized');
    expect((await paymentRow(payment.id))!.status).toBe('pending');
  });

  it('an unsigned notification → 401', async () => {
    const payment = await pendingQr();
    const event = sim.eventFor('payment_intent.requires_action', payment.processor_reference);
    expectError(
      await call('POST', `/v1/processor-notifications/${qr}`, {
        rawBody: JSON.stringify(event),
        headers: { 'Content-Type': 'application/json' },
      }),
      401,
      'unauthorized',
    );
  });

  it('an event about a charge makes the core re-fetch the PaymentIntent', async () => {
    const payment = await pendingQr();
    sim.payQr(payment.processor_reference);
    const charge = sim.makeEvent('charge.succeeded', sim.chargeOf(payment.processor_reference));
    const before = sim.requestsTo('GET', `/v1/payment_intents/${payment.processor_reference}`).length;
    const res = await notify(qr, await sim.deliver(charge));
    expect(res.body.data.outcome).toBe('applied');
    expect(sim.requestsTo('GET', `/v1/payment_intents/${payment.processor_reference}`).length).toBe(before + 1);
    expect((await getPayment(payment.id)).body.data.status).toBe('approved');
  });

  it.each([
    ['succeed', 'approved'],
    ['decline', 'declined'],
    ['fail', 'failed'],
    ['cancel', 'canceled'],
  ] as const)('the simulator’s settlePayment(%s) on a pending QR payment → %s', async (outcome, status) => {
    const payment = await pendingQr();
    const res = await notify(qr, await sim.settlePayment(payment.processor_reference, outcome));
    expect(res.body.data.outcome).toBe('applied');
    expect((await getPayment(payment.id)).body.data.status).toBe(status);
  });

  it('the simulator’s settlePayment on a POS payment waiting at the reader', async () => {
    sim.readerMode = 'manual';
    const res = await pay(pos, '30.00');
    expect(res.body.data.status).toBe('pending');
    expect(
      (await notify(pos, await sim.settlePayment(res.body.data.processor_reference, 'decline'))).body.data.outcome,
    ).toBe('applied');
    expect((await getPayment(res.body.data.id)).body.data.status).toBe('declined');
  });

  it('an authorization only (payment_intent.amount_capturable_updated, requires_capture): the re-read captures it → approved', async () => {
    sim.readerMode = 'manual';
    const res = await pay(pos, '26.00');
    expect(res.body.data.status).toBe('pending');
    sim.presentCard(READER, 'authorize');
    const event = sim.eventFor('payment_intent.amount_capturable_updated', res.body.data.processor_reference);
    const news = await notify(pos, await sim.deliver(event));
    expect(news.body.data.outcome).toBe('applied');
    expect((await getPayment(res.body.data.id)).body.data.status).toBe('approved');
    expect(sim.paymentIntents.get(res.body.data.processor_reference)!.status).toBe('succeeded');
  });

  it('the customer cancels on the reader (terminal.reader.action_failed, no error on the PaymentIntent) → failed', async () => {
    sim.readerMode = 'manual';
    const res = await pay(pos, '20.00');
    expect(res.body.data.status).toBe('pending');
    sim.presentCard(READER, 'customer_cancel');
    const news = await notify(pos, await sim.deliver(sim.eventFor('terminal.reader.action_failed', READER)));
    expect(news.body.data.outcome).toBe('applied');
    expect((await getPayment(res.body.data.id)).body.data.status).toBe('failed');
  });

  it('an event about something we do not know (balance.available: its Balance has no id) → 200 unknown_resource', async () => {
    const balance = sim.makeEvent('balance.available', {
      object: 'balance',
      available: [{ amount: 0, currency: 'usd', source_types: { card: 0 } }],
      livemode: false,
      pending: [],
    });
    const res = await notify(qr, await sim.deliver(balance));
    expect(res.status).toBe(200);
    expect(res.body.data.outcome).toBe('unknown_resource');
  });
});

// ---------------------------------------------------------------------------------------------------------
describe('Stripe cancellations through the API', () => {
  it('a pending QR payment → 200 canceled, and canceled at Stripe', async () => {
    const payment = await pendingQr();
    const res = await post(`/v1/payments/${payment.id}/cancel`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.status).toBe('canceled');
    expect(sim.paymentIntents.get(payment.processor_reference)!.status).toBe('canceled');
  });

  it('a POS payment waiting at the reader → canceled; the reader’s action is canceled too', async () => {
    sim.readerMode = 'manual';
    const res = await pay(pos, '40.00');
    expect(res.status, res.text).toBe(201);
    expect(res.body.data.status).toBe('pending');
    const cancel = await post(`/v1/payments/${res.body.data.id}/cancel`);
    expect(cancel.status, cancel.text).toBe(200);
    expect(cancel.body.data.status).toBe('canceled');
    expect(sim.paymentIntents.get(res.body.data.processor_reference)!.status).toBe('canceled');
    expect(sim.readers.get(READER)!.action).toMatchObject({ status: 'failed', failure_code: 'canceled' });
  });

  it('a void of an approved payment → canceled, refunded in full at Stripe', async () => {
    const res = await pay(pos, '60.00');
    expect(res.body.data.status).toBe('approved');
    const cancel = await post(`/v1/payments/${res.body.data.id}/cancel`);
    expect(cancel.status, cancel.text).toBe(200);
    expect(cancel.body.data.status).toBe('canceled');
    const refunds = [...sim.refunds.values()].filter((r) => r.payment_intent === res.body.data.processor_reference);
    expect(refunds.map((r) => [r.amount, r.status])).toEqual([[6000, 'succeeded']]);
  });
});

// ---------------------------------------------------------------------------------------------------------
describe('Stripe refunds through the API', () => {
  it('partial then full: approved each, payment partially_refunded then refunded', async () => {
    const payment = (await pay(pos, '100.00')).body.data;
    const a = await post(`/v1/payments/${payment.id}/refunds`, {
      amount: { value: '30.00', currency: 'USD' },
      reason: 'one item returned',
    });
    expect(a.status, a.text).toBe(201);
    expect(a.body.data).toMatchObject({ status: 'approved', amount: { value: '30.00', currency: 'USD' } });
    expect((await getPayment(payment.id)).body.data.status).toBe('partially_refunded');
    const b = await post(`/v1/payments/${payment.id}/refunds`, { amount: { value: '70.00', currency: 'USD' } });
    expect(b.status, b.text).toBe(201);
    expect(b.body.data.status).toBe('approved');
    expect((await getPayment(payment.id)).body.data.status).toBe('refunded');
    const atStripe = [...sim.refunds.values()].filter((r) => r.payment_intent === payment.processor_reference);
    expect(atStripe.map((r) => [r.amount, r.metadata?.refund_id])).toEqual([
      [3000, a.body.data.id],
      [7000, b.body.data.id],
    ]);
  });

  it('a refund Stripe fails as declined (ending 61) → 201 declined', async () => {
    const payment = (await pay(pos, '100.00')).body.data;
    const res = await post(`/v1/payments/${payment.id}/refunds`, { amount: { value: '10.61', currency: 'USD' } });
    expect(res.status, res.text).toBe(201);
    expect(res.body.data.status).toBe('declined');
    expect((await getPayment(payment.id)).body.data.status).toBe('approved');
  });

  it('a pending refund settles through a signed charge.refund.updated', async () => {
    sim.refundMode = 'pending';
    const payment = (await pay(pos, '50.00')).body.data;
    const res = await post(`/v1/payments/${payment.id}/refunds`, { amount: { value: '50.00', currency: 'USD' } });
    expect(res.status, res.text).toBe(201);
    expect(res.body.data.status).toBe('pending');
    sim.settleRefund(res.body.data.processor_reference, 'succeeded');
    const news = await notify(
      pos,
      await sim.deliver(sim.eventFor('charge.refund.updated', res.body.data.processor_reference)),
    );
    expect(news.body.data.outcome).toBe('applied');
    expect((await refundRow(res.body.data.id))!.status).toBe('approved');
    expect((await getPayment(payment.id)).body.data.status).toBe('refunded');
  });

  it('a refund whose answer is lost → 504; the retry with the same key replays the same Stripe refund', async () => {
    const payment = (await pay(pos, '80.00')).body.data;
    const key = crypto.randomUUID();
    sim.inject('timeout_after', { path: '/v1/refunds' });
    expectError(
      await post(`/v1/payments/${payment.id}/refunds`, { amount: { value: '20.00', currency: 'USD' } }, key),
      504,
      'processor_timeout',
    );
    const retry = await post(
      `/v1/payments/${payment.id}/refunds`,
      { amount: { value: '20.00', currency: 'USD' } },
      key,
    );
    expect(retry.status, retry.text).toBe(201);
    expect(retry.body.data.status).toBe('approved');
    expect([...sim.refunds.values()].filter((r) => r.payment_intent === payment.processor_reference)).toHaveLength(1);
  });
});

describe('Stripe payments at the reader, re-read on the terminal schedule (injected clock)', () => {
  it('12 readers collecting at once, a cron run every minute for 40 minutes: every run within Stripe’s 25 reads per second in test mode, at most 15 reads per payment, none past the window, and a payment the card settles leaves the schedule', async () => {
    sim.readerMode = 'manual';
    const readers = Array.from({ length: 12 }, (_, i) => `tmr_RateCounter${String(i).padStart(2, '0')}`);
    const payments: { id: string; reader: string }[] = [];
    for (const reader of readers) {
      const method = await addMethod('cnv_stripe_pos_v1', { reader_id: reader });
      const res = await pay(method, '20.00');
      expect(res.body.data).toMatchObject({ status: 'pending', action: { type: 'at_terminal' } });
      payments.push({ id: res.body.data.id, reader });
    }
    const t0 = Date.now();
    const deps = await depsOfPayment(payments[0]!.id);
    for (let minute = 1; minute <= 40; minute++) {
      const before = sim.requests.length;
      await runTerminalChecks(deps, t0 + minute * 60_000);
      const made = sim.requests.slice(before);
      // Stripe counts read requests per second: a run's requests, however fast it makes them, are at most this.
      expect(made.length, `minute ${minute}`).toBeLessThanOrEqual(25);
      expect(made.every((r) => r.method === 'GET')).toBe(true);
      // The customer presents a card on the first reader three minutes in.
      if (minute === 3) sim.presentCard(payments[0]!.reader);
    }
    for (const { id } of payments) {
      const row = await dataPlane
        .prepare('SELECT status, terminal_checks, terminal_check_at FROM payments WHERE id = ?')
        .bind(id)
        .first<{ status: string; terminal_checks: number; terminal_check_at: number | null }>();
      expect(row!.terminal_checks).toBeLessThanOrEqual(MAX_TERMINAL_CHECKS);
      expect(row!.terminal_check_at).toBeNull();
    }
    expect((await getPayment(payments[0]!.id)).body.data.status).toBe('approved');
    expect((await getPayment(payments[1]!.id)).body.data).toMatchObject({
      status: 'pending',
      action: { type: 'at_terminal' },
    });
    for (const { id } of payments.slice(1)) expect((await post(`/v1/payments/${id}/cancel`)).status).toBe(200);
  });
});
