import { z } from 'zod';
import type Stripe from 'stripe';
import { minorUnits } from '../../domain/money.ts';
import { DisplayConfiguration, displayFor } from '../display.ts';
import { bytesToHex, hmacSha256, timingSafeEqual, utf8 } from '../../lib/encoding.ts';
import type {
  Channel,
  ConnectorAdapter,
  ConnectorContext,
  CreatePaymentInput,
  PaymentLookupInput,
  PaymentOutcome,
  ProcessorDispute,
  ProcessorNotification,
  RefundOutcome,
  TerminalState,
} from '../types.ts';
import { ConnectorError } from '../types.ts';
import { defineVersion, firstPublishedVersion, qrTtlSeconds } from '../version.ts';
import { sendRequest } from '../http.ts';
import {
  StripeDispute,
  StripeDisputeDetail,
  StripeEvent,
  StripeList,
  StripePaymentIntent,
  StripeReader,
  StripeRefund,
  StripeSearchResult,
} from './sdk.ts';
import {
  chargedBackOutcome,
  encodeForm,
  eventToNotification,
  isDisputed,
  isTimestampFresh,
  metadataQuery,
  normalizeStripeError,
  parseSignatureHeader,
  readerDisplayParams,
  paymentSettlement,
  readerPaymentIntent,
  readerTerminalState,
  stripeErrorOf,
  STRIPE_HTTP,
  STRIPE_MAX_AMOUNT,
  toPaymentOutcome,
  toProcessorDispute,
  toRefundOutcome,
  toStripeAmount,
  VOID_REFUND_PURPOSE,
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
export const STRIPE_SIGNATURE_HEADER = 'stripe-signature';
/**
 * How long after it succeeded a refund can still fail: "This process can take up to 30 days from the post
 * date" (https://docs.stripe.com/refunds, "Handle failed refunds").
 */
export const STRIPE_REFUND_REVERSAL_WINDOW_MS = 30 * 86_400_000;
/**
 * How long after a sale its disputes are listed again (NOTES.md, "Disputes found without their notification"):
 * 120 days, the filing window the card networks commonly allow (Visa, Mastercard, American Express, Discover:
 * "Up to 120 days", https://docs.chargeflow.io/docs/reference/concepts/network-timelines). Stripe's own pages
 * found say only that the timeline "varies by card network"; some Visa reasons allow up to 540 days.
 */
export const STRIPE_DISPUTE_WINDOW_MS = 120 * 86_400_000;

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
    .regex(
      /^(sk|rk)_(test|live)_[A-Za-z0-9]{8,}$/,
      'Must be a Stripe secret or restricted key (sk_test_, sk_live_, rk_test_, rk_live_)',
    )
    .describe(
      'Stripe secret key (`sk_test_...`/`sk_live_...`) or restricted key (`rk_...`) of the account; a test key for the test environment, a live key for live. A restricted key must also be allowed to read Disputes (a payment’s chargeback is read from them).',
    ),
  webhook_secret: z
    .string()
    .max(255)
    .regex(/^whsec_[A-Za-z0-9+/=_-]{8,}$/, 'Must be a Stripe webhook signing secret (whsec_...)')
    .describe(
      'Signing secret (`whsec_...`) of the Stripe webhook endpoint pointing at /v1/processor-notifications/{payment_method_id}.',
    ),
});
export type StripeCredentials = z.infer<typeof StripeCredentials>;

export const StripePosConfiguration = z.strictObject({
  reader_id: z
    .string()
    .max(255)
    .regex(/^tmr_[A-Za-z0-9]+$/, 'Must be a Stripe Terminal reader id (tmr_...)')
    .optional()
    .describe(
      'The Stripe Terminal reader (`tmr_...`) that takes the payment; required to take a payment, here or in the payment’s configuration.',
    ),
  // Shown with `set_reader_display` before the reader asks for the card.
  display: DisplayConfiguration.optional(),
});
export type StripePosConfiguration = z.infer<typeof StripePosConfiguration>;

export const StripeQrConfiguration = z.strictObject({
  payment_method_type: z
    .enum(['promptpay', 'paynow'])
    .default('promptpay')
    .describe('`promptpay` (THB) or `paynow` (SGD).'),
  qr_ttl_seconds: qrTtlSeconds(),
  billing_email: z
    .email()
    .max(254)
    .optional()
    .describe('Sent as the payment method’s billing email (Stripe asks for one with PromptPay).'),
});
export type StripeQrConfiguration = z.infer<typeof StripeQrConfiguration>;

