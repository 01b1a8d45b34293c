import { z } from '@hono/zod-openapi';
import { bytesToHex, hmacSha256, timingSafeEqual, utf8 } from '../../lib/encoding.ts';
import type { Channel, ConnectorAdapter, ConnectorContext, ConnectorVersion, PaymentOutcome, ProcessorNotification, RefundOutcome } from '../types.ts';
import { ConnectorError } from '../types.ts';
import {
  encodeForm,
  eventToNotification,
  fetchFailure,
  isTimestampFresh,
  metadataQuery,
  normalizeStripeError,
  parseSignatureHeader,
  StripeEvent,
  StripeList,
  StripePaymentIntent,
  StripeReader,
  StripeRefund,
  stripeErrorOf,
  toPaymentOutcome,
  toRefundOutcome,
  toStripeAmount,
  type FormValue,
  type StripeOperation,
} from './transformers.ts';

/**
 * Stripe (https://docs.stripe.com/api), written from the public API reference:
 * - POS: card-present PaymentIntents handed to a Terminal reader (server-driven integration).
 * - QR: PromptPay (THB) or PayNow (SGD) PaymentIntents confirmed at once; the code is in `next_action`.
 * Stateless: every call carries the secret key; every POST carries an `Idempotency-Key` derived from ours,
 * so a retry resumes the same PaymentIntent or Refund instead of creating another.
 */

/** Fixed in production; tests replace `ctx.fetch` (or the global fetch) with a simulator. */
export const STRIPE_API_BASE = 'https://api.stripe.com';
/** Pinned so response shapes never change under us (https://docs.stripe.com/api/versioning). */
export const STRIPE_API_VERSION = '2024-06-20';
/** Per request; a POS payment makes up to four. */
export const STRIPE_REQUEST_TIMEOUT_MS = 15_000;
export const STRIPE_SIGNATURE_HEADER = 'stripe-signature';

/** Stripe Terminal's presentment currencies among ours (readers take the account country's currency). */
export const STRIPE_POS_CURRENCIES = ['USD', 'EUR', 'SGD'];
/** PromptPay is THB only, PayNow SGD only. */
export const STRIPE_QR_CURRENCIES = ['THB', 'SGD'];
const QR_METHOD_CURRENCY = { promptpay: 'THB', paynow: 'SGD' } as const;

// Field descriptions use `.describe()`: GET /v1/connectors serves these schemas through z.toJSONSchema.
export const StripeCredentials = z.strictObject({
  secret_key: z
    .string()
    .max(255)
    .regex(/^(sk|rk)_(test|live)_[A-Za-z0-9]{8,}$/, 'Must be a Stripe secret or restricted key (sk_test_, sk_live_, rk_test_, rk_live_)')
    .describe('Stripe secret key (`sk_test_...`/`sk_live_...`) or restricted key (`rk_...`) of the account; a test key for the test environment, a live key for live.'),
  webhook_secret: z
    .string()
    .max(255)
    .regex(/^whsec_[A-Za-z0-9+/=_-]{8,}$/, 'Must be a Stripe webhook signing secret (whsec_...)')
    .describe('Signing secret (`whsec_...`) of the Stripe webhook endpoint pointing at /v1/processor-notifications/{payment_method_id}.'),
});
export type StripeCredentials = z.infer<typeof StripeCredentials>;

export const StripePosConfiguration = z.strictObject({
  reader_id: z
    .string()
    .max(255)
    .regex(/^tmr_[A-Za-z0-9]+$/, 'Must be a Stripe Terminal reader id (tmr_...)')
    .optional()
    .describe('The Stripe Terminal reader (`tmr_...`) that takes the payment; required to take a payment, here or in the payment’s configuration.'),
});
export type StripePosConfiguration = z.infer<typeof StripePosConfiguration>;

export const StripeQrConfiguration = z.strictObject({
  payment_method_type: z.enum(['promptpay', 'paynow']).default('promptpay').describe('`promptpay` (THB) or `paynow` (SGD).'),
  qr_ttl_seconds: z.number().int().min(60).max(86_400).default(900).describe('A pending QR payment expires after this many seconds.'),
  billing_email: z.email().max(254).optional().describe('Sent as the payment method’s billing email (Stripe asks for one with PromptPay).'),
});
export type StripeQrConfiguration = z.infer<typeof StripeQrConfiguration>;

