import { z } from '@hono/zod-openapi';
import type { ConnectorErrorKind, Money, PaymentAction, PaymentOutcome, ProcessorNotification, ProcessorPaymentStatus, ProcessorRefundStatus, RefundOutcome } from '../types.ts';
import { ConnectorError } from '../types.ts';

/**
 * Pure translations between Stripe's API (https://docs.stripe.com/api) and the connector interface:
 * status tables as data, form encoding, amounts, error normalization, signature header parsing and event
 * mapping. Nothing here performs I/O.
 */

// ---------------------------------------------------------------------------------------------------------
// Status tables

/** PaymentIntent `status` → ours. Anything not listed is `pending`: an unknown word never approves. */
export const PAYMENT_INTENT_STATUS_MAP = {
  requires_payment_method: 'pending',
  requires_confirmation: 'pending',
  requires_action: 'pending',
  processing: 'processing',
  // With `capture_method=automatic` this is not expected; if it happens the money is authorized, not captured.
  requires_capture: 'processing',
  succeeded: 'approved',
  canceled: 'canceled',
} as const satisfies Record<string, ProcessorPaymentStatus>;

/**
 * A failed payment attempt (`payment_intent.payment_failed`, or a PaymentIntent back in
 * `requires_payment_method` carrying `last_payment_error`): by the error's `type`.
 */
export const PAYMENT_FAILURE_MAP = {
  card_error: 'declined',
} as const satisfies Record<string, ProcessorPaymentStatus>;
export const PAYMENT_FAILURE_DEFAULT: ProcessorPaymentStatus = 'failed';

/** Refund `status` → ours. Anything not listed is `pending`. */
export const REFUND_STATUS_MAP = {
  succeeded: 'approved',
  pending: 'pending',
  requires_action: 'pending',
  failed: 'failed',
  canceled: 'failed',
} as const satisfies Record<string, ProcessorRefundStatus>;

/** A failed refund whose `failure_reason` is one of these was refused by the card issuer: `declined`. */
export const REFUND_DECLINE_REASONS: readonly string[] = ['declined'];

const lookup = <T extends string>(table: Record<string, T>, key: string | null | undefined, fallback: T): T =>
  typeof key === 'string' && Object.hasOwn(table, key) ? table[key]! : fallback;

// ---------------------------------------------------------------------------------------------------------
// Stripe objects (only the fields used; everything else passes through unread)

const StripeErrorObject = z.looseObject({
  type: z.string().optional(),
  code: z.string().nullish(),
  decline_code: z.string().nullish(),
});
export type StripeErrorObject = z.infer<typeof StripeErrorObject>;

const QrCode = z.looseObject({ data: z.string().nullish() }).nullish();

export const StripePaymentIntent = z.looseObject({
  id: z.string().min(1),
  object: z.literal('payment_intent'),
  status: z.string(),
  amount: z.number().optional(),
  currency: z.string().optional(),
  livemode: z.boolean().optional(),
  metadata: z.record(z.string(), z.string()).nullish(),
  last_payment_error: StripeErrorObject.nullish(),
  next_action: z
    .looseObject({
      type: z.string(),
      promptpay_display_qr_code: QrCode,
      paynow_display_qr_code: QrCode,
    })
    .nullish(),
});
export type StripePaymentIntent = z.infer<typeof StripePaymentIntent>;

export const StripeRefund = z.looseObject({
  id: z.string().min(1),
  object: z.literal('refund'),
  status: z.string().nullish(),
  amount: z.number().optional(),
  failure_reason: z.string().nullish(),
  payment_intent: z.string().nullish(),
  metadata: z.record(z.string(), z.string()).nullish(),
});
export type StripeRefund = z.infer<typeof StripeRefund>;

export const StripeReader = z.looseObject({
  id: z.string().min(1),
  object: z.literal('terminal.reader'),
  action: z
    .looseObject({
      type: z.string(),
      status: z.string(),
      process_payment_intent: z.looseObject({ payment_intent: z.string().nullish() }).nullish(),
    })
    .nullish(),
});
export type StripeReader = z.infer<typeof StripeReader>;