type Ctx<C> = ConnectorContext<StripeCredentials, C>;

// ---------------------------------------------------------------------------------------------------------
// HTTP

/**
 * One request to Stripe. Built only by `stripeRequest` below, whose parameters are the official SDK's
 * own types (`Stripe.PaymentIntentCreateParams`...): a field Stripe does not know fails typecheck there.
 */
export interface StripeRequest {
  method: 'GET' | 'POST';
  path: string;
  /** The form body of a POST, or the query of a GET. */
  params?: object;
  idempotencyKey?: string;
}

const path = (...parts: string[]) => parts.map((p) => encodeURIComponent(p)).join('/');

export const stripeRequest = {
  createPaymentIntent: (params: Stripe.PaymentIntentCreateParams, idempotencyKey: string): StripeRequest => ({
    method: 'POST',
    path: '/v1/payment_intents',
    params,
    idempotencyKey,
  }),
  retrievePaymentIntent: (id: string, params: Stripe.PaymentIntentRetrieveParams = {}): StripeRequest => ({
    method: 'GET',
    path: `/v1/payment_intents/${path(id)}`,
    params,
  }),
  searchPaymentIntents: (params: Stripe.PaymentIntentSearchParams): StripeRequest => ({
    method: 'GET',
    path: '/v1/payment_intents/search',
    params,
  }),
  listDisputes: (params: Stripe.DisputeListParams): StripeRequest => ({ method: 'GET', path: '/v1/disputes', params }),
  retrieveDispute: (id: string): StripeRequest => ({ method: 'GET', path: `/v1/disputes/${path(id)}`, params: {} }),
  capturePaymentIntent: (
    id: string,
    params: Stripe.PaymentIntentCaptureParams,
    idempotencyKey: string,
  ): StripeRequest => ({
    method: 'POST',
    path: `/v1/payment_intents/${path(id)}/capture`,
    params,
    idempotencyKey,
  }),
  cancelPaymentIntent: (
    id: string,
    params: Stripe.PaymentIntentCancelParams,
    idempotencyKey: string,
  ): StripeRequest => ({
    method: 'POST',
    path: `/v1/payment_intents/${path(id)}/cancel`,
    params,
    idempotencyKey,
  }),
  createRefund: (params: Stripe.RefundCreateParams, idempotencyKey: string): StripeRequest => ({
    method: 'POST',
    path: '/v1/refunds',
    params,
    idempotencyKey,
  }),
  retrieveRefund: (id: string, params: Stripe.RefundRetrieveParams = {}): StripeRequest => ({
    method: 'GET',
    path: `/v1/refunds/${path(id)}`,
    params,
  }),
  listRefunds: (params: Stripe.RefundListParams): StripeRequest => ({ method: 'GET', path: '/v1/refunds', params }),
  retrieveReader: (id: string): StripeRequest => ({ method: 'GET', path: `/v1/terminal/readers/${path(id)}` }),
  processPaymentIntent: (
    reader: string,
    params: Stripe.Terminal.ReaderProcessPaymentIntentParams,
    idempotencyKey: string,
  ): StripeRequest => ({
    method: 'POST',
    path: `/v1/terminal/readers/${path(reader)}/process_payment_intent`,
    params,
    idempotencyKey,
  }),
  setReaderDisplay: (
    reader: string,
    params: Stripe.Terminal.ReaderSetReaderDisplayParams,
    idempotencyKey: string,
  ): StripeRequest => ({
    method: 'POST',
    path: `/v1/terminal/readers/${path(reader)}/set_reader_display`,
    params,
    idempotencyKey,
  }),
  cancelReaderAction: (
    reader: string,
    params: Stripe.Terminal.ReaderCancelActionParams,
    idempotencyKey: string,
  ): StripeRequest => ({
    method: 'POST',
    path: `/v1/terminal/readers/${path(reader)}/cancel_action`,
    params,
    idempotencyKey,
  }),
};

interface StripeAnswer {
  ok: boolean;
  status: number;
  body: unknown;
  replayed: boolean;
  /** `Stripe-Should-Retry`, when Stripe sets it. */
  shouldRetry: boolean | null;
}