type Ctx<C> = ConnectorContext<StripeCredentials, C>;

// ---------------------------------------------------------------------------------------------------------
// HTTP

interface StripeAnswer {
  ok: boolean;
  status: number;
  body: unknown;
  replayed: boolean;
}

function checkKey(ctx: Ctx<unknown>) {
  const key = ctx.credentials?.secret_key;
  const live = typeof key === 'string' && /^(sk|rk)_live_/.test(key);
  const test = typeof key === 'string' && /^(sk|rk)_test_/.test(key);
  if (ctx.environment === 'live' ? !live : !test) {
    throw new ConnectorError('configuration_invalid', `A Stripe ${ctx.environment} key is required in the ${ctx.environment} environment.`, 'stripe_key_environment_mismatch');
  }
}

async function send(ctx: Ctx<unknown>, method: 'GET' | 'POST', path: string, options: { form?: Record<string, FormValue>; idempotencyKey?: string } = {}): Promise<StripeAnswer> {
  checkKey(ctx);
  const headers: Record<string, string> = {
    Authorization: `Bearer ${ctx.credentials.secret_key}`,
    'Stripe-Version': STRIPE_API_VERSION,
    Accept: 'application/json',
  };
  let body: string | undefined;
  if (method === 'POST') {
    headers['Content-Type'] = 'application/x-www-form-urlencoded';
    if (options.idempotencyKey) headers['Idempotency-Key'] = options.idempotencyKey;
    body = encodeForm(options.form ?? {});
  }
  let response: Response;
  let parsed: unknown;
  try {
    response = await ctx.fetch(`${STRIPE_API_BASE}${path}`, { method, headers, body, signal: AbortSignal.timeout(STRIPE_REQUEST_TIMEOUT_MS) });
    const text = await response.text();
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = null;
    }
  } catch (error) {
    throw fetchFailure(error);
  }
  return { ok: response.ok, status: response.status, body: parsed, replayed: response.headers.get('idempotent-replayed') === 'true' };
}

/** A successful answer parsed with `schema`, or the normalized error. */
function expectOk<T>(answer: StripeAnswer, schema: z.ZodType<T>, operation: StripeOperation): T {
  if (!answer.ok) throw normalizeStripeError(answer.status, answer.body, operation);
  const parsed = schema.safeParse(answer.body);
  if (!parsed.success) throw new ConnectorError('unavailable', 'Stripe answered with an unexpected body.', 'stripe_unexpected_response');
  return parsed.data;
}

const path = (...parts: string[]) => parts.map((p) => encodeURIComponent(p)).join('/');

async function retrievePaymentIntent(ctx: Ctx<unknown>, id: string): Promise<StripePaymentIntent> {
  return expectOk(await send(ctx, 'GET', `/v1/payment_intents/${path(id)}`), StripePaymentIntent, 'lookup');
}

/** The PaymentIntent created for our payment, found by its metadata (Search is eventually consistent). */
async function searchPaymentIntent(ctx: Ctx<unknown>, paymentId: string): Promise<StripePaymentIntent | null> {
  const query = new URLSearchParams({ query: metadataQuery('payment_id', paymentId), limit: '10' });
  const list = expectOk(await send(ctx, 'GET', `/v1/payment_intents/search?${query}`), StripeList(StripePaymentIntent), 'lookup');
  return list.data.find((pi) => pi.metadata?.payment_id === paymentId) ?? null;
}

async function findPaymentIntent(ctx: Ctx<unknown>, paymentId: string, reference: string | null): Promise<StripePaymentIntent | null> {
  if (reference !== null) return retrievePaymentIntent(ctx, reference);
  return searchPaymentIntent(ctx, paymentId);
}

async function retrieveRefund(ctx: Ctx<unknown>, id: string): Promise<StripeRefund> {
  return expectOk(await send(ctx, 'GET', `/v1/refunds/${path(id)}`), StripeRefund, 'lookup');
}

const settled = (status: string | null | undefined) => status === 'succeeded' || status === 'failed' || status === 'canceled';

// ---------------------------------------------------------------------------------------------------------
// Payments