export const StripeList = <T extends z.ZodType>(item: T) => z.looseObject({ data: z.array(item), has_more: z.boolean().optional() });

// ---------------------------------------------------------------------------------------------------------
// Mapping

export function paymentFailureStatus(error: StripeErrorObject | null | undefined): ProcessorPaymentStatus {
  return lookup<ProcessorPaymentStatus>(PAYMENT_FAILURE_MAP, error?.type, PAYMENT_FAILURE_DEFAULT);
}

/**
 * Our status of a PaymentIntent. A PaymentIntent back in `requires_payment_method` with a
 * `last_payment_error` had its attempt fail (a decline at the reader, a failed QR payment): this service
 * makes one attempt per payment, so that is final. `payment_intent.payment_failed` says the same.
 */
export function paymentIntentStatus(pi: Pick<StripePaymentIntent, 'status' | 'last_payment_error'>, eventType?: string): ProcessorPaymentStatus {
  if (eventType === 'payment_intent.payment_failed' || (pi.status === 'requires_payment_method' && pi.last_payment_error)) {
    return paymentFailureStatus(pi.last_payment_error);
  }
  return lookup<ProcessorPaymentStatus>(PAYMENT_INTENT_STATUS_MAP, pi.status, 'pending');
}

/** The QR code's content from `next_action`, unaltered; null when the PaymentIntent shows none. */
export function qrDataOf(pi: Pick<StripePaymentIntent, 'next_action'>): string | null {
  const action = pi.next_action;
  if (!action) return null;
  const code = action.type === 'promptpay_display_qr_code' ? action.promptpay_display_qr_code : action.type === 'paynow_display_qr_code' ? action.paynow_display_qr_code : null;
  return typeof code?.data === 'string' && code.data.length > 0 ? code.data : null;
}

export function toPaymentOutcome(pi: StripePaymentIntent, eventType?: string): PaymentOutcome {
  const status = paymentIntentStatus(pi, eventType);
  const qr = status === 'pending' ? qrDataOf(pi) : null;
  const action: PaymentAction = qr !== null ? { type: 'display_qr', qrData: qr } : { type: 'none' };
  const error = pi.last_payment_error;
  const declineCode = status === 'declined' ? (error?.decline_code ?? error?.code ?? undefined) : undefined;
  return { status, processorReference: pi.id, action, processorStatus: pi.status, ...(declineCode ? { declineCode } : {}) };
}

export function refundStatus(refund: Pick<StripeRefund, 'status' | 'failure_reason'>): ProcessorRefundStatus {
  if (refund.status === 'failed' && typeof refund.failure_reason === 'string' && REFUND_DECLINE_REASONS.includes(refund.failure_reason)) return 'declined';
  return lookup<ProcessorRefundStatus>(REFUND_STATUS_MAP, refund.status, 'pending');
}

export function toRefundOutcome(refund: StripeRefund): RefundOutcome {
  return { status: refundStatus(refund), processorReference: refund.id, processorStatus: refund.status ?? 'unknown' };
}

// ---------------------------------------------------------------------------------------------------------
// Requests

/**
 * Stripe's amounts are integers in the currency's smallest unit, which is ours for every currency we
 * accept (CLP is zero-decimal on both sides), with the currency in lower case.
 */
export function toStripeAmount(money: Money): { amount: number; currency: string } {
  if (!Number.isSafeInteger(money.minor) || money.minor <= 0) throw new ConnectorError('configuration_invalid', 'The amount cannot be sent to Stripe.', 'stripe_invalid_amount');
  return { amount: money.minor, currency: money.currency.toLowerCase() };
}

export type FormValue = string | number | boolean | null | undefined | FormValue[] | { [key: string]: FormValue };

const encodeKeyPart = (part: string) => encodeURIComponent(part);

/**
 * `application/x-www-form-urlencoded` in Stripe's bracket notation: nested objects as `a[b]=`, arrays as
 * `a[]=`, booleans as `true`/`false`; `undefined` and `null` are left out.
 */