function checkKey(ctx: Ctx<unknown>) {
  const key = ctx.credentials?.secret_key;
  const live = typeof key === 'string' && /^(sk|rk)_live_/.test(key);
  const test = typeof key === 'string' && /^(sk|rk)_test_/.test(key);
  if (ctx.environment === 'live' ? !live : !test) {
    throw new ConnectorError(
      'configuration_invalid',
      `A Stripe ${ctx.environment} key is required in the ${ctx.environment} environment.`,
      'stripe_key_environment_mismatch',
    );
  }
}

async function send(ctx: Ctx<unknown>, request: StripeRequest): Promise<StripeAnswer> {
  checkKey(ctx);
  const headers: Record<string, string> = {
    Authorization: `Bearer ${ctx.credentials.secret_key}`,
    'Stripe-Version': STRIPE_API_VERSION,
    Accept: 'application/json',
  };
  const encoded = encodeForm(request.params ?? {});
  let url = `${STRIPE_API_BASE}${request.path}`;
  let body: string | undefined;
  if (request.method === 'POST') {
    headers['Content-Type'] = 'application/x-www-form-urlencoded';
    if (request.idempotencyKey) headers['Idempotency-Key'] = request.idempotencyKey;
    body = encoded;
  } else if (encoded) {
    url += `?${encoded}`;
  }
  const answer = await sendRequest(ctx.fetch, STRIPE_HTTP, {
    method: request.method,
    url,
    headers,
    ...(body !== undefined ? { body } : {}),
  });
  const shouldRetry = answer.headers.get('stripe-should-retry');
  return {
    ok: answer.ok,
    status: answer.status,
    body: answer.json,
    replayed: answer.headers.get('idempotent-replayed') === 'true',
    shouldRetry: shouldRetry === 'true' ? true : shouldRetry === 'false' ? false : null,
  };
}

const failure = (answer: StripeAnswer, operation: StripeOperation) =>
  normalizeStripeError(answer.status, answer.body, { operation, shouldRetry: answer.shouldRetry });

/** A successful answer parsed with `schema`, or the normalized error. */
function expectOk<T>(answer: StripeAnswer, schema: z.ZodType<T>, operation: StripeOperation): T {
  if (!answer.ok) throw failure(answer, operation);
  const parsed = schema.safeParse(answer.body);
  if (!parsed.success)
    throw new ConnectorError('unavailable', 'Stripe answered with an unexpected body.', 'stripe_unexpected_response');
  return parsed.data;
}

// The lookups expand the charge and its balance transaction: whether it is disputed, and what Stripe booked
// for it (fee, net, available on), come with the PaymentIntent at no extra request.
const CHARGE_EXPANSION = 'latest_charge.balance_transaction';
// Refund requests expand theirs: the money that left the balance.
const REFUND_EXPANSION = 'balance_transaction';

async function retrievePaymentIntent(ctx: Ctx<unknown>, id: string): Promise<StripePaymentIntent> {
  return expectOk(
    await send(ctx, stripeRequest.retrievePaymentIntent(id, { expand: [CHARGE_EXPANSION] })),
    StripePaymentIntent,
    'lookup',
  );
}

/** The PaymentIntent created for our payment, found by its metadata (Search is eventually consistent). */
async function searchPaymentIntent(ctx: Ctx<unknown>, paymentId: string): Promise<StripePaymentIntent | null> {
  const answer = await send(
    ctx,
    stripeRequest.searchPaymentIntents({
      query: metadataQuery('payment_id', paymentId),
      limit: 10,
      expand: [`data.${CHARGE_EXPANSION}`],
    }),
  );
  return (
    expectOk(answer, StripeSearchResult(StripePaymentIntent), 'lookup').data.find(
      (pi) => pi.metadata.payment_id === paymentId,
    ) ?? null
  );
}

async function findPaymentIntent(
  ctx: Ctx<unknown>,
  paymentId: string,
  reference: string | null,
): Promise<StripePaymentIntent | null> {
  if (reference !== null) return retrievePaymentIntent(ctx, reference);
  return searchPaymentIntent(ctx, paymentId);
}

async function retrieveRefund(ctx: Ctx<unknown>, id: string): Promise<StripeRefund> {
  return expectOk(
    await send(ctx, stripeRequest.retrieveRefund(id, { expand: [REFUND_EXPANSION] })),
    StripeRefund,
    'lookup',
  );
}

async function retrieveReader(ctx: Ctx<unknown>, readerId: string): Promise<StripeReader> {
  return expectOk(await send(ctx, stripeRequest.retrieveReader(readerId)), StripeReader, 'write');
}