function paymentForm(input: { paymentId: string; externalReference: string; description?: string; amount: { minor: number; currency: string } }): Record<string, FormValue> {
  return {
    ...toStripeAmount(input.amount),
    ...(input.description ? { description: input.description } : {}),
    metadata: { payment_id: input.paymentId, external_reference: input.externalReference },
  };
}

async function createPosPayment(ctx: Ctx<StripePosConfiguration>, input: Parameters<ConnectorAdapter['createPayment']>[1]): Promise<PaymentOutcome> {
  const readerId = ctx.configuration?.reader_id;
  if (!readerId) throw new ConnectorError('configuration_invalid', 'A Stripe Terminal reader_id is required to take a POS payment.', 'stripe_reader_missing');
  const answer = await send(ctx, 'POST', '/v1/payment_intents', {
    form: { ...paymentForm(input), payment_method_types: ['card_present'], capture_method: 'automatic' },
    idempotencyKey: `${input.processorIdempotencyKey}:create`,
  });
  const created = expectOk(answer, StripePaymentIntent, 'write');
  // A replayed create (a retry) says how the PaymentIntent was then, not now.
  let pi = answer.replayed ? await retrievePaymentIntent(ctx, created.id) : created;
  if (pi.status === 'requires_payment_method' && !pi.last_payment_error && !(await isOnReader(ctx, readerId, pi.id))) {
    // The PaymentIntent itself guards against a second charge (it succeeds at most once), so the hand-over
    // key may change per attempt: a stored refusal (reader offline) must not be replayed to every retry.
    const handed = await send(ctx, 'POST', `/v1/terminal/readers/${path(readerId)}/process_payment_intent`, {
      form: { payment_intent: pi.id },
      idempotencyKey: `${input.processorIdempotencyKey}:process:${input.attemptNumber}`,
    });
    if (!handed.ok && stripeErrorOf(handed.body)?.code !== 'payment_intent_unexpected_state') throw normalizeStripeError(handed.status, handed.body, 'write');
    pi = await retrievePaymentIntent(ctx, pi.id);
  }
  // A reader still waiting for the card leaves the PaymentIntent in requires_payment_method: pending.
  return toPaymentOutcome(pi);
}

async function isOnReader(ctx: Ctx<unknown>, readerId: string, paymentIntentId: string): Promise<boolean> {
  const reader = expectOk(await send(ctx, 'GET', `/v1/terminal/readers/${path(readerId)}`), StripeReader, 'write');
  return reader.action?.process_payment_intent?.payment_intent === paymentIntentId && reader.action.status === 'in_progress';
}

async function createQrPayment(ctx: Ctx<StripeQrConfiguration>, input: Parameters<ConnectorAdapter['createPayment']>[1]): Promise<PaymentOutcome> {
  const type = ctx.configuration?.payment_method_type ?? 'promptpay';
  if (QR_METHOD_CURRENCY[type] !== input.amount.currency) {
    throw new ConnectorError('configuration_invalid', `Stripe ${type} takes ${QR_METHOD_CURRENCY[type]} only.`, 'stripe_currency_not_supported_by_method');
  }
  const email = ctx.configuration?.billing_email;
  const answer = await send(ctx, 'POST', '/v1/payment_intents', {
    form: {
      ...paymentForm(input),
      payment_method_types: [type],
      payment_method_data: { type, ...(email ? { billing_details: { email } } : {}) },
      confirm: true,
    },
    idempotencyKey: `${input.processorIdempotencyKey}:create`,
  });
  if (!answer.ok) {
    // A confirmation that failed still created the PaymentIntent: the error carries it, and the failure
    // (a card_error is a decline, anything else a failure) is that payment's outcome, not an HTTP error.
    const failed = answer.status < 500 ? StripePaymentIntent.safeParse((answer.body as { error?: { payment_intent?: unknown } } | null)?.error?.payment_intent) : null;
    if (failed?.success && failed.data.status === 'requires_payment_method') {
      return toPaymentOutcome({ ...failed.data, last_payment_error: failed.data.last_payment_error ?? stripeErrorOf(answer.body) ?? { type: 'api_error' } });
    }
    throw normalizeStripeError(answer.status, answer.body, 'write');
  }
  const created = expectOk(answer, StripePaymentIntent, 'write');
  return toPaymentOutcome(answer.replayed ? await retrievePaymentIntent(ctx, created.id) : created);
}