export function encodeForm(params: Record<string, FormValue>): string {
  const pairs: string[] = [];
  const walk = (key: string, value: FormValue) => {
    if (value === undefined || value === null) return;
    if (Array.isArray(value)) {
      for (const item of value) walk(`${key}[]`, item);
    } else if (typeof value === 'object') {
      for (const [child, inner] of Object.entries(value)) walk(`${key}[${encodeKeyPart(child)}]`, inner);
    } else {
      pairs.push(`${key}=${encodeURIComponent(String(value))}`);
    }
  };
  for (const [key, value] of Object.entries(params)) walk(encodeKeyPart(key), value);
  return pairs.join('&');
}

/** A Search API query matching one metadata value exactly (single quotes and backslashes escaped). */
export function metadataQuery(key: string, value: string): string {
  const quoted = value.replace(/\\/g, '\\\\').replace(/'/g, "\\'");
  return `metadata['${key}']:'${quoted}'`;
}

// ---------------------------------------------------------------------------------------------------------
// Errors

/**
 * Error codes whose meaning wins over the HTTP status (https://docs.stripe.com/error-codes). A refund
 * the processor refuses for business reasons is `declined`, not a configuration problem; a busy or
 * offline reader is retryable.
 */
export const STRIPE_ERROR_CODE_MAP = {
  charge_already_refunded: 'declined',
  amount_too_large: 'declined',
  charge_disputed: 'declined',
  payment_intent_unexpected_state: 'declined',
  terminal_reader_busy: 'unavailable',
  terminal_reader_offline: 'unavailable',
  terminal_reader_timeout: 'timeout',
  lock_timeout: 'unavailable',
  rate_limit: 'unavailable',
} as const satisfies Record<string, ConnectorErrorKind>;

/** By HTTP status when no code decides; 400 is handled apart (it depends on the operation). */
export const STRIPE_HTTP_STATUS_MAP = {
  401: 'configuration_invalid',
  402: 'declined',
  403: 'configuration_invalid',
  409: 'unavailable',
  429: 'unavailable',
} as const satisfies Record<number, ConnectorErrorKind>;

export type StripeOperation = 'lookup' | 'write';

/** The `error` object of a Stripe error body, when there is one. */
export function stripeErrorOf(body: unknown): StripeErrorObject | null {
  const parsed = z.looseObject({ error: StripeErrorObject }).safeParse(body);
  return parsed.success ? parsed.data.error : null;
}

/**
 * A Stripe error response as a ConnectorError. Only the processor's code survives (decline_code, else
 * code, else type); its message and body stay here.
 */
export function normalizeStripeError(httpStatus: number, body: unknown, operation: StripeOperation): ConnectorError {
  const error = stripeErrorOf(body);
  const processorCode = error?.decline_code ?? error?.code ?? error?.type ?? `http_${httpStatus}`;
  const kind = stripeErrorKind(httpStatus, error, operation);
  return new ConnectorError(kind, MESSAGES[kind], processorCode);
}

function stripeErrorKind(httpStatus: number, error: StripeErrorObject | null, operation: StripeOperation): ConnectorErrorKind {
  if (httpStatus >= 500) return 'unavailable';
  if (error?.type === 'card_error' || httpStatus === 402) return 'declined';
  if (httpStatus === 404) return operation === 'lookup' ? 'not_found' : 'configuration_invalid';
  if (httpStatus === 400 && error?.code === 'resource_missing' && operation === 'lookup') return 'not_found';
  if (error?.code && Object.hasOwn(STRIPE_ERROR_CODE_MAP, error.code)) return STRIPE_ERROR_CODE_MAP[error.code as keyof typeof STRIPE_ERROR_CODE_MAP];
  if (Object.hasOwn(STRIPE_HTTP_STATUS_MAP, httpStatus)) return STRIPE_HTTP_STATUS_MAP[httpStatus as keyof typeof STRIPE_HTTP_STATUS_MAP];
  // 400 invalid_request_error (and idempotency_error: the same key sent with other parameters) is a
  // request this integration should not have made: it will not succeed by retrying.
  if (httpStatus >= 400 && httpStatus < 500) return 'configuration_invalid';
  return 'unavailable';
}

/** A fetch that threw: aborted by its timeout signal, or a network failure. */
export function fetchFailure(error: unknown): ConnectorError {
  const name = (error as { name?: unknown } | null)?.name;
  if (name === 'TimeoutError' || name === 'AbortError') return new ConnectorError('timeout', MESSAGES.timeout, 'stripe_timeout');
  return new ConnectorError('unavailable', MESSAGES.unavailable, 'stripe_network_error');
}

const MESSAGES: Record<ConnectorErrorKind, string> = {
  declined: 'Stripe declined the operation.',
  timeout: 'Stripe did not answer in time.',
  unavailable: 'Stripe is unavailable.',
  configuration_invalid: 'Stripe refused the request: check the payment method’s credentials and configuration.',
  invalid_notification: 'The Stripe notification does not verify.',
  not_found: 'Stripe has no such object.',
};

// ---------------------------------------------------------------------------------------------------------
// Notifications

/** Header tolerance of https://docs.stripe.com/webhooks#verify-manually. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

/**
 * `Stripe-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>...][,v0=...]`. Null when garbled: no single
 * numeric `t`, or no well-formed `v1` (other schemes are ignored, as Stripe's libraries do).
 */
export function parseSignatureHeader(header: string | null): { timestamp: number; signatures: string[] } | null {
  if (!header || header.length > 4096) return null;
  let timestamp: number | null = null;
  const signatures: string[] = [];
  for (const item of header.split(',')) {
    const at = item.indexOf('=');
    if (at <= 0) return null;
    const key = item.slice(0, at).trim();
    const value = item.slice(at + 1).trim();
    if (key === 't') {
      if (timestamp !== null || !/^\d{1,12}$/.test(value)) return null;
      timestamp = Number(value);
    } else if (key === 'v1') {
      if (!/^[0-9a-f]{64}$/.test(value)) return null;
      signatures.push(value);
    }
  }
  if (timestamp === null || signatures.length === 0) return null;
  return { timestamp, signatures };
}

export function isTimestampFresh(timestamp: number, nowMs: number): boolean {
  return Math.abs(nowMs / 1000 - timestamp) <= SIGNATURE_TOLERANCE_SECONDS;
}

export const StripeEvent = z.looseObject({
  id: z.string().min(1).max(255),
  object: z.literal('event'),
  type: z.string().min(1).max(255),
  livemode: z.boolean().optional(),
  data: z.looseObject({ object: z.looseObject({ id: z.string().min(1).max(255), object: z.string() }) }),
});
export type StripeEvent = z.infer<typeof StripeEvent>;

/**
 * A verified event as news. PaymentIntent and Refund events carry the object: its status comes from the
 * tables. Events about other objects point at the PaymentIntent they concern (a charge, a Terminal
 * reader's action) with `status: null`, so the core re-fetches it; any other event names its own object,
 * which the core will not know.
 */
export function eventToNotification(event: StripeEvent): ProcessorNotification {
  const object = event.data.object;
  const base = { eventId: event.id, trusted: true };
  if (object.object === 'payment_intent') {
    const pi = StripePaymentIntent.safeParse(object);
    return { ...base, resource: 'payment', processorReference: object.id, status: pi.success ? paymentIntentStatus(pi.data, event.type) : null };
  }
  if (object.object === 'refund') {
    const refund = StripeRefund.safeParse(object);
    return { ...base, resource: 'refund', processorReference: object.id, status: refund.success ? refundStatus(refund.data) : null };
  }
  if (object.object === 'charge' && typeof object.payment_intent === 'string' && object.payment_intent) {
    return { ...base, resource: 'payment', processorReference: object.payment_intent, status: null };
  }
  if (object.object === 'terminal.reader') {
    const reader = StripeReader.safeParse(object);
    const pi = reader.success ? reader.data.action?.process_payment_intent?.payment_intent : null;
    if (pi) return { ...base, resource: 'payment', processorReference: pi, status: null };
  }
  return { ...base, resource: 'payment', processorReference: object.id, status: null };
}