/**
 * The PaymentIntent's disputes: read only when its charge (expanded by the lookup) says it is disputed, so
 * undisputed payments cost no request; `[]` when it has none, null when the charge was not expanded (the
 * lookup cannot tell). A disputed payment whose disputes cannot be read fails the lookup.
 */
async function disputesOf(
  ctx: Ctx<unknown>,
  pi: StripePaymentIntent,
): Promise<{ summaries: StripeDispute[]; details: unknown[] } | null> {
  if (typeof pi.latest_charge === 'string') return null;
  if (!isDisputed(pi)) return { summaries: [], details: [] };
  const answer = await send(ctx, stripeRequest.listDisputes({ payment_intent: pi.id, limit: 100 }));
  const list = expectOk(answer, StripeList(StripeDispute), 'lookup');
  return { summaries: list.data, details: (answer.body as { data: unknown[] }).data };
}

/**
 * The lookup's outcome with what the disputes say: `charged_back` once one is lost (the summary), and
 * every dispute that can be one of ours (`toProcessorDispute`).
 */
async function withDisputes(
  ctx: Ctx<unknown>,
  pi: StripePaymentIntent,
  otherwise: () => Promise<PaymentOutcome>,
): Promise<PaymentOutcome> {
  const disputes = await disputesOf(ctx, pi);
  const lost = disputes ? chargedBackOutcome(pi, disputes.summaries) : null;
  const outcome = lost ? { ...lost, ...paymentSettlement(pi) } : await otherwise();
  if (!disputes) return outcome;
  return { ...outcome, disputes: ourDisputes(disputes.details, pi.id) };
}

/** Of Disputes as Stripe answered them, those that are ours and the PaymentIntent's (`toProcessorDispute`). */
function ourDisputes(details: readonly unknown[], paymentIntentId: string): ProcessorDispute[] {
  return details.flatMap((item) => {
    const detail = StripeDisputeDetail.safeParse(item);
    const dispute = detail.success ? toProcessorDispute(detail.data) : null;
    return dispute && dispute.paymentProcessorReference === paymentIntentId ? [dispute] : [];
  });
}

/**
 * Every dispute of the PaymentIntent: GET /v1/disputes?payment_intent=… (`DisputeListParams.payment_intent`,
 * types/DisputesResource.d.ts), one request whether or not it has any. 100 is the most one page holds (`limit`,
 * "between 1 and 100"); a payment has far fewer disputes.
 */
async function listPaymentIntentDisputes(ctx: Ctx<unknown>, paymentIntentId: string): Promise<ProcessorDispute[]> {
  const answer = await send(ctx, stripeRequest.listDisputes({ payment_intent: paymentIntentId, limit: 100 }));
  expectOk(answer, StripeList(StripeDispute), 'lookup');
  return ourDisputes((answer.body as { data: unknown[] }).data, paymentIntentId);
}

const settled = (status: string | null | undefined) =>
  status === 'succeeded' || status === 'failed' || status === 'canceled';

// ---------------------------------------------------------------------------------------------------------
// Payments

/** Stripe's amount for ours, refused here when Stripe could not take it (more than eight digits). */
function stripeAmount(money: { minor: number; currency: string }) {
  const amount = toStripeAmount(money, minorUnits(money.currency));
  if (amount.amount > STRIPE_MAX_AMOUNT)
    throw new ConnectorError(
      'configuration_invalid',
      'The amount is larger than Stripe accepts for one payment.',
      'stripe_amount_too_large',
    );
  return amount;
}

function paymentIntentParams(input: CreatePaymentInput): Stripe.PaymentIntentCreateParams {
  return {
    ...stripeAmount(input.amount),
    ...(input.description ? { description: input.description } : {}),
    metadata: { payment_id: input.paymentId, external_reference: input.externalReference },
  };
}

/** The reader's current action when it concerns this PaymentIntent, else null. */
function actionFor(reader: StripeReader | null, paymentIntentId: string): StripeReader['action'] {
  return readerPaymentIntent(reader) === paymentIntentId ? (reader?.action ?? null) : null;
}

/**
 * A PaymentIntent authorized but not captured (`requires_capture`: someone switched it to manual capture)
 * is captured under its own key, so what we report is the money taken, as an approval always means here.
 */