async function cancelReaderAction(ctx: Ctx<StripePosConfiguration>, paymentIntentId: string, idempotencyKey: string) {
  const readerId = ctx.configuration?.reader_id;
  if (!readerId || !(await isOnReader(ctx, readerId, paymentIntentId))) return;
  const answer = await send(ctx, 'POST', `/v1/terminal/readers/${path(readerId)}/cancel_action`, { idempotencyKey });
  // The reader may have finished meanwhile; the PaymentIntent's cancel below decides.
  if (!answer.ok && answer.status >= 500) throw normalizeStripeError(answer.status, answer.body, 'write');
}

/** A void of a succeeded PaymentIntent: a refund of all of it, `canceled` once the refund succeeds. */
async function voidByRefund(ctx: Ctx<unknown>, pi: StripePaymentIntent, paymentId: string, idempotencyKey: string): Promise<PaymentOutcome> {
  const answer = await send(ctx, 'POST', '/v1/refunds', { form: { payment_intent: pi.id, metadata: { payment_id: paymentId, purpose: 'void' } }, idempotencyKey });
  let refund = expectOk(answer, StripeRefund, 'write');
  if (!settled(refund.status) || answer.replayed) refund = await retrieveRefund(ctx, refund.id);
  if (refund.status === 'succeeded') return { status: 'canceled', processorReference: pi.id, action: { type: 'none' }, processorStatus: 'refunded' };
  if (refund.status === 'failed' || refund.status === 'canceled') throw new ConnectorError('declined', 'Stripe could not refund the payment to void it.', refund.failure_reason ?? 'refund_failed');
  throw new ConnectorError('unavailable', 'The void is still being processed by Stripe; retry later.', 'refund_pending');
}

// ---------------------------------------------------------------------------------------------------------
// Refunds

async function findRefund(ctx: Ctx<unknown>, refundId: string, paymentIntentId: string): Promise<StripeRefund | null> {
  if (!paymentIntentId) return null;
  // Refunds have no Search API: list the PaymentIntent's refunds and match our id in their metadata.
  const query = new URLSearchParams({ payment_intent: paymentIntentId, limit: '100' });
  const list = expectOk(await send(ctx, 'GET', `/v1/refunds?${query}`), StripeList(StripeRefund), 'lookup');
  return list.data.find((r) => r.metadata?.refund_id === refundId) ?? null;
}

// ---------------------------------------------------------------------------------------------------------
// Notifications

export async function stripeSignature(secret: string, timestamp: number, rawBody: string): Promise<string> {
  return bytesToHex(await hmacSha256(secret, `${timestamp}.${rawBody}`));
}

async function verifyNotification(ctx: Ctx<unknown>, headers: Headers, rawBody: string, nowMs = Date.now()): Promise<StripeEvent> {
  const refuse = (why: string) => new ConnectorError('invalid_notification', 'The Stripe notification does not verify.', why);
  const header = parseSignatureHeader(headers.get(STRIPE_SIGNATURE_HEADER));
  if (!header) throw refuse('stripe_signature_missing');
  const secret = ctx.credentials?.webhook_secret;
  if (typeof secret !== 'string' || secret.length === 0) throw refuse('stripe_webhook_secret_missing');
  const expected = utf8(await stripeSignature(secret, header.timestamp, rawBody));
  // Every candidate is compared, so the time taken does not tell which one matched.
  let matched = false;
  for (const candidate of header.signatures) matched = timingSafeEqual(utf8(candidate), expected) || matched;
  if (!matched) throw refuse('stripe_signature_mismatch');
  if (!isTimestampFresh(header.timestamp, nowMs)) throw refuse('stripe_signature_stale');
  let event: StripeEvent;
  try {
    event = StripeEvent.parse(JSON.parse(rawBody));
  } catch {
    throw refuse('stripe_event_unreadable');
  }
  if (event.livemode !== undefined && event.livemode !== (ctx.environment === 'live')) throw refuse('stripe_event_livemode_mismatch');
  return event;
}

// ---------------------------------------------------------------------------------------------------------
// The adapter

