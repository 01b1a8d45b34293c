import { describe, expect, it } from 'vitest';
import { STRIPE_API_VERSION, stripePosV1, stripeQrV1 } from '../../src/connectors/stripe/index.ts';
import {
  encodeForm,
  eventToNotification,
  fetchFailure,
  metadataQuery,
  normalizeStripeError,
  parseSignatureHeader,
  PAYMENT_INTENT_STATUS_MAP,
  paymentIntentStatus,
  REFUND_STATUS_MAP,
  refundStatus,
  StripeEvent,
  toStripeAmount,
} from '../../src/connectors/stripe/transformers.ts';
import { ConnectorError, type ConnectorContext, type CreatePaymentInput, type ProcessorPaymentStatus } from '../../src/connectors/types.ts';
import { parseForm, StripeSimulator, stripeId } from '../simulators/stripe.ts';

/** The Stripe adapter against the Stripe simulator (injected as ctx.fetch), and its pure transformers. */

const SECRET_KEY = `sk_test_${stripeId('k').slice(2)}`;
const READER = 'tmr_FrontCounter01';

type Config = Record<string, unknown>;

function ctx(sim: StripeSimulator, configuration: Config = {}, overrides: Partial<ConnectorContext> = {}): ConnectorContext<any, any> {
  return { credentials: { secret_key: SECRET_KEY, webhook_secret: sim.webhookSecret }, configuration, environment: 'test', fetch: sim.fetch, ...overrides };
}

const posConfig = (config: Config = {}) => stripePosV1.configurationSchema.parse({ reader_id: READER, ...config }) as Config;
const qrConfig = (config: Config = {}) => stripeQrV1.configurationSchema.parse(config) as Config;

function paymentInput(minor: number, currency = 'USD', options: { key?: string; attemptNumber?: number; paymentId?: string } = {}): CreatePaymentInput {
  const paymentId = options.paymentId ?? `pay_${crypto.randomUUID()}`;
  return {
    paymentId,
    processorIdempotencyKey: options.key ?? paymentId,
    attemptNumber: options.attemptNumber ?? 1,
    amount: { minor, currency },
    externalReference: `order-${crypto.randomUUID()}`,
    description: 'Two coffees',
  };
}

async function connectorError(promise: Promise<unknown>): Promise<ConnectorError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ConnectorError);
    return error as ConnectorError;
  }
  throw new Error('expected a ConnectorError');
}

const pos = stripePosV1.adapter;
const qr = stripeQrV1.adapter;