async function captureIfAuthorized(
  ctx: Ctx<unknown>,
  pi: StripePaymentIntent,
  idempotencyKey: string,
): Promise<StripePaymentIntent> {
  if (pi.status !== 'requires_capture') return pi;
  const answer = await send(ctx, stripeRequest.capturePaymentIntent(pi.id, {}, `${idempotencyKey}:capture`));
  if (answer.ok && !answer.replayed) return expectOk(answer, StripePaymentIntent, 'write');
  // Captured or canceled meanwhile (or a replayed answer): the PaymentIntent as it is now says which.
  if (answer.ok || stripeErrorOf(answer.body)?.code === 'payment_intent_unexpected_state')
    return retrievePaymentIntent(ctx, pi.id);
  throw failure(answer, 'write');
}

function readerIdOf(ctx: Ctx<StripePosConfiguration>): string {
  const readerId = ctx.configuration?.reader_id;
  if (!readerId)
    throw new ConnectorError(
      'configuration_invalid',
      'A Stripe Terminal reader_id is required to take a POS payment.',
      'stripe_reader_missing',
    );
  return readerId;
}

async function createPosPayment(ctx: Ctx<StripePosConfiguration>, input: CreatePaymentInput): Promise<PaymentOutcome> {
  const readerId = readerIdOf(ctx);
  // Checked before anything is created: a customer must never be shown another total than the one charged.
  const display = displayFor(input, ctx.configuration);
  const answer = await send(
    ctx,
    stripeRequest.createPaymentIntent(
      { ...paymentIntentParams(input), payment_method_types: ['card_present'], capture_method: 'automatic' },
      `${input.processorIdempotencyKey}:create`,
    ),
  );
  const created = expectOk(answer, StripePaymentIntent, 'write');
  // A replayed create (a retry) says how the PaymentIntent was then, not now.
  let pi = answer.replayed ? await retrievePaymentIntent(ctx, created.id) : created;
  let action: StripeReader['action'] = null;
  if (pi.status === 'requires_payment_method' && !pi.last_payment_error) {
    action = actionFor(await retrieveReader(ctx, readerId), pi.id);
    // Not on the reader yet (a first call, or a retry after the reader was offline or busy). A reader that
    // already failed this PaymentIntent ended the attempt: it is not handed over again.
    if (!action) {
      // The PaymentIntent itself guards against a second charge (it succeeds at most once), so the
      // hand-over key may change per attempt: a stored refusal (reader offline) must not be replayed to
      // every retry. Tipping is skipped: the amount approved must be the amount asked.
      if (display) {
        // The cart goes up first, so the customer sees what is being paid before the reader asks for the
        // card; an offline or busy reader refuses here already (TerminalUnavailableError).
        const shown = await send(
          ctx,
          stripeRequest.setReaderDisplay(
            readerId,
            readerDisplayParams(display),
            `${input.processorIdempotencyKey}:display:${input.attemptNumber}`,
          ),
        );
        if (!shown.ok) throw failure(shown, 'write');
      }
      const handed = await send(
        ctx,
        stripeRequest.processPaymentIntent(
          readerId,
          { payment_intent: pi.id, process_config: { skip_tipping: true } },
          `${input.processorIdempotencyKey}:process:${input.attemptNumber}`,
        ),
      );
      if (!handed.ok && stripeErrorOf(handed.body)?.code !== 'payment_intent_unexpected_state')
        throw failure(handed, 'write');
      const reader = handed.ok ? StripeReader.safeParse(handed.body) : null;
      action = reader?.success ? actionFor(reader.data, pi.id) : null;
      pi = await retrievePaymentIntent(ctx, pi.id);
    }
  }
  pi = await captureIfAuthorized(ctx, pi, input.processorIdempotencyKey);
  // A reader still waiting for the card leaves the PaymentIntent in requires_payment_method: pending.
  return toPaymentOutcome(pi, { readerAction: action });
}