function stripeAdapter(channel: Channel): ConnectorAdapter<StripeCredentials, StripePosConfiguration & StripeQrConfiguration> {
  return {
    async createPayment(ctx, input) {
      return channel === 'pos' ? createPosPayment(ctx, input) : createQrPayment(ctx, input);
    },

    async getPayment(ctx, input) {
      const pi = await findPaymentIntent(ctx, input.paymentId, input.processorReference);
      if (!pi) throw new ConnectorError('not_found', 'Stripe has no PaymentIntent for this payment.', 'resource_missing');
      return toPaymentOutcome(pi);
    },

    async cancelPayment(ctx, input) {
      const pi = await findPaymentIntent(ctx, input.paymentId, input.processorReference);
      // Nothing was created at Stripe (the create never got through): there is nothing to cancel there.
      if (!pi) return { status: 'canceled', processorReference: null, action: { type: 'none' }, processorStatus: 'not_created' };
      if (pi.status === 'canceled') return toPaymentOutcome(pi);
      if (pi.status === 'succeeded') {
        if (input.currentStatus !== 'approved') {
          // We did not know it succeeded: refuse, and let the notification or reconciliation say approved.
          throw new ConnectorError('declined', 'The payment already succeeded at Stripe.', 'payment_intent_unexpected_state');
        }
        return voidByRefund(ctx, pi, input.paymentId, `${input.processorIdempotencyKey}:void`);
      }
      if (channel === 'pos') await cancelReaderAction(ctx, pi.id, `${input.processorIdempotencyKey}:cancel_action`);
      const answer = await send(ctx, 'POST', `/v1/payment_intents/${path(pi.id)}/cancel`, { idempotencyKey: `${input.processorIdempotencyKey}:cancel` });
      if (answer.ok) return toPaymentOutcome(expectOk(answer, StripePaymentIntent, 'write'));
      if (stripeErrorOf(answer.body)?.code === 'payment_intent_unexpected_state') {
        // It moved meanwhile: canceled already is a yes; anything else is Stripe refusing the cancel.
        const now = await retrievePaymentIntent(ctx, pi.id);
        if (now.status === 'canceled') return toPaymentOutcome(now);
      }
      throw normalizeStripeError(answer.status, answer.body, 'write');
    },

    async refundPayment(ctx, input): Promise<RefundOutcome> {
      const form: Record<string, FormValue> = {
        payment_intent: input.paymentProcessorReference,
        amount: toStripeAmount(input.amount).amount,
        // Stripe's `reason` is an enum; ours is free text, kept in metadata (500 characters at most there).
        metadata: { refund_id: input.refundId, ...(input.reason ? { reason: input.reason.slice(0, 500) } : {}) },
      };
      const answer = await send(ctx, 'POST', '/v1/refunds', { form, idempotencyKey: `${input.processorIdempotencyKey}:refund` });
      const refund = expectOk(answer, StripeRefund, 'write');
      return toRefundOutcome(answer.replayed ? await retrieveRefund(ctx, refund.id) : refund);
    },

    async getRefund(ctx, input) {
      const refund = input.processorReference !== null ? await retrieveRefund(ctx, input.processorReference) : await findRefund(ctx, input.refundId, input.paymentProcessorReference);
      if (!refund) throw new ConnectorError('not_found', 'Stripe has no refund for this refund.', 'resource_missing');
      return toRefundOutcome(refund);
    },

    async parseNotification(ctx, input): Promise<ProcessorNotification> {
      return eventToNotification(await verifyNotification(ctx, input.headers, input.rawBody));
    },
  };
}

const common = {
  provider: 'stripe',
  version: '1',
  status: 'published' as const,
  capabilities: ['payments', 'refunds', 'cancellations'] as ConnectorVersion['capabilities'],
  credentialsSchema: StripeCredentials,
};

export const stripePosV1: ConnectorVersion = {
  ...common,
  id: 'cnv_stripe_pos_v1',
  definitionId: 'cnd_stripe_pos',
  name: 'Stripe Terminal',
  type: 'pos',
  currencies: STRIPE_POS_CURRENCIES,
  configurationSchema: StripePosConfiguration,
  adapter: stripeAdapter('pos'),
};

export const stripeQrV1: ConnectorVersion = {
  ...common,
  id: 'cnv_stripe_qr_v1',
  definitionId: 'cnd_stripe_qr',
  name: 'Stripe QR (PromptPay, PayNow)',
  type: 'qr',
  currencies: STRIPE_QR_CURRENCIES,
  configurationSchema: StripeQrConfiguration,
  adapter: stripeAdapter('qr'),
};