// ---------------------------------------------------------------------------------------------------------
describe('Stripe versions', () => {
  it('publishes a POS and a QR version with payments, refunds and cancellations', () => {
    expect(stripePosV1).toMatchObject({ id: 'cnv_stripe_pos_v1', provider: 'stripe', type: 'pos', status: 'published', currencies: ['USD', 'EUR', 'SGD'] });
    expect(stripeQrV1).toMatchObject({ id: 'cnv_stripe_qr_v1', provider: 'stripe', type: 'qr', status: 'published', currencies: ['THB', 'SGD'] });
    for (const v of [stripePosV1, stripeQrV1]) expect(v.capabilities).toEqual(['payments', 'refunds', 'cancellations']);
  });

  it('credentials: a secret or restricted key and a webhook secret, nothing else', () => {
    const schema = stripePosV1.credentialsSchema;
    for (const secret_key of ['sk_test_abcdefgh123', 'sk_live_abcdefgh123', 'rk_test_abcdefgh123', 'rk_live_abcdefgh123']) {
      expect(schema.safeParse({ secret_key, webhook_secret: 'whsec_abcdefgh123' }).success).toBe(true);
    }
    for (const bad of [
      { secret_key: 'pk_test_abcdefgh123', webhook_secret: 'whsec_abcdefgh123' },
      { secret_key: 'sk_test_', webhook_secret: 'whsec_abcdefgh123' },
      { secret_key: 'sk_test_abcdefgh123', webhook_secret: 'abcdefgh123' },
      { secret_key: 'sk_test_abcdefgh123' },
      { secret_key: 'sk_test_abcdefgh123', webhook_secret: 'whsec_abcdefgh123', extra: 'x' },
      { api_key: 'sk_test_abcdefgh123' },
    ]) {
      expect(schema.safeParse(bad).success).toBe(false);
    }
  });

  it('configuration accepts {} (defaults) and refuses unknown or malformed fields', () => {
    expect(stripePosV1.configurationSchema.parse({})).toEqual({});
    expect(stripeQrV1.configurationSchema.parse({})).toEqual({ payment_method_type: 'promptpay', qr_ttl_seconds: 900 });
    expect(stripePosV1.configurationSchema.safeParse({ reader_id: 'reader-1' }).success).toBe(false);
    expect(stripePosV1.configurationSchema.safeParse({ terminal_id: 'x' }).success).toBe(false);
    expect(stripeQrV1.configurationSchema.safeParse({ payment_method_type: 'pix' }).success).toBe(false);
    expect(stripeQrV1.configurationSchema.safeParse({ qr_ttl_seconds: 10 }).success).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------------------
describe('transformers: status tables', () => {
  const piRows: [string, ProcessorPaymentStatus][] = [
    ['succeeded', 'approved'],
    ['processing', 'processing'],
    ['requires_capture', 'processing'],
    ['canceled', 'canceled'],
    ['requires_payment_method', 'pending'],
    ['requires_confirmation', 'pending'],
    ['requires_action', 'pending'],
  ];

  it('the PaymentIntent table is exactly the documented one', () => {
    expect(PAYMENT_INTENT_STATUS_MAP).toEqual(Object.fromEntries(piRows));
  });

  it.each(piRows)('PaymentIntent %s → %s', (status, ours) => {
    expect(paymentIntentStatus({ status })).toBe(ours);
  });

  it.each(['requires_source', 'partially_funded', '', 'SUCCEEDED', 'toString', '__proto__', 'constructor', 'approved'])('unknown PaymentIntent status %j → pending, never approved', (status) => {
    expect(paymentIntentStatus({ status })).toBe('pending');
  });

  it('a failed attempt: card_error → declined, any other error → failed', () => {
    expect(paymentIntentStatus({ status: 'requires_payment_method', last_payment_error: { type: 'card_error', code: 'card_declined' } })).toBe('declined');
    expect(paymentIntentStatus({ status: 'requires_payment_method', last_payment_error: { type: 'invalid_request_error' } })).toBe('failed');
    expect(paymentIntentStatus({ status: 'requires_payment_method', last_payment_error: { type: 'api_error' } })).toBe('failed');
    expect(paymentIntentStatus({ status: 'requires_payment_method', last_payment_error: {} })).toBe('failed');
    expect(paymentIntentStatus({ status: 'requires_payment_method', last_payment_error: { type: 'card_error' } }, 'payment_intent.payment_failed')).toBe('declined');
    expect(paymentIntentStatus({ status: 'requires_payment_method', last_payment_error: null }, 'payment_intent.payment_failed')).toBe('failed');
    // The error only counts while the PaymentIntent waits for a new method: a later success wins.
    expect(paymentIntentStatus({ status: 'succeeded', last_payment_error: { type: 'card_error' } })).toBe('approved');
  });

  const refundRows = [
    ['succeeded', 'approved'],
    ['pending', 'pending'],
    ['requires_action', 'pending'],
    ['failed', 'failed'],
    ['canceled', 'failed'],
  ] as const;

  it('the Refund table is exactly the documented one', () => {
    expect(REFUND_STATUS_MAP).toEqual(Object.fromEntries(refundRows));
  });

  it.each(refundRows)('Refund %s → %s', (status, ours) => {
    expect(refundStatus({ status })).toBe(ours);
  });

  it('a refund failed with failure_reason declined is declined; unknown refund statuses are pending', () => {
    expect(refundStatus({ status: 'failed', failure_reason: 'declined' })).toBe('declined');
    expect(refundStatus({ status: 'failed', failure_reason: 'expired_or_canceled_card' })).toBe('failed');
    for (const status of ['', 'toString', 'approved', null]) expect(refundStatus({ status })).toBe('pending');
  });
});

describe('transformers: requests', () => {
  it('encodes forms in bracket notation, leaving out undefined and null', () => {
    const form = encodeForm({
      amount: 1050,
      currency: 'usd',
      payment_method_types: ['card_present'],
      capture_method: 'automatic',
      confirm: true,
      description: undefined,
      statement_descriptor: null,
      metadata: { payment_id: 'pay_1', external_reference: 'a b&c=d+é' },
      payment_method_data: { type: 'promptpay', billing_details: { email: 'a@b.co' } },
    });
    expect(form).toBe(
      'amount=1050&currency=usd&payment_method_types[]=card_present&capture_method=automatic&confirm=true' +
        '&metadata[payment_id]=pay_1&metadata[external_reference]=a%20b%26c%3Dd%2B%C3%A9' +
        '&payment_method_data[type]=promptpay&payment_method_data[billing_details][email]=a%40b.co',
    );
    // And the simulator reads it back as Stripe would.
    expect(parseForm(form)).toEqual({
      amount: '1050',
      currency: 'usd',
      payment_method_types: ['card_present'],
      capture_method: 'automatic',
      confirm: 'true',
      metadata: { payment_id: 'pay_1', external_reference: 'a b&c=d+é' },
      payment_method_data: { type: 'promptpay', billing_details: { email: 'a@b.co' } },
    });
  });

  it('amounts are integer minor units with the currency in lower case', () => {
    expect(toStripeAmount({ minor: 1050, currency: 'USD' })).toEqual({ amount: 1050, currency: 'usd' });
    expect(toStripeAmount({ minor: 1500, currency: 'CLP' })).toEqual({ amount: 1500, currency: 'clp' });
    expect(toStripeAmount({ minor: 12_345, currency: 'THB' })).toEqual({ amount: 12_345, currency: 'thb' });
    for (const minor of [0, -1, 1.5, Number.NaN]) expect(() => toStripeAmount({ minor, currency: 'USD' })).toThrow(ConnectorError);
  });

  it('search queries quote and escape the value', () => {
    expect(metadataQuery('payment_id', 'pay_1')).toBe("metadata['payment_id']:'pay_1'");
    expect(metadataQuery('payment_id', "a'b\\c")).toBe("metadata['payment_id']:'a\\'b\\\\c'");
  });
});

describe('transformers: errors', () => {
  const err = (type: string, code?: string, decline_code?: string) => ({ error: { type, ...(code ? { code } : {}), ...(decline_code ? { decline_code } : {}), message: 'RAW PROCESSOR MESSAGE' } });
  const rows: [number, unknown, 'lookup' | 'write', string, string][] = [
    [402, err('card_error', 'card_declined', 'insufficient_funds'), 'write', 'declined', 'insufficient_funds'],
    [402, err('card_error', 'expired_card'), 'write', 'declined', 'expired_card'],
    [401, err('invalid_request_error'), 'write', 'configuration_invalid', 'invalid_request_error'],
    [401, null, 'lookup', 'configuration_invalid', 'http_401'],
    [403, err('invalid_request_error', 'secret_key_required'), 'write', 'configuration_invalid', 'secret_key_required'],
    [400, err('invalid_request_error', 'parameter_invalid_integer'), 'write', 'configuration_invalid', 'parameter_invalid_integer'],
    [400, err('idempotency_error'), 'write', 'configuration_invalid', 'idempotency_error'],
    [400, err('invalid_request_error', 'charge_already_refunded'), 'write', 'declined', 'charge_already_refunded'],
    [400, err('invalid_request_error', 'amount_too_large'), 'write', 'declined', 'amount_too_large'],
    [400, err('invalid_request_error', 'payment_intent_unexpected_state'), 'write', 'declined', 'payment_intent_unexpected_state'],
    [400, err('invalid_request_error', 'terminal_reader_offline'), 'write', 'unavailable', 'terminal_reader_offline'],
    [400, err('invalid_request_error', 'terminal_reader_busy'), 'write', 'unavailable', 'terminal_reader_busy'],
    [400, err('invalid_request_error', 'terminal_reader_timeout'), 'write', 'timeout', 'terminal_reader_timeout'],
    [400, err('invalid_request_error', 'resource_missing'), 'lookup', 'not_found', 'resource_missing'],
    [400, err('invalid_request_error', 'resource_missing'), 'write', 'configuration_invalid', 'resource_missing'],
    [404, err('invalid_request_error', 'resource_missing'), 'lookup', 'not_found', 'resource_missing'],
    [404, err('invalid_request_error', 'resource_missing'), 'write', 'configuration_invalid', 'resource_missing'],
    [409, err('idempotency_error', 'idempotency_key_in_use'), 'write', 'unavailable', 'idempotency_key_in_use'],
    [429, err('invalid_request_error', 'rate_limit'), 'write', 'unavailable', 'rate_limit'],
    [429, null, 'lookup', 'unavailable', 'http_429'],
    [500, err('api_error'), 'write', 'unavailable', 'api_error'],
    [502, 'not json', 'write', 'unavailable', 'http_502'],
    [503, null, 'lookup', 'unavailable', 'http_503'],
  ];

  it.each(rows)('HTTP %d %j (%s) → %s, processor code %s', (status, body, operation, kind, code) => {
    const error = normalizeStripeError(status, body, operation);
    expect(error).toBeInstanceOf(ConnectorError);
    expect(error.kind).toBe(kind);
    expect(error.processorCode).toBe(code);
    expect(error.message).not.toContain('RAW PROCESSOR MESSAGE');
  });

  it('a fetch aborted by its timeout → timeout; any other fetch failure → unavailable', () => {
    expect(fetchFailure(new DOMException('timed out', 'TimeoutError')).kind).toBe('timeout');
    expect(fetchFailure(new DOMException('aborted', 'AbortError')).kind).toBe('timeout');
    expect(fetchFailure(new TypeError('fetch failed')).kind).toBe('unavailable');
    expect(fetchFailure('weird').kind).toBe('unavailable');
  });
});

describe('transformers: notifications', () => {
  const hex = 'a'.repeat(64);
  it('parses Stripe-Signature headers and refuses garbled ones', () => {
    expect(parseSignatureHeader(`t=1700000000,v1=${hex}`)).toEqual({ timestamp: 1700000000, signatures: [hex] });
    expect(parseSignatureHeader(`t=1700000000,v1=${hex},v1=${'b'.repeat(64)},v0=${'c'.repeat(64)}`)).toEqual({ timestamp: 1700000000, signatures: [hex, 'b'.repeat(64)] });
    expect(parseSignatureHeader(` t=1700000000, v1=${hex}`)).toEqual({ timestamp: 1700000000, signatures: [hex] });
    for (const bad of [
      null,
      '',
      `v1=${hex}`,
      't=1700000000',
      `t=1700000000,v0=${hex}`,
      `t=abc,v1=${hex}`,
      `t=-1,v1=${hex}`,
      `t=1,t=2,v1=${hex}`,
      `t=1700000000,v1=${hex.slice(1)}`,
      `t=1700000000,v1=${'A'.repeat(64)}`,
      `t=1700000000,v1=${'z'.repeat(64)}`,
      `t=1700000000;v1=${hex}`,
      `t=1700000000,v1`,
      'x'.repeat(5000),
    ]) {
      expect(parseSignatureHeader(bad)).toBeNull();
    }
  });

  const event = (type: string, object: Record<string, unknown>) => StripeEvent.parse({ id: 'evt_1', object: 'event', type, data: { object } });

  it('maps PaymentIntent, Refund, charge, reader and unknown events', () => {
    expect(eventToNotification(event('payment_intent.succeeded', { id: 'pi_1', object: 'payment_intent', status: 'succeeded' }))).toEqual({
      eventId: 'evt_1',
      resource: 'payment',
      processorReference: 'pi_1',
      status: 'approved',
      trusted: true,
    });
    expect(
      eventToNotification(event('payment_intent.payment_failed', { id: 'pi_1', object: 'payment_intent', status: 'requires_payment_method', last_payment_error: { type: 'card_error', code: 'card_declined' } })).status,
    ).toBe('declined');
    expect(eventToNotification(event('payment_intent.payment_failed', { id: 'pi_1', object: 'payment_intent', status: 'requires_payment_method', last_payment_error: { type: 'api_error' } })).status).toBe(
      'failed',
    );
    expect(eventToNotification(event('payment_intent.canceled', { id: 'pi_1', object: 'payment_intent', status: 'canceled' })).status).toBe('canceled');
    expect(eventToNotification(event('payment_intent.processing', { id: 'pi_1', object: 'payment_intent', status: 'processing' })).status).toBe('processing');
    expect(eventToNotification(event('payment_intent.amount_capturable_updated', { id: 'pi_1', object: 'payment_intent', status: 'requires_capture' })).status).toBe('processing');
    expect(eventToNotification(event('payment_intent.requires_action', { id: 'pi_1', object: 'payment_intent', status: 'requires_action' })).status).toBe('pending');
    expect(eventToNotification(event('charge.refund.updated', { id: 're_1', object: 'refund', status: 'succeeded' }))).toMatchObject({ resource: 'refund', processorReference: 're_1', status: 'approved' });
    expect(eventToNotification(event('refund.failed', { id: 're_1', object: 'refund', status: 'failed', failure_reason: 'declined' }))).toMatchObject({ resource: 'refund', status: 'declined' });
    expect(eventToNotification(event('charge.refunded', { id: 'ch_1', object: 'charge', payment_intent: 'pi_9' }))).toMatchObject({ resource: 'payment', processorReference: 'pi_9', status: null });
    expect(
      eventToNotification(
        event('terminal.reader.action_succeeded', { id: 'tmr_1', object: 'terminal.reader', action: { type: 'process_payment_intent', status: 'succeeded', process_payment_intent: { payment_intent: 'pi_7' } } }),
      ),
    ).toMatchObject({ resource: 'payment', processorReference: 'pi_7', status: null });
    expect(eventToNotification(event('customer.created', { id: 'cus_1', object: 'customer' }))).toMatchObject({ resource: 'payment', processorReference: 'cus_1', status: null });
    // A PaymentIntent event whose object is malformed is news without a status: the core re-fetches.
    expect(eventToNotification(event('payment_intent.succeeded', { id: 'pi_1', object: 'payment_intent' })).status).toBeNull();
  });
});

// ---------------------------------------------------------------------------------------------------------
describe('Stripe POS adapter', () => {
  it('approves: creates a card-present PaymentIntent, hands it to the reader, reads the outcome', async () => {
    const sim = new StripeSimulator();
    const input = paymentInput(2500);
    const outcome = await pos.createPayment(ctx(sim, posConfig()), input);
    expect(outcome).toMatchObject({ status: 'approved', action: { type: 'none' }, processorStatus: 'succeeded' });
    expect(outcome.processorReference).toMatch(/^pi_/);
    expect(sim.paymentIntentCount()).toBe(1);

    const [create] = sim.requestsTo('POST', '/v1/payment_intents');
    expect(create!.headers.authorization).toBe(`Bearer ${SECRET_KEY}`);
    expect(create!.headers['stripe-version']).toBe(STRIPE_API_VERSION);
    expect(create!.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(create!.idempotencyKey).toBe(`${input.processorIdempotencyKey}:create`);
    expect(create!.rawBody).toContain('payment_method_types[]=card_present');
    expect(create!.rawBody).toContain(`metadata[payment_id]=${input.paymentId}`);
    expect(create!.params).toEqual({
      amount: '2500',
      currency: 'usd',
      description: 'Two coffees',
      metadata: { payment_id: input.paymentId, external_reference: input.externalReference },
      payment_method_types: ['card_present'],
      capture_method: 'automatic',
    });
    const [process] = sim.requestsTo('POST', `/v1/terminal/readers/${READER}/process_payment_intent`);
    expect(process!.params).toEqual({ payment_intent: outcome.processorReference });
    expect(process!.idempotencyKey).toBe(`${input.processorIdempotencyKey}:process:1`);
    // Every request went to the fixed base URL with the key; no POST without an idempotency key.
    for (const r of sim.requests) {
      expect(r.headers.authorization).toBe(`Bearer ${SECRET_KEY}`);
      if (r.method === 'POST') expect(r.idempotencyKey).toMatch(new RegExp(`^${input.processorIdempotencyKey}:`));
    }
  });

  it('every request carries an abort signal (its timeout) and goes to the fixed base URL', async () => {
    const sim = new StripeSimulator();
    const seen: { url: string; signal: AbortSignal | null | undefined }[] = [];
    const spying: typeof fetch = (input, init) => {
      seen.push({ url: String(input instanceof Request ? input.url : input), signal: init?.signal });
      return sim.fetch(input, init);
    };
    await pos.createPayment(ctx(sim, posConfig(), { fetch: spying }), paymentInput(2500));
    expect(seen.length).toBeGreaterThanOrEqual(3);
    for (const request of seen) {
      expect(request.url.startsWith('https://api.stripe.com/v1/')).toBe(true);
      expect(request.signal).toBeInstanceOf(AbortSignal);
      expect(request.signal!.aborted).toBe(false);
    }
  });

  it('a reader still waiting for the card → pending, not approved; the outcome comes with the card', async () => {
    const sim = new StripeSimulator({ readerMode: 'manual' });
    const input = paymentInput(2500);
    const outcome = await pos.createPayment(ctx(sim, posConfig()), input);
    expect(outcome).toMatchObject({ status: 'pending', processorStatus: 'requires_payment_method', action: { type: 'none' } });
    sim.presentCard(READER);
    const later = await pos.getPayment(ctx(sim, posConfig()), { paymentId: input.paymentId, processorReference: outcome.processorReference, processorIdempotencyKey: input.processorIdempotencyKey, amount: input.amount });
    expect(later.status).toBe('approved');
  });

  it('a retry while the reader still holds the PaymentIntent does not hand it over again', async () => {
    const sim = new StripeSimulator({ readerMode: 'manual' });
    const input = paymentInput(2500);
    await pos.createPayment(ctx(sim, posConfig()), input);
    const again = await pos.createPayment(ctx(sim, posConfig()), { ...input, attemptNumber: 2 });
    expect(again.status).toBe('pending');
    expect(sim.requestsTo('POST', `/v1/terminal/readers/${READER}/process_payment_intent`)).toHaveLength(1);
    expect(sim.paymentIntentCount()).toBe(1);
  });

  it('amount ending 51 → declined at the reader, with the decline code', async () => {
    const sim = new StripeSimulator();
    const outcome = await pos.createPayment(ctx(sim, posConfig()), paymentInput(1051));
    expect(outcome).toMatchObject({ status: 'declined', declineCode: 'generic_decline', processorStatus: 'requires_payment_method' });
    expect(outcome.processorReference).toMatch(/^pi_/);
  });

  it('amount ending 54 → failed', async () => {
    const sim = new StripeSimulator();
    expect((await pos.createPayment(ctx(sim, posConfig()), paymentInput(1054))).status).toBe('failed');
  });

  it('amount ending 52: the answer is lost (timeout); a retry with the same key resumes the same PaymentIntent', async () => {
    const sim = new StripeSimulator();
    const input = paymentInput(1052);
    const error = await connectorError(pos.createPayment(ctx(sim, posConfig()), input));
    expect(error.kind).toBe('timeout');
    expect(sim.paymentIntentCount()).toBe(1);
    const created = sim.paymentIntentFor(input.paymentId)!;

    const retry = await pos.createPayment(ctx(sim, posConfig()), { ...input, attemptNumber: 2 });
    expect(retry).toMatchObject({ status: 'approved', processorReference: created.id });
    expect(sim.paymentIntentCount()).toBe(1);
    expect(sim.requestsTo('POST', '/v1/payment_intents').map((r) => r.idempotencyKey)).toEqual([`${input.processorIdempotencyKey}:create`, `${input.processorIdempotencyKey}:create`]);
  });

  it('a timeout after the hand-over: the retry finds the PaymentIntent already paid and charges nothing twice', async () => {
    const sim = new StripeSimulator();
    const input = paymentInput(2500);
    sim.inject('timeout_after', { path: `/v1/terminal/readers/${READER}/process_payment_intent` });
    expect((await connectorError(pos.createPayment(ctx(sim, posConfig()), input))).kind).toBe('timeout');
    const retry = await pos.createPayment(ctx(sim, posConfig()), { ...input, attemptNumber: 2 });
    expect(retry.status).toBe('approved');
    expect(sim.paymentIntentCount()).toBe(1);
    expect(sim.requestsTo('POST', `/v1/terminal/readers/${READER}/process_payment_intent`)).toHaveLength(1);
  });

  it('amount ending 53: 503 without a PaymentIntent; the retry creates exactly one', async () => {
    const sim = new StripeSimulator();
    const input = paymentInput(1053);
    const error = await connectorError(pos.createPayment(ctx(sim, posConfig()), input));
    expect(error).toMatchObject({ kind: 'unavailable', processorCode: 'api_error' });
    expect(sim.paymentIntentCount()).toBe(0);
    expect((await pos.createPayment(ctx(sim, posConfig()), { ...input, attemptNumber: 2 })).status).toBe('approved');
    expect(sim.paymentIntentCount()).toBe(1);
  });

  it('injected timeout before Stripe executes → timeout; the retry creates one PaymentIntent', async () => {
    const sim = new StripeSimulator();
    const input = paymentInput(2500);
    sim.inject('timeout');
    expect((await connectorError(pos.createPayment(ctx(sim, posConfig()), input))).kind).toBe('timeout');
    expect(sim.paymentIntentCount()).toBe(0);
    expect((await pos.createPayment(ctx(sim, posConfig()), { ...input, attemptNumber: 2 })).status).toBe('approved');
    expect(sim.paymentIntentCount()).toBe(1);
  });

  it.each([
    ['server_error', 'unavailable', 'api_error'],
    ['unavailable', 'unavailable', 'api_error'],
    ['rate_limited', 'unavailable', 'rate_limit'],
    ['network', 'unavailable', 'stripe_network_error'],
    ['idempotency_conflict', 'unavailable', 'idempotency_key_in_use'],
    ['invalid_key', 'configuration_invalid', 'invalid_request_error'],
    ['forbidden', 'configuration_invalid', 'secret_key_required'],
    ['decline', 'declined', 'insufficient_funds'],
  ] as const)('injected %s → %s (%s)', async (kind, expected, code) => {
    const sim = new StripeSimulator();
    sim.inject(kind);
    const error = await connectorError(pos.createPayment(ctx(sim, posConfig()), paymentInput(2500)));
    expect(error.kind).toBe(expected);
    expect(error.processorCode).toBe(code);
    expect(error.message).not.toMatch(/Stripe’s end|insufficient funds|Invalid API Key|sk_test/);
  });

  it('invalid credentials: the key Stripe rejects → configuration_invalid, its message and the key stay inside', async () => {
    const sim = new StripeSimulator();
    sim.rejectKey(SECRET_KEY);
    const error = await connectorError(pos.createPayment(ctx(sim, posConfig()), paymentInput(2500)));
    expect(error.kind).toBe('configuration_invalid');
    expect(JSON.stringify({ ...error, message: error.message })).not.toContain(SECRET_KEY.slice(0, 12));
  });

  it('refuses a live key in the test environment and a test key in live, before any request', async () => {
    const sim = new StripeSimulator();
    const live = { secret_key: `sk_live_${stripeId('k').slice(2)}`, webhook_secret: sim.webhookSecret };
    expect(await connectorError(pos.createPayment(ctx(sim, posConfig(), { credentials: live }), paymentInput(2500)))).toMatchObject({
      kind: 'configuration_invalid',
      processorCode: 'stripe_key_environment_mismatch',
    });
    expect((await connectorError(pos.getPayment(ctx(sim, posConfig(), { environment: 'live' }), { paymentId: 'pay_1', processorReference: 'pi_1', processorIdempotencyKey: 'k', amount: { minor: 1, currency: 'USD' } }))).kind).toBe(
      'configuration_invalid',
    );
    expect(sim.requests).toHaveLength(0);
  });

  it('without a reader_id the payment fails with configuration_invalid, before any request', async () => {
    const sim = new StripeSimulator();
    expect(await connectorError(pos.createPayment(ctx(sim, {}), paymentInput(2500)))).toMatchObject({ kind: 'configuration_invalid', processorCode: 'stripe_reader_missing' });
    expect(sim.requests).toHaveLength(0);
  });

  it('an offline reader → unavailable; once it is back, a retry hands the same PaymentIntent over', async () => {
    const sim = new StripeSimulator();
    sim.offlineReaders.add(READER);
    const input = paymentInput(2500);
    expect(await connectorError(pos.createPayment(ctx(sim, posConfig()), input))).toMatchObject({ kind: 'unavailable', processorCode: 'terminal_reader_offline' });
    sim.offlineReaders.delete(READER);
    const retry = await pos.createPayment(ctx(sim, posConfig()), { ...input, attemptNumber: 2 });
    expect(retry.status).toBe('approved');
    expect(sim.paymentIntentCount()).toBe(1);
  });

  it('an unknown reader → configuration_invalid', async () => {
    const sim = new StripeSimulator();
    // The simulator knows any well-formed tmr_ id; a malformed one it has never heard of is a 404.
    const error = await connectorError(pos.createPayment(ctx(sim, { reader_id: 'tmr_' }), paymentInput(2500)));
    expect(error.kind).toBe('configuration_invalid');
  });
});

// ---------------------------------------------------------------------------------------------------------
describe('Stripe QR adapter', () => {
  it('PromptPay (THB): pending with the QR data from next_action, unaltered', async () => {
    const sim = new StripeSimulator();
    const input = paymentInput(35_000, 'THB');
    const outcome = await qr.createPayment(ctx(sim, qrConfig({ billing_email: 'buyer@example.com' })), input);
    const pi = sim.paymentIntentFor(input.paymentId)!;
    expect(outcome).toEqual({ status: 'pending', processorReference: pi.id, action: { type: 'display_qr', qrData: pi.next_action!.promptpay_display_qr_code.data }, processorStatus: 'requires_action' });
    expect((outcome.action as { qrData: string }).qrData).toContain('SIM SHOP & CO=1+2%');
    const [create] = sim.requestsTo('POST', '/v1/payment_intents');
    expect(create!.params).toMatchObject({
      amount: '35000',
      currency: 'thb',
      payment_method_types: ['promptpay'],
      payment_method_data: { type: 'promptpay', billing_details: { email: 'buyer@example.com' } },
      confirm: 'true',
      metadata: { payment_id: input.paymentId, external_reference: input.externalReference },
    });
  });

  it('PayNow (SGD): pending with the QR data of paynow_display_qr_code', async () => {
    const sim = new StripeSimulator();
    const input = paymentInput(1_000, 'SGD');
    const outcome = await qr.createPayment(ctx(sim, qrConfig({ payment_method_type: 'paynow' })), input);
    const pi = sim.paymentIntentFor(input.paymentId)!;
    expect(outcome.action).toEqual({ type: 'display_qr', qrData: pi.next_action!.paynow_display_qr_code.data });
    expect(sim.requestsTo('POST', '/v1/payment_intents')[0]!.params.payment_method_data).toEqual({ type: 'paynow' });
  });

  it('a currency the QR method does not take → configuration_invalid, before any request', async () => {
    const sim = new StripeSimulator();
    expect((await connectorError(qr.createPayment(ctx(sim, qrConfig()), paymentInput(1000, 'SGD')))).processorCode).toBe('stripe_currency_not_supported_by_method');
    expect((await connectorError(qr.createPayment(ctx(sim, qrConfig({ payment_method_type: 'paynow' })), paymentInput(1000, 'THB')))).kind).toBe('configuration_invalid');
    expect(sim.requests).toHaveLength(0);
  });

  it('amount ending 51 → the usual pending answer; the decline arrives later', async () => {
    const sim = new StripeSimulator();
    const input = paymentInput(1051, 'THB');
    expect((await qr.createPayment(ctx(sim, qrConfig()), input)).status).toBe('pending');
    const pi = sim.paymentIntentFor(input.paymentId)!;
    sim.declineQr(pi.id);
    const later = await qr.getPayment(ctx(sim, qrConfig()), { paymentId: input.paymentId, processorReference: pi.id, processorIdempotencyKey: input.processorIdempotencyKey, amount: input.amount });
    expect(later).toMatchObject({ status: 'declined', action: { type: 'none' } });
  });

  it('amount ending 54: the confirmation fails → failed, with the PaymentIntent it created', async () => {
    const sim = new StripeSimulator();
    const input = paymentInput(1054, 'THB');
    const outcome = await qr.createPayment(ctx(sim, qrConfig()), input);
    expect(outcome).toMatchObject({ status: 'failed', processorReference: sim.paymentIntentFor(input.paymentId)!.id, action: { type: 'none' } });
  });

  it('amount ending 52: timeout, then the retry replays the same PaymentIntent and shows the same QR', async () => {
    const sim = new StripeSimulator();
    const input = paymentInput(1052, 'THB');
    expect((await connectorError(qr.createPayment(ctx(sim, qrConfig()), input))).kind).toBe('timeout');
    const pi = sim.paymentIntentFor(input.paymentId)!;
    const retry = await qr.createPayment(ctx(sim, qrConfig()), { ...input, attemptNumber: 2 });
    expect(retry).toMatchObject({ status: 'pending', processorReference: pi.id, action: { type: 'display_qr', qrData: pi.next_action!.promptpay_display_qr_code.data } });
    expect(sim.paymentIntentCount()).toBe(1);
  });

  it('a retry after the buyer paid says approved (a replayed answer is re-read)', async () => {
    const sim = new StripeSimulator();
    const input = paymentInput(1052, 'THB');
    await connectorError(qr.createPayment(ctx(sim, qrConfig()), input));
    sim.payQr(sim.paymentIntentFor(input.paymentId)!.id);
    expect((await qr.createPayment(ctx(sim, qrConfig()), { ...input, attemptNumber: 2 })).status).toBe('approved');
  });

  it('the same idempotency key with other parameters is refused by Stripe → configuration_invalid', async () => {
    const sim = new StripeSimulator();
    const input = paymentInput(1000, 'THB');
    await qr.createPayment(ctx(sim, qrConfig()), input);
    const error = await connectorError(qr.createPayment(ctx(sim, qrConfig()), { ...input, amount: { minor: 2000, currency: 'THB' } }));
    expect(error).toMatchObject({ kind: 'configuration_invalid', processorCode: 'idempotency_error' });
    expect(sim.paymentIntentCount()).toBe(1);
  });
});

// ---------------------------------------------------------------------------------------------------------
describe('Stripe lookups', () => {
  it('getPayment by reference, and by metadata search when the create never answered', async () => {
    const sim = new StripeSimulator();
    const input = paymentInput(1052);
    await connectorError(pos.createPayment(ctx(sim, posConfig()), input));
    const pi = sim.paymentIntentFor(input.paymentId)!;
    const lookup = { paymentId: input.paymentId, processorIdempotencyKey: input.processorIdempotencyKey, amount: input.amount };
    expect(await pos.getPayment(ctx(sim, posConfig()), { ...lookup, processorReference: null })).toMatchObject({ status: 'pending', processorReference: pi.id });
    const [search] = sim.requestsTo('GET', '/v1/payment_intents/search');
    expect(new URLSearchParams(search!.query).get('query')).toBe(`metadata['payment_id']:'${input.paymentId}'`);
    expect(await pos.getPayment(ctx(sim, posConfig()), { ...lookup, processorReference: pi.id })).toMatchObject({ status: 'pending', processorReference: pi.id });
  });

  it('getPayment of a payment Stripe never saw → not_found', async () => {
    const sim = new StripeSimulator();
    const lookup = { paymentId: 'pay_unknown', processorIdempotencyKey: 'pay_unknown', amount: { minor: 100, currency: 'USD' } };
    expect((await connectorError(pos.getPayment(ctx(sim, posConfig()), { ...lookup, processorReference: null }))).kind).toBe('not_found');
    expect((await connectorError(pos.getPayment(ctx(sim, posConfig()), { ...lookup, processorReference: 'pi_doesnotexist' }))).kind).toBe('not_found');
  });

  it('a lookup that hits 5xx or a timeout is unavailable or timeout, not not_found', async () => {
    const sim = new StripeSimulator();
    const lookup = { paymentId: 'pay_x', processorIdempotencyKey: 'pay_x', amount: { minor: 100, currency: 'USD' }, processorReference: 'pi_x' };
    sim.inject('unavailable');
    expect((await connectorError(pos.getPayment(ctx(sim, posConfig()), lookup))).kind).toBe('unavailable');
    sim.inject('timeout');
    expect((await connectorError(pos.getPayment(ctx(sim, posConfig()), lookup))).kind).toBe('timeout');
  });
});

// ---------------------------------------------------------------------------------------------------------
describe('Stripe cancellations', () => {
  const lookupOf = (input: CreatePaymentInput, reference: string | null, currentStatus: 'pending' | 'processing' | 'approved') => ({
    paymentId: input.paymentId,
    processorReference: reference,
    processorIdempotencyKey: `${input.processorIdempotencyKey}:cancel`,
    amount: input.amount,
    currentStatus,
  });

  it('a pending QR payment → canceled at Stripe', async () => {
    const sim = new StripeSimulator();
    const input = paymentInput(1000, 'THB');
    const created = await qr.createPayment(ctx(sim, qrConfig()), input);
    const outcome = await qr.cancelPayment(ctx(sim, qrConfig()), lookupOf(input, created.processorReference, 'pending'));
    expect(outcome).toMatchObject({ status: 'canceled', processorReference: created.processorReference, action: { type: 'none' } });
    expect(sim.paymentIntents.get(created.processorReference!)!.status).toBe('canceled');
    expect(sim.requestsTo('POST', `/v1/payment_intents/${created.processorReference}/cancel`)[0]!.idempotencyKey).toBe(`${input.processorIdempotencyKey}:cancel:cancel`);
  });

  it('a POS payment on the reader: the reader’s action is canceled first, then the PaymentIntent', async () => {
    const sim = new StripeSimulator({ readerMode: 'manual' });
    const input = paymentInput(2500);
    const created = await pos.createPayment(ctx(sim, posConfig()), input);
    const outcome = await pos.cancelPayment(ctx(sim, posConfig()), lookupOf(input, created.processorReference, 'pending'));
    expect(outcome.status).toBe('canceled');
    expect(sim.readers.get(READER)!.action).toMatchObject({ status: 'failed', failure_code: 'canceled' });
    expect(sim.requestsTo('POST', `/v1/terminal/readers/${READER}/cancel_action`)).toHaveLength(1);
  });

  it('a void of an approved (succeeded) payment refunds it in full and answers canceled; a repeat refunds nothing more', async () => {
    const sim = new StripeSimulator();
    const input = paymentInput(2500);
    const created = await pos.createPayment(ctx(sim, posConfig()), input);
    const outcome = await pos.cancelPayment(ctx(sim, posConfig()), lookupOf(input, created.processorReference, 'approved'));
    expect(outcome).toMatchObject({ status: 'canceled', processorReference: created.processorReference });
    const refunds = [...sim.refunds.values()];
    expect(refunds).toHaveLength(1);
    expect(refunds[0]).toMatchObject({ amount: 2500, status: 'succeeded', payment_intent: created.processorReference });
    expect(sim.requestsTo('POST', '/v1/refunds')[0]!.idempotencyKey).toBe(`${input.processorIdempotencyKey}:cancel:void`);
    // The same cancel again (a retry) replays the refund instead of making another.
    expect((await pos.cancelPayment(ctx(sim, posConfig()), lookupOf(input, created.processorReference, 'approved'))).status).toBe('canceled');
    expect(sim.refunds.size).toBe(1);
  });

  it('a void whose refund is still pending is retryable (unavailable), and canceled once it succeeds', async () => {
    const sim = new StripeSimulator({ refundMode: 'pending' });
    const input = paymentInput(2500);
    const created = await pos.createPayment(ctx(sim, posConfig()), input);
    expect(await connectorError(pos.cancelPayment(ctx(sim, posConfig()), lookupOf(input, created.processorReference, 'approved')))).toMatchObject({ kind: 'unavailable', processorCode: 'refund_pending' });
    sim.settleRefund([...sim.refunds.keys()][0]!, 'succeeded');
    expect((await pos.cancelPayment(ctx(sim, posConfig()), lookupOf(input, created.processorReference, 'approved'))).status).toBe('canceled');
    expect(sim.refunds.size).toBe(1);
  });

  it('a payment that succeeded at Stripe while we thought it pending: the cancel is refused (declined), nothing refunded', async () => {
    const sim = new StripeSimulator();
    const input = paymentInput(2500);
    const created = await pos.createPayment(ctx(sim, posConfig()), input);
    expect(await connectorError(pos.cancelPayment(ctx(sim, posConfig()), lookupOf(input, created.processorReference, 'pending')))).toMatchObject({ kind: 'declined', processorCode: 'payment_intent_unexpected_state' });
    expect(sim.refunds.size).toBe(0);
  });

  it('an already canceled PaymentIntent → canceled; a payment Stripe never saw → canceled with no reference', async () => {
    const sim = new StripeSimulator();
    const input = paymentInput(1000, 'THB');
    const created = await qr.createPayment(ctx(sim, qrConfig()), input);
    await qr.cancelPayment(ctx(sim, qrConfig()), lookupOf(input, created.processorReference, 'pending'));
    expect((await qr.cancelPayment(ctx(sim, qrConfig()), { ...lookupOf(input, created.processorReference, 'pending'), processorIdempotencyKey: 'other:cancel' })).status).toBe('canceled');
    const never = paymentInput(1000, 'THB');
    expect(await qr.cancelPayment(ctx(sim, qrConfig()), lookupOf(never, null, 'pending'))).toMatchObject({ status: 'canceled', processorReference: null });
  });

  it('a cancel Stripe cannot reach → unavailable; the payment is untouched', async () => {
    const sim = new StripeSimulator();
    const input = paymentInput(1000, 'THB');
    const created = await qr.createPayment(ctx(sim, qrConfig()), input);
    sim.inject('server_error', { method: 'POST' });
    expect((await connectorError(qr.cancelPayment(ctx(sim, qrConfig()), lookupOf(input, created.processorReference, 'pending')))).kind).toBe('unavailable');
    expect(sim.paymentIntents.get(created.processorReference!)!.status).toBe('requires_action');
  });
});

// ---------------------------------------------------------------------------------------------------------
describe('Stripe refunds', () => {
  async function approved(sim: StripeSimulator, minor = 10_000) {
    const input = paymentInput(minor);
    const outcome = await pos.createPayment(ctx(sim, posConfig()), input);
    return outcome.processorReference!;
  }
  const refundInput = (pi: string, minor: number, refundId = `ref_${crypto.randomUUID()}`) => ({
    refundId,
    processorIdempotencyKey: refundId,
    attemptNumber: 1,
    paymentProcessorReference: pi,
    amount: { minor, currency: 'USD' },
    reason: 'Customer changed their mind',
  });

  it('partial, then the rest: both approved; Stripe holds both', async () => {
    const sim = new StripeSimulator();
    const pi = await approved(sim);
    const first = refundInput(pi, 2_500);
    const a = await pos.refundPayment(ctx(sim, posConfig()), first);
    expect(a).toMatchObject({ status: 'approved', processorStatus: 'succeeded' });
    expect(a.processorReference).toMatch(/^re_/);
    const [req] = sim.requestsTo('POST', '/v1/refunds');
    expect(req!.idempotencyKey).toBe(`${first.processorIdempotencyKey}:refund`);
    expect(req!.params).toEqual({ payment_intent: pi, amount: '2500', metadata: { refund_id: first.refundId, reason: 'Customer changed their mind' } });
    const b = await pos.refundPayment(ctx(sim, posConfig()), refundInput(pi, 7_500));
    expect(b.status).toBe('approved');
    expect([...sim.refunds.values()].map((r) => r.amount)).toEqual([2_500, 7_500]);
  });

  it('a refund beyond what is left is refused by Stripe → declined (amount_too_large)', async () => {
    const sim = new StripeSimulator();
    const pi = await approved(sim);
    expect(await connectorError(pos.refundPayment(ctx(sim, posConfig()), refundInput(pi, 10_001)))).toMatchObject({ kind: 'declined', processorCode: 'amount_too_large' });
  });

  it('a refund ending 61 fails at Stripe with failure_reason declined → declined', async () => {
    const sim = new StripeSimulator();
    const pi = await approved(sim);
    expect((await pos.refundPayment(ctx(sim, posConfig()), refundInput(pi, 1_061))).status).toBe('declined');
  });

  it('a pending refund → pending; getRefund reads it approved once it settles', async () => {
    const sim = new StripeSimulator({ refundMode: 'pending' });
    const pi = await approved(sim);
    const input = refundInput(pi, 1_000);
    const outcome = await pos.refundPayment(ctx(sim, posConfig()), input);
    expect(outcome.status).toBe('pending');
    sim.settleRefund(outcome.processorReference!, 'succeeded');
    const lookup = { refundId: input.refundId, amount: input.amount, processorIdempotencyKey: input.processorIdempotencyKey, paymentProcessorReference: pi };
    expect(await pos.getRefund(ctx(sim, posConfig()), { ...lookup, processorReference: outcome.processorReference })).toMatchObject({ status: 'approved', processorReference: outcome.processorReference });
  });

  it('a refund whose answer was lost: the retry replays the same refund; getRefund finds it without a reference', async () => {
    const sim = new StripeSimulator();
    const pi = await approved(sim);
    const input = refundInput(pi, 1_000);
    sim.inject('timeout_after', { path: '/v1/refunds' });
    expect((await connectorError(pos.refundPayment(ctx(sim, posConfig()), input))).kind).toBe('timeout');
    const lookup = { refundId: input.refundId, amount: input.amount, processorIdempotencyKey: input.processorIdempotencyKey, paymentProcessorReference: pi, processorReference: null };
    const found = await pos.getRefund(ctx(sim, posConfig()), lookup);
    expect(found.status).toBe('approved');
    const retry = await pos.refundPayment(ctx(sim, posConfig()), { ...input, attemptNumber: 2 });
    expect(retry).toMatchObject({ status: 'approved', processorReference: found.processorReference });
    expect(sim.refunds.size).toBe(1);
  });

  it('getRefund of a refund Stripe never saw → not_found', async () => {
    const sim = new StripeSimulator();
    const pi = await approved(sim);
    const lookup = { refundId: 'ref_unknown', amount: { minor: 100, currency: 'USD' }, processorIdempotencyKey: 'ref_unknown', paymentProcessorReference: pi };
    expect((await connectorError(pos.getRefund(ctx(sim, posConfig()), { ...lookup, processorReference: null }))).kind).toBe('not_found');
    expect((await connectorError(pos.getRefund(ctx(sim, posConfig()), { ...lookup, processorReference: 're_unknown' }))).kind).toBe('not_found');
    expect((await connectorError(pos.getRefund(ctx(sim, posConfig()), { ...lookup, paymentProcessorReference: '', processorReference: null }))).kind).toBe('not_found');
  });

  it('a refund Stripe cannot reach → unavailable', async () => {
    const sim = new StripeSimulator();
    const pi = await approved(sim);
    sim.inject('unavailable', { path: '/v1/refunds' });
    expect((await connectorError(pos.refundPayment(ctx(sim, posConfig()), refundInput(pi, 1_000)))).kind).toBe('unavailable');
    expect(sim.refunds.size).toBe(0);
  });
});

// ---------------------------------------------------------------------------------------------------------
describe('Stripe notifications', () => {
  async function paidQr(sim: StripeSimulator) {
    const input = paymentInput(1000, 'THB');
    const outcome = await qr.createPayment(ctx(sim, qrConfig()), input);
    sim.payQr(outcome.processorReference!);
    return sim.eventFor('payment_intent.succeeded', outcome.processorReference!);
  }
  const parse = (sim: StripeSimulator, delivery: { rawBody: string; headers: Record<string, string> }, context = ctx(sim, qrConfig())) =>
    qr.parseNotification(context, { headers: new Headers(delivery.headers), rawBody: delivery.rawBody, url: 'https://payments.example.com/v1/processor-notifications/x' });

  it('a correctly signed event is trusted news with the status from the tables', async () => {
    const sim = new StripeSimulator();
    const event = await paidQr(sim);
    expect(await parse(sim, await sim.deliver(event))).toEqual({ eventId: event.id, resource: 'payment', processorReference: event.data.object.id, status: 'approved', trusted: true });
  });

  it('a duplicated delivery parses to the same event id (the core keeps one)', async () => {
    const sim = new StripeSimulator();
    const event = await paidQr(sim);
    const delivery = await sim.deliver(event);
    const [a, b] = [await parse(sim, delivery), await parse(sim, delivery)];
    expect(a).toEqual(b);
    // A redelivery is signed anew (a new t) and still carries the same event id.
    expect((await parse(sim, await sim.deliver(event))).eventId).toBe(event.id);
  });

  it('a late event (requires_action after the payment succeeded) still parses, as pending: the core refuses to go back', async () => {
    const sim = new StripeSimulator();
    const event = await paidQr(sim);
    const early = sim.eventFor('payment_intent.requires_action', event.data.object.id);
    expect((await parse(sim, await sim.deliver(early))).status).toBe('pending');
  });

  it('accepts any matching v1 among several (a rolled secret)', async () => {
    const sim = new StripeSimulator();
    const event = await paidQr(sim);
    const rawBody = JSON.stringify(event);
    const header = await sim.signatureHeader(rawBody, { extraSignatures: ['0'.repeat(64), 'f'.repeat(64)] });
    expect((await parse(sim, { rawBody, headers: { 'Stripe-Signature': header } })).status).toBe('approved');
  });

  const refusals: [string, (sim: StripeSimulator, event: Awaited<ReturnType<typeof paidQr>>) => Promise<{ rawBody: string; headers: Record<string, string> }>, string][] = [
    ['forged (signed with another secret)', (sim, e) => sim.deliver(e, { secret: `whsec_${stripeId('f', 32).slice(2)}` }), 'stripe_signature_mismatch'],
    ['tampered after signing', (sim, e) => sim.deliver(e, { tamper: (raw) => raw.replace('"succeeded"', '"canceled"') }), 'stripe_signature_mismatch'],
    ['stale (t more than 300 s old)', (sim, e) => sim.deliver(e, { timestamp: Math.floor(Date.now() / 1000) - 301 }), 'stripe_signature_stale'],
    ['from the future (t more than 300 s ahead)', (sim, e) => sim.deliver(e, { timestamp: Math.floor(Date.now() / 1000) + 301 }), 'stripe_signature_stale'],
    ['without Stripe-Signature', async (sim, e) => ({ rawBody: JSON.stringify(e), headers: {} }), 'stripe_signature_missing'],
    ['with a garbled Stripe-Signature', async (sim, e) => ({ rawBody: JSON.stringify(e), headers: { 'Stripe-Signature': 'v1=nothex,t=now' } }), 'stripe_signature_missing'],
    ['with only a v0 signature', async (sim, e) => ({ rawBody: JSON.stringify(e), headers: { 'Stripe-Signature': `t=${Math.floor(Date.now() / 1000)},v0=${'a'.repeat(64)}` } }), 'stripe_signature_missing'],
    [
      'signed but not an event',
      async (sim) => {
        const rawBody = JSON.stringify({ hello: 'world' });
        return { rawBody, headers: { 'Stripe-Signature': await sim.signatureHeader(rawBody) } };
      },
      'stripe_event_unreadable',
    ],
    [
      'signed but not JSON',
      async (sim) => ({ rawBody: 'not json', headers: { 'Stripe-Signature': await sim.signatureHeader('not json') } }),
      'stripe_event_unreadable',
    ],
    ['a livemode event in the test environment', (sim, e) => sim.deliver({ ...e, livemode: true }), 'stripe_event_livemode_mismatch'],
  ];

  it.each(refusals)('refuses one %s (invalid_notification)', async (_, make, code) => {
    const sim = new StripeSimulator();
    const event = await paidQr(sim);
    const error = await connectorError(parse(sim, await make(sim, event)));
    expect(error).toMatchObject({ kind: 'invalid_notification', processorCode: code });
  });

  it('refuses a correctly signed event when the method holds another webhook secret', async () => {
    const sim = new StripeSimulator();
    const event = await paidQr(sim);
    const other = ctx(sim, qrConfig(), { credentials: { secret_key: SECRET_KEY, webhook_secret: `whsec_${stripeId('o', 32).slice(2)}` } });
    expect((await connectorError(parse(sim, await sim.deliver(event), other))).kind).toBe('invalid_notification');
  });

  it('refund events are refund news; unknown event types carry no status', async () => {
    const sim = new StripeSimulator({ refundMode: 'pending' });
    const pi = (await pos.createPayment(ctx(sim, posConfig()), paymentInput(5_000))).processorReference!;
    const refund = await pos.refundPayment(ctx(sim, posConfig()), { refundId: 'ref_1', processorIdempotencyKey: 'ref_1', attemptNumber: 1, paymentProcessorReference: pi, amount: { minor: 5_000, currency: 'USD' } });
    sim.settleRefund(refund.processorReference!, 'succeeded');
    const updated = sim.eventFor('charge.refund.updated', refund.processorReference!);
    expect(await parse(sim, await sim.deliver(updated))).toMatchObject({ resource: 'refund', processorReference: refund.processorReference, status: 'approved', trusted: true });
    const odd = sim.makeEvent('payment_intent.partially_funded_v2', { id: pi, object: 'payment_intent', status: 'something_new' });
    expect(await parse(sim, await sim.deliver(odd))).toMatchObject({ resource: 'payment', processorReference: pi, status: 'pending' });
    const unknown = sim.makeEvent('terminal.reader.action_succeeded', sim.readers.get(READER)!);
    expect(await parse(sim, await sim.deliver(unknown))).toMatchObject({ resource: 'payment', processorReference: pi, status: null });
  });
});