async function createQrPayment(ctx: Ctx<StripeQrConfiguration>, input: CreatePaymentInput): Promise<PaymentOutcome> {
  const type = ctx.configuration?.payment_method_type ?? 'promptpay';
  if (QR_METHOD_CURRENCY[type] !== input.amount.currency) {
    throw new ConnectorError(
      'configuration_invalid',
      `Stripe ${type} takes ${QR_METHOD_CURRENCY[type]} only.`,
      'stripe_currency_not_supported_by_method',
    );
  }
  const email = ctx.configuration?.billing_email;
  const params: Stripe.PaymentIntentCreateParams = {
    ...paymentIntentParams(input),
    payment_method_types: [type],
    payment_method_data: { type, ...(email ? { billing_details: { email } } : {}) },
    confirm: true,
  };
  const answer = await send(ctx, stripeRequest.createPaymentIntent(params, `${input.processorIdempotencyKey}:create`));
  if (!answer.ok) {
    // A confirmation that failed still created the PaymentIntent: the error carries it
    // (`StripeRawError.payment_intent`), and the failure is that payment's outcome, not an HTTP error.
    const failed =
      answer.status < 500
        ? StripePaymentIntent.safeParse(
            (answer.body as { error?: { payment_intent?: unknown } } | null)?.error?.payment_intent,
          )
        : null;
    if (failed?.success && failed.data.status === 'requires_payment_method') {
      return toPaymentOutcome({
        ...failed.data,
        last_payment_error: failed.data.last_payment_error ?? stripeErrorOf(answer.body) ?? { type: 'api_error' },
      });
    }
    throw failure(answer, 'write');
  }
  const created = expectOk(answer, StripePaymentIntent, 'write');
  return toPaymentOutcome(answer.replayed ? await retrievePaymentIntent(ctx, created.id) : created);
}

/** Reads the reader of a POS method for what it did with this PaymentIntent; null when it cannot tell. */
async function readerActionFor(
  ctx: Ctx<StripePosConfiguration>,
  pi: StripePaymentIntent,
): Promise<StripeReader['action']> {
  const readerId = ctx.configuration?.reader_id;
  if (!readerId || pi.status !== 'requires_payment_method' || pi.last_payment_error) return null;
  try {
    return actionFor(await retrieveReader(ctx, readerId), pi.id);
  } catch (error) {
    // A lookup answers from the PaymentIntent alone when the reader cannot be read (offline API, removed).
    if (error instanceof ConnectorError) return null;
    throw error;
  }
}

async function cancelReaderAction(ctx: Ctx<StripePosConfiguration>, paymentIntentId: string, idempotencyKey: string) {
  const readerId = ctx.configuration?.reader_id;
  if (!readerId || actionFor(await retrieveReader(ctx, readerId), paymentIntentId)?.status !== 'in_progress') return;
  const answer = await send(ctx, stripeRequest.cancelReaderAction(readerId, {}, idempotencyKey));
  // The reader may have finished meanwhile; the PaymentIntent's cancel below decides.
  if (!answer.ok && answer.status >= 500) throw failure(answer, 'write');
}

/** A void of a succeeded PaymentIntent: a refund of all of it, `canceled` once the refund succeeds. */
async function voidByRefund(
  ctx: Ctx<unknown>,
  pi: StripePaymentIntent,
  paymentId: string,
  idempotencyKey: string,
): Promise<PaymentOutcome> {
  const answer = await send(
    ctx,
    stripeRequest.createRefund(
      { payment_intent: pi.id, metadata: { payment_id: paymentId, purpose: VOID_REFUND_PURPOSE } },
      idempotencyKey,
    ),
  );
  let refund = expectOk(answer, StripeRefund, 'write');
  if (!settled(refund.status) || answer.replayed) refund = await retrieveRefund(ctx, refund.id);
  if (refund.status === 'succeeded')
    return {
      status: 'canceled',
      processorReference: pi.id,
      action: { type: 'none' },
      processorStatus: 'refunded',
      voidRefundReference: refund.id,
    };
  if (refund.status === 'failed' || refund.status === 'canceled')
    throw new ConnectorError(
      'declined',
      'Stripe could not refund the payment to void it.',
      refund.failure_reason ?? 'refund_failed',
    );
  throw new ConnectorError(
    'unavailable',
    'The void is still being processed by Stripe; retry later.',
    'refund_pending',
  );
}

// ---------------------------------------------------------------------------------------------------------
// Refunds

/** A refund of the PaymentIntent whose metadata matches: refunds have no Search API, so the list is read. */
async function findRefundBy(
  ctx: Ctx<unknown>,
  paymentIntentId: string,
  matches: (metadata: Record<string, string>) => boolean,
): Promise<StripeRefund | null> {
  if (!paymentIntentId) return null;
  const list = expectOk(
    await send(
      ctx,
      stripeRequest.listRefunds({ payment_intent: paymentIntentId, limit: 100, expand: [`data.${REFUND_EXPANSION}`] }),
    ),
    StripeList(StripeRefund),
    'lookup',
  );
  return list.data.find((r) => r.metadata !== null && matches(r.metadata)) ?? null;
}

const findRefund = (ctx: Ctx<unknown>, refundId: string, paymentIntentId: string) =>
  findRefundBy(ctx, paymentIntentId, (metadata) => metadata.refund_id === refundId);

