// The official library at test time: its verifier is the oracle for ours.
import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { STRIPE_API_VERSION, stripePosV1, stripeQrV1 } from '../../src/connectors/stripe/index.ts';
import { StripeDispute } from '../../src/connectors/stripe/sdk.ts';
import { encodeForm, REFUND_STATUS_MAP } from '../../src/connectors/stripe/transformers.ts';
import type { ConnectorErrorKind, CreatePaymentInput, ProcessorPaymentStatus } from '../../src/connectors/types.ts';
import { connectorError } from '../helpers/connectors.ts';
import {
  ERROR_TYPE_KINDS,
  posConfig,
  qrConfig,
  READER,
  SECRET_KEY,
  stripeCtx,
  stripeLookup,
  stripePayment,
} from '../helpers/stripe.ts';
import { StripeSimulator, stripeId } from '../simulators/stripe.ts';

/** The Stripe adapter against the Stripe simulator (injected as ctx.fetch). The pure transformers: stripe-transformers.test.ts. */

const pos = stripePosV1.adapter;
const qr = stripeQrV1.adapter;

// ---------------------------------------------------------------------------------------------------------
describe('Stripe versions', () => {
  it('publishes a POS and a QR version with payments, refunds and cancellations', () => {
    expect(stripePosV1).toMatchObject({
      id: 'cnv_stripe_pos_v1',
      provider: 'stripe',
      type: 'pos',
      status: 'published',
      currencies: ['USD', 'EUR', 'SGD'],
    });
    expect(stripeQrV1).toMatchObject({
      id: 'cnv_stripe_qr_v1',
      provider: 'stripe',
      type: 'qr',
      status: 'published',
      currencies: ['THB', 'SGD'],
    });
    for (const v of [stripePosV1, stripeQrV1]) expect(v.capabilities).toEqual(['payments', 'refunds', 'cancellations']);
  });

  it('credentials: a secret or restricted key and a webhook secret, nothing else', () => {
    const schema = stripePosV1.credentialsSchema;
    for (const secret_key of [
      'sk_test_abcdefgh123',
      'sk_live_abcdefgh123',
      'rk_test_abcdefgh123',
      'rk_live_abcdefgh123',
    ]) {
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
describe('Stripe POS adapter', () => {
  it('approves: creates a card-present PaymentIntent, hands it to the reader, reads the outcome', async () => {
    const sim = new StripeSimulator();
    const input = stripePayment(2500);
    const outcome = await pos.createPayment(stripeCtx(sim, posConfig()), input);
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
    // Tipping is skipped: the amount approved must be the amount asked.
    expect(process!.params).toEqual({
      payment_intent: outcome.processorReference,
      process_config: { skip_tipping: 'true' },
    });
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
    await pos.createPayment(stripeCtx(sim, posConfig(), { fetch: spying }), stripePayment(2500));
    expect(seen.length).toBeGreaterThanOrEqual(3);
    for (const request of seen) {
      expect(request.url.startsWith('https://api.stripe.com/v1/')).toBe(true);
      expect(request.signal).toBeInstanceOf(AbortSignal);
      expect(request.signal!.aborted).toBe(false);
    }
  });

  it('a reader still waiting for the card → pending at the terminal, not approved; the outcome comes with the card', async () => {
    const sim = new StripeSimulator({ readerMode: 'manual' });
    const input = stripePayment(2500);
    const outcome = await pos.createPayment(stripeCtx(sim, posConfig()), input);
    expect(outcome).toMatchObject({
      status: 'pending',
      processorStatus: 'requires_payment_method',
      action: { type: 'at_terminal' },
    });
    sim.presentCard(READER);
    const later = await pos.getPayment(stripeCtx(sim, posConfig()), {
      paymentId: input.paymentId,
      processorReference: outcome.processorReference,
      processorIdempotencyKey: input.processorIdempotencyKey,
      amount: input.amount,
    });
    expect(later.status).toBe('approved');
  });

  it('a retry while the reader still holds the PaymentIntent does not hand it over again', async () => {
    const sim = new StripeSimulator({ readerMode: 'manual' });
    const input = stripePayment(2500);
    await pos.createPayment(stripeCtx(sim, posConfig()), input);
    const again = await pos.createPayment(stripeCtx(sim, posConfig()), { ...input, attemptNumber: 2 });
    expect(again.status).toBe('pending');
    expect(sim.requestsTo('POST', `/v1/terminal/readers/${READER}/process_payment_intent`)).toHaveLength(1);
    expect(sim.paymentIntentCount()).toBe(1);
  });

  it('amount ending 51 → declined at the reader, with the decline code', async () => {
    const sim = new StripeSimulator();
    const outcome = await pos.createPayment(stripeCtx(sim, posConfig()), stripePayment(1051));
    expect(outcome).toMatchObject({
      status: 'declined',
      declineCode: 'generic_decline',
      processorStatus: 'requires_payment_method',
    });
    expect(outcome.processorReference).toMatch(/^pi_/);
  });

  it('amount ending 54 → failed', async () => {
    const sim = new StripeSimulator();
    expect((await pos.createPayment(stripeCtx(sim, posConfig()), stripePayment(1054))).status).toBe('failed');
  });

  it('amount ending 52: the answer is lost (timeout); a retry with the same key resumes the same PaymentIntent', async () => {
    const sim = new StripeSimulator();
    const input = stripePayment(1052);
    const error = await connectorError(pos.createPayment(stripeCtx(sim, posConfig()), input));
    expect(error.kind).toBe('timeout');
    expect(sim.paymentIntentCount()).toBe(1);
    const created = sim.paymentIntentFor(input.paymentId)!;

    const retry = await pos.createPayment(stripeCtx(sim, posConfig()), { ...input, attemptNumber: 2 });
    expect(retry).toMatchObject({ status: 'approved', processorReference: created.id });
    expect(sim.paymentIntentCount()).toBe(1);
    expect(sim.requestsTo('POST', '/v1/payment_intents').map((r) => r.idempotencyKey)).toEqual([
      `${input.processorIdempotencyKey}:create`,
      `${input.processorIdempotencyKey}:create`,
    ]);
  });

  it('a timeout after the hand-over: the retry finds the PaymentIntent already paid and charges nothing twice', async () => {
    const sim = new StripeSimulator();
    const input = stripePayment(2500);
    sim.inject('timeout_after', { path: `/v1/terminal/readers/${READER}/process_payment_intent` });
    expect((await connectorError(pos.createPayment(stripeCtx(sim, posConfig()), input))).kind).toBe('timeout');
    const retry = await pos.createPayment(stripeCtx(sim, posConfig()), { ...input, attemptNumber: 2 });
    expect(retry.status).toBe('approved');
    expect(sim.paymentIntentCount()).toBe(1);
    expect(sim.requestsTo('POST', `/v1/terminal/readers/${READER}/process_payment_intent`)).toHaveLength(1);
  });

  it('amount ending 53: 503 without a PaymentIntent; the retry creates exactly one', async () => {
    const sim = new StripeSimulator();
    const input = stripePayment(1053);
    const error = await connectorError(pos.createPayment(stripeCtx(sim, posConfig()), input));
    expect(error).toMatchObject({ kind: 'unavailable', processorCode: 'api_error' });
    expect(sim.paymentIntentCount()).toBe(0);
    expect((await pos.createPayment(stripeCtx(sim, posConfig()), { ...input, attemptNumber: 2 })).status).toBe(
      'approved',
    );
    expect(sim.paymentIntentCount()).toBe(1);
  });

  it('injected timeout before Stripe executes → timeout; the retry creates one PaymentIntent', async () => {
    const sim = new StripeSimulator();
    const input = stripePayment(2500);
    sim.inject('timeout');
    expect((await connectorError(pos.createPayment(stripeCtx(sim, posConfig()), input))).kind).toBe('timeout');
    expect(sim.paymentIntentCount()).toBe(0);
    expect((await pos.createPayment(stripeCtx(sim, posConfig()), { ...input, attemptNumber: 2 })).status).toBe(
      'approved',
    );
    expect(sim.paymentIntentCount()).toBe(1);
  });

  it('invalid credentials: the key Stripe rejects → configuration_invalid, its message and the key stay inside', async () => {
    const sim = new StripeSimulator();
    sim.rejectKey(SECRET_KEY);
    const error = await connectorError(pos.createPayment(stripeCtx(sim, posConfig()), stripePayment(2500)));
    expect(error.kind).toBe('configuration_invalid');
    expect(JSON.stringify({ ...error, message: error.message })).not.toContain(SECRET_KEY.slice(0, 12));
  });

  it('refuses a live key in the test environment and a test key in live, before any request', async () => {
    const sim = new StripeSimulator();
    const live = { secret_key: `sk_live_${stripeId('k').slice(2)}`, webhook_secret: sim.webhookSecret };
    expect(
      await connectorError(pos.createPayment(stripeCtx(sim, posConfig(), { credentials: live }), stripePayment(2500))),
    ).toMatchObject({
      kind: 'configuration_invalid',
      processorCode: 'stripe_key_environment_mismatch',
    });
    expect(
      (
        await connectorError(
          pos.getPayment(stripeCtx(sim, posConfig(), { environment: 'live' }), {
            paymentId: 'pay_1',
            processorReference: 'pi_1',
            processorIdempotencyKey: 'k',
            amount: { minor: 1, currency: 'USD' },
          }),
        )
      ).kind,
    ).toBe('configuration_invalid');
    expect(sim.requests).toHaveLength(0);
  });

  it('without a reader_id the payment fails with configuration_invalid, before any request', async () => {
    const sim = new StripeSimulator();
    expect(await connectorError(pos.createPayment(stripeCtx(sim, {}), stripePayment(2500)))).toMatchObject({
      kind: 'configuration_invalid',
      processorCode: 'stripe_reader_missing',
    });
    expect(sim.requests).toHaveLength(0);
  });

  it('an offline reader → unavailable; once it is back, a retry hands the same PaymentIntent over', async () => {
    const sim = new StripeSimulator();
    sim.offlineReaders.add(READER);
    const input = stripePayment(2500);
    expect(await connectorError(pos.createPayment(stripeCtx(sim, posConfig()), input))).toMatchObject({
      kind: 'unavailable',
      processorCode: 'terminal_reader_offline',
    });
    sim.offlineReaders.delete(READER);
    const retry = await pos.createPayment(stripeCtx(sim, posConfig()), { ...input, attemptNumber: 2 });
    expect(retry.status).toBe('approved');
    expect(sim.paymentIntentCount()).toBe(1);
  });

  it('an unknown reader → configuration_invalid', async () => {
    const sim = new StripeSimulator();
    // The simulator knows any well-formed tmr_ id; a malformed one it has never heard of is a 404.
    const error = await connectorError(pos.createPayment(stripeCtx(sim, { reader_id: 'tmr_' }), stripePayment(2500)));
    expect(error.kind).toBe('configuration_invalid');
  });
});

// ---------------------------------------------------------------------------------------------------------
describe('Stripe QR adapter', () => {
  it('PromptPay (THB): pending with the QR data from next_action, unaltered', async () => {
    const sim = new StripeSimulator();
    const input = stripePayment(35_000, 'THB');
    const outcome = await qr.createPayment(stripeCtx(sim, qrConfig({ billing_email: 'buyer@example.com' })), input);
    const pi = sim.paymentIntentFor(input.paymentId)!;
    expect(outcome).toEqual({
      status: 'pending',
      processorReference: pi.id,
      action: { type: 'display_qr', qrData: pi.next_action!.promptpay_display_qr_code!.data },
      processorStatus: 'requires_action',
    });
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
    const input = stripePayment(1_000, 'SGD');
    const outcome = await qr.createPayment(stripeCtx(sim, qrConfig({ payment_method_type: 'paynow' })), input);
    const pi = sim.paymentIntentFor(input.paymentId)!;
    expect(outcome.action).toEqual({ type: 'display_qr', qrData: pi.next_action!.paynow_display_qr_code!.data });
    expect(sim.requestsTo('POST', '/v1/payment_intents')[0]!.params.payment_method_data).toEqual({ type: 'paynow' });
  });

  it('a currency the QR method does not take → configuration_invalid, before any request', async () => {
    const sim = new StripeSimulator();
    expect(
      (await connectorError(qr.createPayment(stripeCtx(sim, qrConfig()), stripePayment(1000, 'SGD')))).processorCode,
    ).toBe('stripe_currency_not_supported_by_method');
    expect(
      (
        await connectorError(
          qr.createPayment(stripeCtx(sim, qrConfig({ payment_method_type: 'paynow' })), stripePayment(1000, 'THB')),
        )
      ).kind,
    ).toBe('configuration_invalid');
    expect(sim.requests).toHaveLength(0);
  });

  it('amount ending 51 → the usual pending answer; the decline arrives later', async () => {
    const sim = new StripeSimulator();
    const input = stripePayment(1051, 'THB');
    expect((await qr.createPayment(stripeCtx(sim, qrConfig()), input)).status).toBe('pending');
    const pi = sim.paymentIntentFor(input.paymentId)!;
    sim.declineQr(pi.id);
    const later = await qr.getPayment(stripeCtx(sim, qrConfig()), {
      paymentId: input.paymentId,
      processorReference: pi.id,
      processorIdempotencyKey: input.processorIdempotencyKey,
      amount: input.amount,
    });
    expect(later).toMatchObject({ status: 'declined', action: { type: 'none' } });
  });

  it('amount ending 54: the confirmation fails → failed, with the PaymentIntent it created', async () => {
    const sim = new StripeSimulator();
    const input = stripePayment(1054, 'THB');
    const outcome = await qr.createPayment(stripeCtx(sim, qrConfig()), input);
    expect(outcome).toMatchObject({
      status: 'failed',
      processorReference: sim.paymentIntentFor(input.paymentId)!.id,
      action: { type: 'none' },
    });
  });

  it('amount ending 52: timeout, then the retry replays the same PaymentIntent and shows the same QR', async () => {
    const sim = new StripeSimulator();
    const input = stripePayment(1052, 'THB');
    expect((await connectorError(qr.createPayment(stripeCtx(sim, qrConfig()), input))).kind).toBe('timeout');
    const pi = sim.paymentIntentFor(input.paymentId)!;
    const retry = await qr.createPayment(stripeCtx(sim, qrConfig()), { ...input, attemptNumber: 2 });
    expect(retry).toMatchObject({
      status: 'pending',
      processorReference: pi.id,
      action: { type: 'display_qr', qrData: pi.next_action!.promptpay_display_qr_code!.data },
    });
    expect(sim.paymentIntentCount()).toBe(1);
  });

  it('a retry after the buyer paid says approved (a replayed answer is re-read)', async () => {
    const sim = new StripeSimulator();
    const input = stripePayment(1052, 'THB');
    await connectorError(qr.createPayment(stripeCtx(sim, qrConfig()), input));
    sim.payQr(sim.paymentIntentFor(input.paymentId)!.id);
    expect((await qr.createPayment(stripeCtx(sim, qrConfig()), { ...input, attemptNumber: 2 })).status).toBe(
      'approved',
    );
  });

  it('the same idempotency key with other parameters (400 idempotency_error) → timeout, not a failure: a request with that key ran, and the lookup finds it', async () => {
    const sim = new StripeSimulator();
    const input = stripePayment(1000, 'THB');
    const first = await qr.createPayment(stripeCtx(sim, qrConfig()), input);
    const changed = { ...input, description: 'Three coffees' };
    const error = await connectorError(qr.createPayment(stripeCtx(sim, qrConfig()), changed));
    expect(error).toMatchObject({ kind: 'timeout', processorCode: 'idempotency_error' });
    expect(sim.paymentIntentCount()).toBe(1);
    // What reconciliation then does: the PaymentIntent the first request made, by its metadata.
    expect(await qr.getPayment(stripeCtx(sim, qrConfig()), stripeLookup(changed, null))).toMatchObject({
      status: 'pending',
      processorReference: first.processorReference,
    });
  });
});

// ---------------------------------------------------------------------------------------------------------
// Every status and error the SDK enumerates, produced by the simulator and read through the adapter.

describe('Stripe: every PaymentIntent, Refund and reader-action status, through the adapter', () => {
  const expected: Record<Stripe.PaymentIntent.Status, { status: ProcessorPaymentStatus; processorStatus: string }> = {
    requires_payment_method: { status: 'pending', processorStatus: 'requires_payment_method' },
    requires_confirmation: { status: 'pending', processorStatus: 'requires_confirmation' },
    requires_action: { status: 'pending', processorStatus: 'requires_action' },
    processing: { status: 'processing', processorStatus: 'processing' },
    // Authorized: the lookup captures it, so it is reported once the money is taken.
    requires_capture: { status: 'approved', processorStatus: 'succeeded' },
    succeeded: { status: 'approved', processorStatus: 'succeeded' },
    canceled: { status: 'canceled', processorStatus: 'canceled' },
  };

  it.each(Object.entries(expected) as [Stripe.PaymentIntent.Status, (typeof expected)[Stripe.PaymentIntent.Status]][])(
    'a PaymentIntent in %s → %o',
    async (status, outcome) => {
      const sim = new StripeSimulator({ readerMode: 'manual' });
      const input = stripePayment(2500);
      const created = await pos.createPayment(stripeCtx(sim, posConfig()), input);
      // The reader is let go first, so only the PaymentIntent speaks.
      sim.readers.get(READER)!.action = null;
      sim.setPaymentIntentStatus(created.processorReference!, status);
      expect(
        await pos.getPayment(stripeCtx(sim, posConfig()), stripeLookup(input, created.processorReference)),
      ).toMatchObject(outcome);
      const captures = sim.requestsTo('POST', `/v1/payment_intents/${created.processorReference}/capture`);
      expect(captures.map((r) => r.idempotencyKey)).toEqual(
        status === 'requires_capture' ? [`${input.processorIdempotencyKey}:capture`] : [],
      );
    },
  );

  it.each(['pending', 'requires_action', 'succeeded', 'failed', 'canceled'] as const)(
    'a Refund in %s → the table’s status through getRefund',
    async (status) => {
      const sim = new StripeSimulator({ refundMode: 'pending' });
      const pi = (await pos.createPayment(stripeCtx(sim, posConfig()), stripePayment(5_000))).processorReference!;
      const refund = await pos.refundPayment(stripeCtx(sim, posConfig()), {
        refundId: 'ref_1',
        processorIdempotencyKey: 'ref_1',
        attemptNumber: 1,
        paymentProcessorReference: pi,
        amount: { minor: 5_000, currency: 'USD' },
      });
      sim.settleRefund(refund.processorReference!, status);
      const read = await pos.getRefund(stripeCtx(sim, posConfig()), {
        refundId: 'ref_1',
        amount: { minor: 5_000, currency: 'USD' },
        processorReference: null,
        processorIdempotencyKey: 'ref_1',
        paymentProcessorReference: pi,
      });
      expect(read).toEqual({
        status: REFUND_STATUS_MAP[status],
        processorReference: refund.processorReference,
        processorStatus: status,
        // What left the balance, once it did; why it failed, once it did (canceled is a failure at Stripe).
        ...(status === 'succeeded'
          ? {
              settlement: {
                fee: { minor: 0, currency: 'USD' },
                net: { minor: -5_000, currency: 'USD' },
                availableOn: expect.any(Number),
              },
            }
          : {}),
        ...(status === 'failed' || status === 'canceled' ? { failureReason: 'unknown' } : {}),
      });
    },
  );

  it('reader actions: in_progress → pending; succeeded → the PaymentIntent’s status; failed with no error on the PaymentIntent (the customer canceled) → failed', async () => {
    const sim = new StripeSimulator({ readerMode: 'manual' });
    const input = stripePayment(2500);
    const created = await pos.createPayment(stripeCtx(sim, posConfig()), input);
    expect(sim.readers.get(READER)!.action).toMatchObject({ status: 'in_progress' });
    expect(created).toMatchObject({ status: 'pending', processorStatus: 'requires_payment_method' });
    sim.presentCard(READER, 'customer_cancel');
    expect(sim.paymentIntents.get(created.processorReference!)).toMatchObject({
      status: 'requires_payment_method',
      last_payment_error: null,
    });
    const read = await pos.getPayment(stripeCtx(sim, posConfig()), stripeLookup(input, created.processorReference));
    expect(read).toMatchObject({ status: 'failed', processorStatus: 'reader_action_failed:customer_canceled' });
    // A retry of the same payment does not hand the PaymentIntent over again: that attempt is over.
    const retry = await pos.createPayment(stripeCtx(sim, posConfig()), { ...input, attemptNumber: 2 });
    expect(retry.status).toBe('failed');
    expect(sim.requestsTo('POST', `/v1/terminal/readers/${READER}/process_payment_intent`)).toHaveLength(1);

    const other = stripePayment(2600);
    const paid = await pos.createPayment(stripeCtx(sim, posConfig()), other);
    sim.presentCard(READER, 'succeed');
    expect(sim.readers.get(READER)!.action).toMatchObject({ status: 'succeeded' });
    expect(
      (await pos.getPayment(stripeCtx(sim, posConfig()), stripeLookup(other, paid.processorReference))).status,
    ).toBe('approved');
  });

  it('a failed reader action for another PaymentIntent says nothing about this one', async () => {
    const sim = new StripeSimulator({ readerMode: 'manual' });
    const first = stripePayment(2500);
    const a = await pos.createPayment(stripeCtx(sim, posConfig()), first);
    sim.presentCard(READER, 'customer_cancel');
    const b = stripePayment(2700);
    const created = await sim.fetch('https://api.stripe.com/v1/payment_intents', {
      method: 'POST',
      headers: { Authorization: `Bearer ${SECRET_KEY}`, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: encodeForm({
        amount: 2700,
        currency: 'usd',
        payment_method_types: ['card_present'],
        metadata: { payment_id: b.paymentId },
      } satisfies Stripe.PaymentIntentCreateParams),
    });
    const other = (await created.json()) as Stripe.PaymentIntent;
    expect((await pos.getPayment(stripeCtx(sim, posConfig()), stripeLookup(b, other.id))).status).toBe('pending');
    expect((await pos.getPayment(stripeCtx(sim, posConfig()), stripeLookup(first, a.processorReference))).status).toBe(
      'failed',
    );
  });
});

describe('Stripe: every error type the SDK knows, and the documented HTTP errors, through the adapter', () => {
  it.each(Object.entries(ERROR_TYPE_KINDS) as [Stripe.RawErrorType, ConnectorErrorKind][])(
    '%s (at the HTTP status Stripe gives it) → %s',
    async (type, kind) => {
      const sim = new StripeSimulator();
      sim.inject(type, { path: '/v1/payment_intents' });
      const error = await connectorError(pos.createPayment(stripeCtx(sim, posConfig()), stripePayment(2500)));
      expect(error.kind).toBe(kind);
      expect(error.message).not.toMatch(/Stripe’s end|insufficient funds|Invalid API Key|sk_test|Keys for idempotent/);
    },
  );

  it.each([
    ['server_error', 'unavailable', 'api_error'],
    ['unavailable', 'unavailable', 'api_error'],
    ['rate_limited', 'unavailable', 'rate_limit'],
    ['network', 'unavailable', 'stripe_network_error'],
    ['timeout', 'timeout', 'stripe_timeout'],
    ['timeout_after', 'timeout', 'stripe_timeout'],
    ['idempotency_conflict', 'unavailable', 'idempotency_key_in_use'],
    ['idempotency_conflict_invalid_request', 'unavailable', 'idempotency_key_in_use'],
    ['lock_timeout', 'unavailable', 'lock_timeout'],
    ['reader_timeout', 'timeout', 'terminal_reader_timeout'],
    ['invalid_key', 'configuration_invalid', 'invalid_request_error'],
    ['forbidden', 'configuration_invalid', 'secret_key_required'],
    ['decline', 'declined', 'insufficient_funds'],
  ] as const)('injected %s → %s (%s)', async (kind, expected, code) => {
    const sim = new StripeSimulator();
    sim.inject(
      kind,
      kind === 'reader_timeout' ? { path: `/v1/terminal/readers/${READER}/process_payment_intent` } : {},
    );
    const error = await connectorError(pos.createPayment(stripeCtx(sim, posConfig()), stripePayment(2500)));
    expect(error.kind).toBe(expected);
    expect(error.processorCode).toBe(code);
    expect(error.message).not.toMatch(/Stripe’s end|insufficient funds|Invalid API Key|sk_test/);
  });

  it('an amount Stripe’s minimum refuses (THB 5.00: amount_too_small) → configuration_invalid, no PaymentIntent', async () => {
    const sim = new StripeSimulator();
    const error = await connectorError(qr.createPayment(stripeCtx(sim, qrConfig()), stripePayment(500, 'THB')));
    expect(error).toMatchObject({ kind: 'configuration_invalid', processorCode: 'amount_too_small' });
    expect(sim.paymentIntentCount()).toBe(0);
  });

  it('an amount over Stripe’s eight digits is refused before any request (Stripe would say amount_too_large, which reads as a decline)', async () => {
    const sim = new StripeSimulator();
    const error = await connectorError(pos.createPayment(stripeCtx(sim, posConfig()), stripePayment(100_000_000)));
    expect(error).toMatchObject({ kind: 'configuration_invalid', processorCode: 'stripe_amount_too_large' });
    expect(sim.requests).toHaveLength(0);
    // Eight digits exactly is Stripe's largest amount, and is sent.
    expect((await pos.createPayment(stripeCtx(sim, posConfig()), stripePayment(99_999_999))).status).toBe('approved');
  });
});

describe('Stripe: capture when a PaymentIntent waits for one (requires_capture)', () => {
  it('a reader that only authorized (the PaymentIntent was switched to manual capture) → captured under its key, approved', async () => {
    const sim = new StripeSimulator({ readerMode: 'manual' });
    const input = stripePayment(2500);
    const created = await pos.createPayment(stripeCtx(sim, posConfig()), input);
    sim.presentCard(READER, 'authorize');
    expect(sim.paymentIntents.get(created.processorReference!)).toMatchObject({
      status: 'requires_capture',
      amount_capturable: 2500,
      capture_method: 'manual',
    });
    const read = await pos.getPayment(stripeCtx(sim, posConfig()), stripeLookup(input, created.processorReference));
    expect(read).toMatchObject({ status: 'approved', processorStatus: 'succeeded' });
    expect(sim.paymentIntents.get(created.processorReference!)).toMatchObject({
      status: 'succeeded',
      amount_received: 2500,
    });
    // A second lookup (or a retry) does not capture again: the PaymentIntent has moved on.
    await pos.getPayment(stripeCtx(sim, posConfig()), stripeLookup(input, created.processorReference));
    expect(sim.requestsTo('POST', `/v1/payment_intents/${created.processorReference}/capture`)).toHaveLength(1);
  });

  it('a capture whose answer is lost is retried under the same key and replayed; the PaymentIntent as it is now decides', async () => {
    const sim = new StripeSimulator({ readerMode: 'manual' });
    const input = stripePayment(2500);
    const created = await pos.createPayment(stripeCtx(sim, posConfig()), input);
    sim.presentCard(READER, 'authorize');
    sim.inject('timeout_after', { path: `/v1/payment_intents/${created.processorReference}/capture` });
    expect(
      (
        await connectorError(
          pos.getPayment(stripeCtx(sim, posConfig()), stripeLookup(input, created.processorReference)),
        )
      ).kind,
    ).toBe('timeout');
    expect(sim.paymentIntents.get(created.processorReference!)!.status).toBe('succeeded');
    expect(
      (await pos.getPayment(stripeCtx(sim, posConfig()), stripeLookup(input, created.processorReference))).status,
    ).toBe('approved');
  });

  it('an authorization canceled before the capture → canceled, never approved', async () => {
    const sim = new StripeSimulator({ readerMode: 'manual' });
    const input = stripePayment(2500);
    const created = await pos.createPayment(stripeCtx(sim, posConfig()), input);
    sim.presentCard(READER, 'authorize');
    const stale = structuredClone(sim.paymentIntents.get(created.processorReference!)!);
    sim.setPaymentIntentStatus(created.processorReference!, 'canceled');
    // The connector saw requires_capture (a search result a moment old); Stripe refuses the capture.
    const staleFetch: typeof fetch = async (request, init) => {
      const url = String(request instanceof Request ? request.url : request);
      if (
        new URL(url).pathname === '/v1/payment_intents/search' &&
        new URL(url).searchParams.get('query') === `metadata['payment_id']:'${input.paymentId}'`
      ) {
        return new Response(
          JSON.stringify({
            object: 'search_result',
            data: [stale],
            has_more: false,
            next_page: null,
            url: '/v1/payment_intents/search',
          }),
          { status: 200 },
        );
      }
      return sim.fetch(request, init);
    };
    const read = await pos.getPayment(stripeCtx(sim, posConfig(), { fetch: staleFetch }), stripeLookup(input, null));
    expect(read).toMatchObject({ status: 'canceled', processorStatus: 'canceled' });
    expect(sim.requestsTo('POST', `/v1/payment_intents/${created.processorReference}/capture`)).toHaveLength(1);
  });
});

// ---------------------------------------------------------------------------------------------------------
describe('Stripe lookups', () => {
  it('getPayment by reference, and by metadata search when the create never answered', async () => {
    const sim = new StripeSimulator();
    const input = stripePayment(1052);
    await connectorError(pos.createPayment(stripeCtx(sim, posConfig()), input));
    const pi = sim.paymentIntentFor(input.paymentId)!;
    const lookup = {
      paymentId: input.paymentId,
      processorIdempotencyKey: input.processorIdempotencyKey,
      amount: input.amount,
    };
    expect(await pos.getPayment(stripeCtx(sim, posConfig()), { ...lookup, processorReference: null })).toMatchObject({
      status: 'pending',
      processorReference: pi.id,
    });
    const [search] = sim.requestsTo('GET', '/v1/payment_intents/search');
    expect(new URLSearchParams(search!.query).get('query')).toBe(`metadata['payment_id']:'${input.paymentId}'`);
    expect(await pos.getPayment(stripeCtx(sim, posConfig()), { ...lookup, processorReference: pi.id })).toMatchObject({
      status: 'pending',
      processorReference: pi.id,
    });
  });

  it('getPayment of a payment Stripe never saw → not_found', async () => {
    const sim = new StripeSimulator();
    const lookup = {
      paymentId: 'pay_unknown',
      processorIdempotencyKey: 'pay_unknown',
      amount: { minor: 100, currency: 'USD' },
    };
    expect(
      (await connectorError(pos.getPayment(stripeCtx(sim, posConfig()), { ...lookup, processorReference: null }))).kind,
    ).toBe('not_found');
    expect(
      (
        await connectorError(
          pos.getPayment(stripeCtx(sim, posConfig()), { ...lookup, processorReference: 'pi_doesnotexist' }),
        )
      ).kind,
    ).toBe('not_found');
  });

  it('a lookup that hits 5xx or a timeout is unavailable or timeout, not not_found', async () => {
    const sim = new StripeSimulator();
    const lookup = {
      paymentId: 'pay_x',
      processorIdempotencyKey: 'pay_x',
      amount: { minor: 100, currency: 'USD' },
      processorReference: 'pi_x',
    };
    sim.inject('unavailable');
    expect((await connectorError(pos.getPayment(stripeCtx(sim, posConfig()), lookup))).kind).toBe('unavailable');
    sim.inject('timeout');
    expect((await connectorError(pos.getPayment(stripeCtx(sim, posConfig()), lookup))).kind).toBe('timeout');
  });
});

// ---------------------------------------------------------------------------------------------------------
describe('Stripe cancellations', () => {
  const lookupOf = (
    input: CreatePaymentInput,
    reference: string | null,
    currentStatus: 'pending' | 'processing' | 'approved',
  ) => ({
    paymentId: input.paymentId,
    processorReference: reference,
    processorIdempotencyKey: `${input.processorIdempotencyKey}:cancel`,
    amount: input.amount,
    currentStatus,
  });

  it('a pending QR payment → canceled at Stripe', async () => {
    const sim = new StripeSimulator();
    const input = stripePayment(1000, 'THB');
    const created = await qr.createPayment(stripeCtx(sim, qrConfig()), input);
    const outcome = await qr.cancelPayment(
      stripeCtx(sim, qrConfig()),
      lookupOf(input, created.processorReference, 'pending'),
    );
    expect(outcome).toMatchObject({
      status: 'canceled',
      processorReference: created.processorReference,
      action: { type: 'none' },
    });
    expect(sim.paymentIntents.get(created.processorReference!)!.status).toBe('canceled');
    expect(sim.requestsTo('POST', `/v1/payment_intents/${created.processorReference}/cancel`)[0]!.idempotencyKey).toBe(
      `${input.processorIdempotencyKey}:cancel:cancel`,
    );
  });

  it('a POS payment on the reader: the reader’s action is canceled first, then the PaymentIntent', async () => {
    const sim = new StripeSimulator({ readerMode: 'manual' });
    const input = stripePayment(2500);
    const created = await pos.createPayment(stripeCtx(sim, posConfig()), input);
    const outcome = await pos.cancelPayment(
      stripeCtx(sim, posConfig()),
      lookupOf(input, created.processorReference, 'pending'),
    );
    expect(outcome.status).toBe('canceled');
    expect(sim.readers.get(READER)!.action).toMatchObject({ status: 'failed', failure_code: 'canceled' });
    expect(sim.requestsTo('POST', `/v1/terminal/readers/${READER}/cancel_action`)).toHaveLength(1);
  });

  it('a void of an approved (succeeded) payment refunds it in full and answers canceled; a repeat refunds nothing more', async () => {
    const sim = new StripeSimulator();
    const input = stripePayment(2500);
    const created = await pos.createPayment(stripeCtx(sim, posConfig()), input);
    const outcome = await pos.cancelPayment(
      stripeCtx(sim, posConfig()),
      lookupOf(input, created.processorReference, 'approved'),
    );
    expect(outcome).toMatchObject({ status: 'canceled', processorReference: created.processorReference });
    const refunds = [...sim.refunds.values()];
    expect(refunds).toHaveLength(1);
    expect(refunds[0]).toMatchObject({ amount: 2500, status: 'succeeded', payment_intent: created.processorReference });
    expect(sim.requestsTo('POST', '/v1/refunds')[0]!.idempotencyKey).toBe(
      `${input.processorIdempotencyKey}:cancel:void`,
    );
    // The same cancel again (a retry) replays the refund instead of making another.
    expect(
      (await pos.cancelPayment(stripeCtx(sim, posConfig()), lookupOf(input, created.processorReference, 'approved')))
        .status,
    ).toBe('canceled');
    expect(sim.refunds.size).toBe(1);
  });

  it('a void whose refund is still pending is retryable (unavailable), and canceled once it succeeds', async () => {
    const sim = new StripeSimulator({ refundMode: 'pending' });
    const input = stripePayment(2500);
    const created = await pos.createPayment(stripeCtx(sim, posConfig()), input);
    expect(
      await connectorError(
        pos.cancelPayment(stripeCtx(sim, posConfig()), lookupOf(input, created.processorReference, 'approved')),
      ),
    ).toMatchObject({
      kind: 'unavailable',
      processorCode: 'refund_pending',
    });
    sim.settleRefund([...sim.refunds.keys()][0]!, 'succeeded');
    expect(
      (await pos.cancelPayment(stripeCtx(sim, posConfig()), lookupOf(input, created.processorReference, 'approved')))
        .status,
    ).toBe('canceled');
    expect(sim.refunds.size).toBe(1);
  });

  it('a payment that succeeded at Stripe while we thought it pending: the cancel is refused (declined), nothing refunded', async () => {
    const sim = new StripeSimulator();
    const input = stripePayment(2500);
    const created = await pos.createPayment(stripeCtx(sim, posConfig()), input);
    expect(
      await connectorError(
        pos.cancelPayment(stripeCtx(sim, posConfig()), lookupOf(input, created.processorReference, 'pending')),
      ),
    ).toMatchObject({
      kind: 'declined',
      processorCode: 'payment_intent_unexpected_state',
    });
    expect(sim.refunds.size).toBe(0);
  });

  it('an already canceled PaymentIntent → canceled; a payment Stripe never saw → canceled with no reference', async () => {
    const sim = new StripeSimulator();
    const input = stripePayment(1000, 'THB');
    const created = await qr.createPayment(stripeCtx(sim, qrConfig()), input);
    await qr.cancelPayment(stripeCtx(sim, qrConfig()), lookupOf(input, created.processorReference, 'pending'));
    expect(
      (
        await qr.cancelPayment(stripeCtx(sim, qrConfig()), {
          ...lookupOf(input, created.processorReference, 'pending'),
          processorIdempotencyKey: 'other:cancel',
        })
      ).status,
    ).toBe('canceled');
    const never = stripePayment(1000, 'THB');
    expect(await qr.cancelPayment(stripeCtx(sim, qrConfig()), lookupOf(never, null, 'pending'))).toMatchObject({
      status: 'canceled',
      processorReference: null,
    });
  });

  it('a cancel Stripe cannot reach → unavailable; the payment is untouched', async () => {
    const sim = new StripeSimulator();
    const input = stripePayment(1000, 'THB');
    const created = await qr.createPayment(stripeCtx(sim, qrConfig()), input);
    sim.inject('server_error', { method: 'POST' });
    expect(
      (
        await connectorError(
          qr.cancelPayment(stripeCtx(sim, qrConfig()), lookupOf(input, created.processorReference, 'pending')),
        )
      ).kind,
    ).toBe('unavailable');
    expect(sim.paymentIntents.get(created.processorReference!)!.status).toBe('requires_action');
  });
});

// ---------------------------------------------------------------------------------------------------------
describe('Stripe refunds', () => {
  async function approved(sim: StripeSimulator, minor = 10_000) {
    const input = stripePayment(minor);
    const outcome = await pos.createPayment(stripeCtx(sim, posConfig()), input);
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
    const a = await pos.refundPayment(stripeCtx(sim, posConfig()), first);
    expect(a).toMatchObject({ status: 'approved', processorStatus: 'succeeded' });
    expect(a.processorReference).toMatch(/^re_/);
    const [req] = sim.requestsTo('POST', '/v1/refunds');
    expect(req!.idempotencyKey).toBe(`${first.processorIdempotencyKey}:refund`);
    expect(req!.params).toEqual({
      payment_intent: pi,
      amount: '2500',
      metadata: { refund_id: first.refundId, reason: 'Customer changed their mind' },
      expand: ['balance_transaction'],
    });
    const b = await pos.refundPayment(stripeCtx(sim, posConfig()), refundInput(pi, 7_500));
    expect(b.status).toBe('approved');
    expect([...sim.refunds.values()].map((r) => r.amount)).toEqual([2_500, 7_500]);
  });

  it('a refund beyond what is left is refused by Stripe → declined (amount_too_large)', async () => {
    const sim = new StripeSimulator();
    const pi = await approved(sim);
    expect(await connectorError(pos.refundPayment(stripeCtx(sim, posConfig()), refundInput(pi, 10_001)))).toMatchObject(
      { kind: 'declined', processorCode: 'amount_too_large' },
    );
  });

  it('a refund ending 61 fails at Stripe with failure_reason declined → declined', async () => {
    const sim = new StripeSimulator();
    const pi = await approved(sim);
    expect((await pos.refundPayment(stripeCtx(sim, posConfig()), refundInput(pi, 1_061))).status).toBe('declined');
  });

  it('a pending refund → pending; getRefund reads it approved once it settles', async () => {
    const sim = new StripeSimulator({ refundMode: 'pending' });
    const pi = await approved(sim);
    const input = refundInput(pi, 1_000);
    const outcome = await pos.refundPayment(stripeCtx(sim, posConfig()), input);
    expect(outcome.status).toBe('pending');
    sim.settleRefund(outcome.processorReference!, 'succeeded');
    const lookup = {
      refundId: input.refundId,
      amount: input.amount,
      processorIdempotencyKey: input.processorIdempotencyKey,
      paymentProcessorReference: pi,
    };
    expect(
      await pos.getRefund(stripeCtx(sim, posConfig()), { ...lookup, processorReference: outcome.processorReference }),
    ).toMatchObject({
      status: 'approved',
      processorReference: outcome.processorReference,
    });
  });

  it('a refund whose answer was lost: the retry replays the same refund; getRefund finds it without a reference', async () => {
    const sim = new StripeSimulator();
    const pi = await approved(sim);
    const input = refundInput(pi, 1_000);
    sim.inject('timeout_after', { path: '/v1/refunds' });
    expect((await connectorError(pos.refundPayment(stripeCtx(sim, posConfig()), input))).kind).toBe('timeout');
    const lookup = {
      refundId: input.refundId,
      amount: input.amount,
      processorIdempotencyKey: input.processorIdempotencyKey,
      paymentProcessorReference: pi,
      processorReference: null,
    };
    const found = await pos.getRefund(stripeCtx(sim, posConfig()), lookup);
    expect(found.status).toBe('approved');
    const retry = await pos.refundPayment(stripeCtx(sim, posConfig()), { ...input, attemptNumber: 2 });
    expect(retry).toMatchObject({ status: 'approved', processorReference: found.processorReference });
    expect(sim.refunds.size).toBe(1);
  });

  it('getRefund of a refund Stripe never saw → not_found', async () => {
    const sim = new StripeSimulator();
    const pi = await approved(sim);
    const lookup = {
      refundId: 'ref_unknown',
      amount: { minor: 100, currency: 'USD' },
      processorIdempotencyKey: 'ref_unknown',
      paymentProcessorReference: pi,
    };
    expect(
      (await connectorError(pos.getRefund(stripeCtx(sim, posConfig()), { ...lookup, processorReference: null }))).kind,
    ).toBe('not_found');
    expect(
      (
        await connectorError(
          pos.getRefund(stripeCtx(sim, posConfig()), { ...lookup, processorReference: 're_unknown' }),
        )
      ).kind,
    ).toBe('not_found');
    expect(
      (
        await connectorError(
          pos.getRefund(stripeCtx(sim, posConfig()), {
            ...lookup,
            paymentProcessorReference: '',
            processorReference: null,
          }),
        )
      ).kind,
    ).toBe('not_found');
  });

  it('a refund Stripe cannot reach → unavailable', async () => {
    const sim = new StripeSimulator();
    const pi = await approved(sim);
    sim.inject('unavailable', { path: '/v1/refunds' });
    expect((await connectorError(pos.refundPayment(stripeCtx(sim, posConfig()), refundInput(pi, 1_000)))).kind).toBe(
      'unavailable',
    );
    expect(sim.refunds.size).toBe(0);
  });
});

// ---------------------------------------------------------------------------------------------------------
// Disputes: the PaymentIntent stays `succeeded`; only a lost dispute (final at Stripe) is charged_back.

describe('Stripe disputes', () => {
  async function approvedPos(sim: StripeSimulator) {
    const input = stripePayment(7000);
    const outcome = await pos.createPayment(stripeCtx(sim, posConfig()), input);
    expect(outcome.status).toBe('approved');
    return { input, pi: outcome.processorReference! };
  }
  const read = (sim: StripeSimulator, input: CreatePaymentInput, reference: string | null, fetch = sim.fetch) =>
    pos.getPayment(stripeCtx(sim, posConfig(), { fetch }), stripeLookup(input, reference));
  const parse = async (sim: StripeSimulator, type: Parameters<StripeSimulator['eventFor']>[0], disputeId: string) => {
    const delivery = await sim.deliver(sim.eventFor(type, disputeId));
    return pos.parseNotification(stripeCtx(sim, posConfig()), {
      headers: new Headers(delivery.headers),
      rawBody: delivery.rawBody,
      url: 'https://payments.example.com/v1/processor-notifications/x',
    });
  };

  it('an undisputed approved payment is read without asking for disputes (the charge comes expanded with the PaymentIntent)', async () => {
    const sim = new StripeSimulator();
    const { input, pi } = await approvedPos(sim);
    expect(await read(sim, input, pi)).toMatchObject({ status: 'approved', processorStatus: 'succeeded' });
    expect(await read(sim, input, null)).toMatchObject({ status: 'approved', processorStatus: 'succeeded' });
    expect(sim.requestsTo('GET', '/v1/disputes')).toHaveLength(0);
    for (const r of sim.requestsTo('GET', `/v1/payment_intents/${pi}`))
      expect(r.params.expand).toEqual(['latest_charge.balance_transaction']);
    expect(sim.requestsTo('GET', '/v1/payment_intents/search').map((r) => r.params.expand)).toEqual([
      ['data.latest_charge.balance_transaction'],
    ]);
  });

  it('a chargeback opened (funds withdrawn) and under review is not final: approved; lost → charged_back, by reference and by search', async () => {
    const sim = new StripeSimulator();
    const { input, pi } = await approvedPos(sim);
    const dispute = sim.openDispute(pi);
    expect(dispute).toMatchObject({
      status: 'needs_response',
      payment_intent: pi,
      charge: sim.paymentIntents.get(pi)!.latest_charge,
    });
    expect(sim.disputes.get(dispute.id)!.balance_transactions).toHaveLength(1);
    expect(await read(sim, input, pi)).toMatchObject({ status: 'approved' });
    sim.reviewDispute(dispute.id);
    expect(await read(sim, input, pi)).toMatchObject({ status: 'approved' });
    sim.closeDispute(dispute.id, 'lost');
    expect(sim.paymentIntents.get(pi)!.status).toBe('succeeded');
    expect(await read(sim, input, pi)).toEqual({
      status: 'charged_back',
      processorReference: pi,
      action: { type: 'none' },
      processorStatus: 'dispute_lost',
      settlement: expect.objectContaining({ fee: expect.any(Object) }),
      disputes: [expect.objectContaining({ processorDisputeId: dispute.id, status: 'lost' })],
    });
    expect(await read(sim, input, null)).toMatchObject({ status: 'charged_back', processorReference: pi });
    expect(sim.requestsTo('GET', '/v1/disputes').every((r) => r.params.payment_intent === pi)).toBe(true);
  });

  it('a won dispute returns the funds: approved, and stays so; an inquiry that closes is approved too', async () => {
    const sim = new StripeSimulator();
    const won = await approvedPos(sim);
    const dispute = sim.openDispute(won.pi);
    sim.closeDispute(dispute.id, 'won');
    expect(sim.disputes.get(dispute.id)).toMatchObject({ status: 'won' });
    expect(sim.disputes.get(dispute.id)!.balance_transactions.map((t) => t.amount)).toEqual([-7000, 7000]);
    expect(await read(sim, won.input, won.pi)).toMatchObject({ status: 'approved' });
    const inquired = await approvedPos(sim);
    const inquiry = sim.openDispute(inquired.pi, { inquiry: true });
    expect(inquiry.balance_transactions).toHaveLength(0);
    sim.closeDispute(inquiry.id, 'lost');
    expect(sim.disputes.get(inquiry.id)).toMatchObject({ status: 'warning_closed' });
    expect(await read(sim, inquired.input, inquired.pi)).toMatchObject({ status: 'approved' });
  });

  it('a disputed payment whose disputes cannot be read is unavailable, never approved by default', async () => {
    const sim = new StripeSimulator();
    const { input, pi } = await approvedPos(sim);
    sim.closeDispute(sim.openDispute(pi).id, 'lost');
    sim.inject('api_error', { path: '/v1/disputes' });
    expect(await connectorError(read(sim, input, pi))).toMatchObject({ kind: 'unavailable' });
    expect(await read(sim, input, pi)).toMatchObject({ status: 'charged_back' });
  });

  it('a charged-back payment cannot be refunded or voided at Stripe (charge_disputed → declined)', async () => {
    const sim = new StripeSimulator();
    const { input, pi } = await approvedPos(sim);
    sim.closeDispute(sim.openDispute(pi).id, 'lost');
    const refund = pos.refundPayment(stripeCtx(sim, posConfig()), {
      refundId: 'ref_1',
      processorIdempotencyKey: 'ref_1',
      attemptNumber: 1,
      paymentProcessorReference: pi,
      amount: { minor: 100, currency: 'USD' },
    });
    expect(await connectorError(refund)).toMatchObject({ kind: 'declined', processorCode: 'charge_disputed' });
    const cancel = pos.cancelPayment(stripeCtx(sim, posConfig()), {
      ...stripeLookup(input, pi),
      currentStatus: 'approved',
    });
    expect(await connectorError(cancel)).toMatchObject({ kind: 'declined', processorCode: 'charge_disputed' });
    expect(sim.refunds.size).toBe(0);
  });

  it('signed dispute events: news of the PaymentIntent; only charge.dispute.closed of a lost dispute says charged_back', async () => {
    const sim = new StripeSimulator();
    const { pi } = await approvedPos(sim);
    const dispute = sim.openDispute(pi);
    sim.reviewDispute(dispute.id);
    for (const type of [
      'charge.dispute.created',
      'charge.dispute.funds_withdrawn',
      'charge.dispute.updated',
    ] as const) {
      expect(await parse(sim, type, dispute.id)).toMatchObject({
        resource: 'payment',
        processorReference: pi,
        status: null,
        trusted: true,
      });
    }
    sim.closeDispute(dispute.id, 'lost');
    expect(await parse(sim, 'charge.dispute.closed', dispute.id)).toMatchObject({
      resource: 'payment',
      processorReference: pi,
      status: 'charged_back',
      trusted: true,
    });

    const other = await approvedPos(sim);
    const won = sim.openDispute(other.pi);
    sim.closeDispute(won.id, 'won');
    expect(await parse(sim, 'charge.dispute.funds_reinstated', won.id)).toMatchObject({
      processorReference: other.pi,
      status: null,
    });
    expect(await parse(sim, 'charge.dispute.closed', won.id)).toMatchObject({
      processorReference: other.pi,
      status: null,
    });
  });

  it('the simulator’s disputes are the SDK’s Dispute objects, and its charges say they are disputed', async () => {
    const sim = new StripeSimulator();
    const { pi } = await approvedPos(sim);
    expect(sim.chargeOf(pi).disputed).toBe(false);
    const dispute = sim.openDispute(pi);
    expect(sim.chargeOf(pi).disputed).toBe(true);
    expect(StripeDispute.parse(dispute)).toMatchObject({
      id: dispute.id,
      object: 'dispute',
      status: 'needs_response',
      payment_intent: pi,
    });
    const list = await (
      await sim.fetch(`https://api.stripe.com/v1/disputes?payment_intent=${pi}`, {
        headers: { Authorization: `Bearer ${SECRET_KEY}` },
      })
    ).json();
    expect(list).toMatchObject({ object: 'list', data: [{ id: dispute.id }], has_more: false });
  });
});

// ---------------------------------------------------------------------------------------------------------
describe('Stripe notifications (signed by the official library)', () => {
  async function paidQr(sim: StripeSimulator) {
    const input = stripePayment(1000, 'THB');
    const outcome = await qr.createPayment(stripeCtx(sim, qrConfig()), input);
    sim.payQr(outcome.processorReference!);
    return sim.eventFor('payment_intent.succeeded', outcome.processorReference!);
  }
  const parse = (
    sim: StripeSimulator,
    delivery: { rawBody: string; headers: Record<string, string> },
    context = stripeCtx(sim, qrConfig()),
  ) =>
    qr.parseNotification(context, {
      headers: new Headers(delivery.headers),
      rawBody: delivery.rawBody,
      url: 'https://payments.example.com/v1/processor-notifications/x',
    });
  /** What the official library's own verifier says of the same delivery (the oracle for ours). */
  const officialVerdict = async (delivery: { rawBody: string; headers: Record<string, string> }, secret: string) => {
    try {
      await Stripe.webhooks.constructEventAsync(
        delivery.rawBody,
        delivery.headers['Stripe-Signature'] ?? '',
        secret,
        300,
        Stripe.createSubtleCryptoProvider(),
      );
      return 'accepted';
    } catch (error) {
      expect(error).toBeInstanceOf(Stripe.errors.StripeSignatureVerificationError);
      return 'refused';
    }
  };

  it('the header is the SDK’s own (generateTestHeaderStringAsync), and a correctly signed event is trusted news', async () => {
    const sim = new StripeSimulator();
    const event = await paidQr(sim);
    const delivery = await sim.deliver(event);
    expect(delivery.signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(await officialVerdict(delivery, sim.webhookSecret)).toBe('accepted');
    expect(await parse(sim, delivery)).toEqual({
      eventId: event.id,
      resource: 'payment',
      processorReference: event.data.object.id,
      status: 'approved',
      trusted: true,
    });
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

  it('a secret rotation: a header with two v1 signatures (old and new secret) verifies with either secret, as the SDK’s does', async () => {
    const sim = new StripeSimulator();
    const event = await paidQr(sim);
    const older = `whsec_${stripeId('o', 32).slice(2)}`;
    const delivery = await sim.deliver(event, { secrets: [older, sim.webhookSecret] });
    expect(delivery.signature).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    for (const secret of [older, sim.webhookSecret]) {
      expect(await officialVerdict(delivery, secret)).toBe('accepted');
      const context = stripeCtx(sim, qrConfig(), { credentials: { secret_key: SECRET_KEY, webhook_secret: secret } });
      expect((await parse(sim, delivery, context)).status).toBe('approved');
    }
    const third = `whsec_${stripeId('t', 32).slice(2)}`;
    expect(await officialVerdict(delivery, third)).toBe('refused');
    expect(
      (
        await connectorError(
          parse(
            sim,
            delivery,
            stripeCtx(sim, qrConfig(), { credentials: { secret_key: SECRET_KEY, webhook_secret: third } }),
          ),
        )
      ).processorCode,
    ).toBe('stripe_signature_mismatch');
  });

  const refusals: [
    string,
    (sim: StripeSimulator, event: Stripe.Event) => Promise<{ rawBody: string; headers: Record<string, string> }>,
    string,
    'refused' | 'accepted' | null,
  ][] = [
    [
      'forged (signed with another secret)',
      (sim, e) => sim.deliver(e, { secret: `whsec_${stripeId('f', 32).slice(2)}` }),
      'stripe_signature_mismatch',
      'refused',
    ],
    [
      'tampered after signing',
      (sim, e) => sim.deliver(e, { tamper: (raw) => raw.replace('"succeeded"', '"canceled"') }),
      'stripe_signature_mismatch',
      'refused',
    ],
    [
      'stale (t more than 300 s old)',
      (sim, e) => sim.deliver(e, { timestamp: Math.floor(Date.now() / 1000) - 301 }),
      'stripe_signature_stale',
      'refused',
    ],
    // The SDK's verifier only bounds the past; ours refuses a timestamp far ahead too (a stricter choice).
    [
      'from the future (t more than 300 s ahead)',
      (sim, e) => sim.deliver(e, { timestamp: Math.floor(Date.now() / 1000) + 301 }),
      'stripe_signature_stale',
      'accepted',
    ],
    [
      'without Stripe-Signature',
      async (_sim, e) => ({ rawBody: JSON.stringify(e), headers: {} }),
      'stripe_signature_missing',
      'refused',
    ],
    [
      'with a garbled Stripe-Signature',
      async (_sim, e) => ({ rawBody: JSON.stringify(e), headers: { 'Stripe-Signature': 'v1=nothex,t=now' } }),
      'stripe_signature_missing',
      'refused',
    ],
    [
      'with only a v0 signature',
      async (_sim, e) => ({
        rawBody: JSON.stringify(e),
        headers: { 'Stripe-Signature': `t=${Math.floor(Date.now() / 1000)},v0=${'a'.repeat(64)}` },
      }),
      'stripe_signature_missing',
      'refused',
    ],
    [
      'signed but not an event',
      async (sim) => {
        const rawBody = JSON.stringify({ hello: 'world' });
        return { rawBody, headers: { 'Stripe-Signature': await sim.signatureHeader(rawBody) } };
      },
      'stripe_event_unreadable',
      null,
    ],
    [
      'signed but not JSON',
      async (sim) => ({ rawBody: 'not json', headers: { 'Stripe-Signature': await sim.signatureHeader('not json') } }),
      'stripe_event_unreadable',
      null,
    ],
    [
      'a livemode event in the test environment',
      (sim, e) => sim.deliver({ ...e, livemode: true }),
      'stripe_event_livemode_mismatch',
      null,
    ],
    // EventBase.livemode is required on every event type: an event without it is not one Stripe sent.
    [
      'an event without livemode',
      (sim, e) => {
        const { livemode: _, ...rest } = e;
        return sim.deliver(rest);
      },
      'stripe_event_unreadable',
      null,
    ],
  ];

  it.each(refusals)(
    'refuses one %s (invalid_notification); the SDK’s verifier agrees on the signature',
    async (_, make, code, official) => {
      const sim = new StripeSimulator();
      const event = await paidQr(sim);
      const delivery = await make(sim, event);
      const error = await connectorError(parse(sim, delivery));
      expect(error).toMatchObject({ kind: 'invalid_notification', processorCode: code });
      if (official) expect(await officialVerdict(delivery, sim.webhookSecret)).toBe(official);
    },
  );

  it('refuses a correctly signed event when the method holds another webhook secret', async () => {
    const sim = new StripeSimulator();
    const event = await paidQr(sim);
    const other = stripeCtx(sim, qrConfig(), {
      credentials: { secret_key: SECRET_KEY, webhook_secret: `whsec_${stripeId('o', 32).slice(2)}` },
    });
    expect((await connectorError(parse(sim, await sim.deliver(event), other))).kind).toBe('invalid_notification');
  });

  it('refund events (refund.updated and charge.refund.updated: this version has no refund.failed) are refund news', async () => {
    const sim = new StripeSimulator({ refundMode: 'pending' });
    const pi = (await pos.createPayment(stripeCtx(sim, posConfig()), stripePayment(5_000))).processorReference!;
    const refund = await pos.refundPayment(stripeCtx(sim, posConfig()), {
      refundId: 'ref_1',
      processorIdempotencyKey: 'ref_1',
      attemptNumber: 1,
      paymentProcessorReference: pi,
      amount: { minor: 5_000, currency: 'USD' },
    });
    sim.settleRefund(refund.processorReference!, 'requires_action');
    for (const type of ['refund.updated', 'charge.refund.updated'] as const) {
      expect(await parse(sim, await sim.deliver(sim.eventFor(type, refund.processorReference!)))).toMatchObject({
        resource: 'refund',
        processorReference: refund.processorReference,
        status: 'pending',
        trusted: true,
      });
    }
    sim.settleRefund(refund.processorReference!, 'failed', 'declined');
    expect(
      (await parse(sim, await sim.deliver(sim.eventFor('refund.updated', refund.processorReference!)))).status,
    ).toBe('declined');
    expect(sim.events.map((e) => e.type)).not.toContain('refund.failed');
  });

  it('a reader event names the PaymentIntent of its action, even expanded; the core re-reads it', async () => {
    const sim = new StripeSimulator();
    const pi = (await pos.createPayment(stripeCtx(sim, posConfig()), stripePayment(5_000))).processorReference!;
    const event = sim.eventFor('terminal.reader.action_succeeded', READER);
    expect(await parse(sim, await sim.deliver(event))).toMatchObject({
      resource: 'payment',
      processorReference: pi,
      status: null,
    });
    const expanded = structuredClone(event);
    expanded.data.object.action!.process_payment_intent!.payment_intent = structuredClone(sim.paymentIntents.get(pi)!);
    expect(await parse(sim, await sim.deliver(expanded))).toMatchObject({
      resource: 'payment',
      processorReference: pi,
      status: null,
    });
  });

  it('an event whose object has no id (balance.available) is still an event: news the core will not know', async () => {
    const sim = new StripeSimulator();
    const balance = sim.makeEvent('balance.available', {
      object: 'balance',
      available: [{ amount: 0, currency: 'usd', source_types: { card: 0 } }],
      livemode: false,
      pending: [],
    });
    expect(await parse(sim, await sim.deliver(balance))).toEqual({
      eventId: balance.id,
      resource: 'payment',
      processorReference: balance.id,
      status: null,
      trusted: true,
    });
  });
});