/** The refund by which `voidByRefund` voided our payment, if any. */
async function findVoidRefund(ctx: Ctx<unknown>, input: PaymentLookupInput): Promise<StripeRefund | null> {
  const paymentIntent = input.processorReference ?? (await searchPaymentIntent(ctx, input.paymentId))?.id ?? null;
  if (!paymentIntent) return null;
  return findRefundBy(
    ctx,
    paymentIntent,
    (metadata) => metadata.purpose === VOID_REFUND_PURPOSE && metadata.payment_id === input.paymentId,
  );
}

// ---------------------------------------------------------------------------------------------------------
// Notifications

export async function stripeSignature(secret: string, timestamp: number, rawBody: string): Promise<string> {
  return bytesToHex(await hmacSha256(secret, `${timestamp}.${rawBody}`));
}

async function verifyNotification(
  ctx: Ctx<unknown>,
  headers: Headers,
  rawBody: string,
  nowMs = Date.now(),
): Promise<{ event: StripeEvent; object: unknown }> {
  const refuse = (why: string) =>
    new ConnectorError('invalid_notification', 'The Stripe notification does not verify.', why);
  const header = parseSignatureHeader(headers.get(STRIPE_SIGNATURE_HEADER));
  if (!header) throw refuse('stripe_signature_missing');
  const expected = utf8(await stripeSignature(ctx.credentials.webhook_secret, header.timestamp, rawBody));
  // Every candidate is compared, so the time taken does not tell which one matched.
  let matched = false;
  for (const candidate of header.signatures) matched = timingSafeEqual(utf8(candidate), expected) || matched;
  if (!matched) throw refuse('stripe_signature_mismatch');
  if (!isTimestampFresh(header.timestamp, nowMs)) throw refuse('stripe_signature_stale');
  let json: unknown;
  let event: StripeEvent;
  try {
    json = JSON.parse(rawBody);
    event = StripeEvent.parse(json);
  } catch {
    throw refuse('stripe_event_unreadable');
  }
  if (event.livemode !== (ctx.environment === 'live')) throw refuse('stripe_event_livemode_mismatch');
  return { event, object: (json as { data: { object: unknown } }).data.object };
}

// ---------------------------------------------------------------------------------------------------------
// The adapter

function stripeAdapter(
  channel: Channel,
): ConnectorAdapter<StripeCredentials, StripePosConfiguration & StripeQrConfiguration> {
  return {
    async createPayment(ctx, input) {
      return channel === 'pos' ? createPosPayment(ctx, input) : createQrPayment(ctx, input);
    },

    async getPayment(ctx, input) {
      const found = await findPaymentIntent(ctx, input.paymentId, input.processorReference);
      if (!found)
        throw new ConnectorError('not_found', 'Stripe has no PaymentIntent for this payment.', 'resource_missing');
      const pi = await captureIfAuthorized(ctx, found, input.processorIdempotencyKey);
      return withDisputes(ctx, pi, async () =>
        toPaymentOutcome(pi, { readerAction: channel === 'pos' ? await readerActionFor(ctx, pi) : null }),
      );
    },

    async cancelPayment(ctx, input) {
      const pi = await findPaymentIntent(ctx, input.paymentId, input.processorReference);
      // Nothing was created at Stripe (the create never got through): there is nothing to cancel there.
      if (!pi)
        return {
          status: 'canceled',
          processorReference: null,
          action: { type: 'none' },
          processorStatus: 'not_created',
        };
      if (pi.status === 'canceled') return toPaymentOutcome(pi);
      if (pi.status === 'succeeded') {
        if (input.currentStatus !== 'approved') {
          // We did not know it succeeded: refuse, and let the notification or reconciliation say approved.
          throw new ConnectorError(
            'declined',
            'The payment already succeeded at Stripe.',
            'payment_intent_unexpected_state',
          );
        }
        return voidByRefund(ctx, pi, input.paymentId, `${input.processorIdempotencyKey}:void`);
      }
      if (channel === 'pos') await cancelReaderAction(ctx, pi.id, `${input.processorIdempotencyKey}:cancel_action`);
      const answer = await send(
        ctx,
        stripeRequest.cancelPaymentIntent(pi.id, {}, `${input.processorIdempotencyKey}:cancel`),
      );
      if (answer.ok) return toPaymentOutcome(expectOk(answer, StripePaymentIntent, 'write'));
      if (stripeErrorOf(answer.body)?.code === 'payment_intent_unexpected_state') {
        // It moved meanwhile: canceled already is a yes; anything else is Stripe refusing the cancel.
        const now = await retrievePaymentIntent(ctx, pi.id);
        if (now.status === 'canceled') return toPaymentOutcome(now);
      }
      throw failure(answer, 'write');
    },

    async refundPayment(ctx, input): Promise<RefundOutcome> {
      const params: Stripe.RefundCreateParams = {
        payment_intent: input.paymentProcessorReference,
        amount: toStripeAmount(input.amount, minorUnits(input.amount.currency)).amount,
        // Stripe's `reason` is an enum; ours is free text, kept in metadata (500 characters at most there).
        metadata: { refund_id: input.refundId, ...(input.reason ? { reason: input.reason.slice(0, 500) } : {}) },
        expand: [REFUND_EXPANSION],
      };
      const answer = await send(ctx, stripeRequest.createRefund(params, `${input.processorIdempotencyKey}:refund`));
      const refund = expectOk(answer, StripeRefund, 'write');
      return toRefundOutcome(answer.replayed ? await retrieveRefund(ctx, refund.id) : refund);
    },

    async getRefund(ctx, input) {
      const refund =
        input.processorReference !== null
          ? await retrieveRefund(ctx, input.processorReference)
          : await findRefund(ctx, input.refundId, input.paymentProcessorReference);
      if (!refund) throw new ConnectorError('not_found', 'Stripe has no refund for this refund.', 'resource_missing');
      return toRefundOutcome(refund);
    },

    async getVoidRefund(ctx, input) {
      const refund = await findVoidRefund(ctx, input);
      if (!refund)
        throw new ConnectorError('not_found', 'Stripe has no refund voiding this payment.', 'resource_missing');
      return toRefundOutcome(refund);
    },

    async listDisputes(ctx, input) {
      // The PaymentIntent's id is all the list needs: known once collected, so one request.
      const id = input.processorReference ?? (await searchPaymentIntent(ctx, input.paymentId))?.id;
      if (!id)
        throw new ConnectorError('not_found', 'Stripe has no PaymentIntent for this payment.', 'resource_missing');
      return listPaymentIntentDisputes(ctx, id);
    },

    async getDispute(ctx, input) {
      // GET /v1/disputes/{id} ("Retrieve a dispute"): the whole Dispute, as the list and the events carry it.
      const answer = await send(ctx, stripeRequest.retrieveDispute(input.processorDisputeId));
      expectOk(answer, StripeDispute, 'lookup');
      const [dispute] = ourDisputes([answer.body], input.payment.processorReference ?? '');
      if (!dispute)
        throw new ConnectorError('not_found', 'Stripe reports no such dispute of this payment.', 'dispute_other');
      return dispute;
    },

    async parseNotification(ctx, input): Promise<ProcessorNotification> {
      const { event, object } = await verifyNotification(ctx, input.headers, input.rawBody);
      return eventToNotification(event, object);
    },

    ...(channel === 'pos'
      ? {
          // The reader itself says both halves of the terminal's state: its connectivity and its current action.
          async getTerminal(ctx: Ctx<StripePosConfiguration>): Promise<TerminalState> {
            const answer = await send(ctx, stripeRequest.retrieveReader(readerIdOf(ctx)));
            return readerTerminalState(expectOk(answer, StripeReader, 'lookup'));
          },
        }
      : {}),
  };
}

const common = {
  ...firstPublishedVersion('stripe', StripeCredentials),
  refundReversalWindowMs: STRIPE_REFUND_REVERSAL_WINDOW_MS,
  disputeWindowMs: STRIPE_DISPUTE_WINDOW_MS,
};

export const stripePosV1 = defineVersion({
  ...common,
  id: 'cnv_stripe_pos_v1',
  definitionId: 'cnd_stripe_pos',
  name: 'Stripe Terminal',
  type: 'pos',
  currencies: STRIPE_POS_CURRENCIES,
  configurationSchema: StripePosConfiguration,
  adapter: stripeAdapter('pos'),
});

export const stripeQrV1 = defineVersion({
  ...common,
  id: 'cnv_stripe_qr_v1',
  definitionId: 'cnd_stripe_qr',
  name: 'Stripe QR (PromptPay, PayNow)',
  type: 'qr',
  currencies: STRIPE_QR_CURRENCIES,
  configurationSchema: StripeQrConfiguration,
  adapter: stripeAdapter('qr'),
});
