import { z } from '@hono/zod-openapi';
import { formatAmount, MoneyError, parseAmount } from '../../domain/money.ts';
import { bytesToHex, hmacSha256, sha256Hex, timingSafeEqual, utf8 } from '../../lib/encoding.ts';
import type { Channel, ConnectorErrorKind, CreatePaymentInput, Money, PaymentAction, PaymentOutcome, ProcessorPaymentStatus, ProcessorRefundStatus } from '../types.ts';
import { ConnectorError } from '../types.ts';

/**
 * Pure translations between our connector interface and Mercado Pago's Orders API
 * (https://api.mercadopago.com/v1/orders): the status tables as data, request bodies, error
 * normalization and the `x-signature` notification scheme. Nothing here performs I/O.
 */

/** Fixed: production never talks to anything else; tests replace `ctx.fetch`, not the address. */
export const MERCADOPAGO_API_BASE = 'https://api.mercadopago.com';
/** Every call is aborted after this long and reported as `timeout` (the outcome is unknown). */
export const MERCADOPAGO_TIMEOUT_MS = 15_000;
/** A signed notification whose `ts` is further than this from now (either way) is refused. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

// ---------------------------------------------------------------------------------------------------
// Status tables
// ---------------------------------------------------------------------------------------------------

/**
 * Order `status` → our payment status. `failed` is split by `status_detail` (see below); a status not in
 * this table is ambiguous and maps to `pending`, never to a final or approving status.
 */
export const ORDER_STATUS_TABLE: Readonly<Record<string, ProcessorPaymentStatus | 'by_status_detail'>> = {
  created: 'pending',
  at_terminal: 'pending',
  action_required: 'pending',
  processing: 'processing',
  processed: 'approved',
  // The payment succeeded; refunds of it are tracked by us as refunds.
  refunded: 'approved',
  canceled: 'canceled',
  cancelled: 'canceled',
  expired: 'expired',
  failed: 'by_status_detail',
};

/** A `failed` order whose `status_detail` (or its payment's) says the payer's payment was refused is a decline. */
export const DECLINE_STATUS_DETAILS: readonly string[] = [
  'rejected_by_issuer',
  'rejected_by_bank',
  'rejected_high_risk',
  'rejected_by_regulations',
  'rejected_insufficient_data',
  'rejected_other_reason',
  'insufficient_amount',
  'insufficient_funds',
  'high_risk',
  'card_disabled',
  'invalid_security_code',
  'required_call_for_authorize',
  'max_attempts_exceeded',
  'bad_filled_card_data',
];
/** Any other detail starting with one of these is a decline too. */
export const DECLINE_STATUS_DETAIL_PREFIXES: readonly string[] = ['rejected_', 'cc_rejected_'];

/** Refund `status` → our refund status; anything else is `pending`. */
export const REFUND_STATUS_TABLE: Readonly<Record<string, ProcessorRefundStatus>> = {
  processed: 'approved',
  approved: 'approved',
  processing: 'processing',
  in_process: 'pending',
  pending: 'pending',
  created: 'pending',
  // Mercado Pago refused to refund: a decline, as a sandbox refund ending in .61 (CONTRACT.md).
  rejected: 'declined',
  failed: 'failed',
  canceled: 'failed',
  cancelled: 'failed',
};

export function isDeclineDetail(detail: string | null | undefined): boolean {
  if (!detail) return false;
  return DECLINE_STATUS_DETAILS.includes(detail) || DECLINE_STATUS_DETAIL_PREFIXES.some((prefix) => detail.startsWith(prefix));
}

export function mapOrderStatus(status: string, statusDetail?: string | null, paymentStatusDetail?: string | null): ProcessorPaymentStatus {
  const mapped = Object.hasOwn(ORDER_STATUS_TABLE, status) ? ORDER_STATUS_TABLE[status] : undefined;
  if (mapped === undefined) return 'pending';
  if (mapped !== 'by_status_detail') return mapped;
  return isDeclineDetail(statusDetail) || isDeclineDetail(paymentStatusDetail) ? 'declined' : 'failed';
}

export function mapRefundStatus(status: string | null | undefined): ProcessorRefundStatus {
  if (!status || !Object.hasOwn(REFUND_STATUS_TABLE, status)) return 'pending';
  return REFUND_STATUS_TABLE[status]!;
}

// ---------------------------------------------------------------------------------------------------
// Responses (only the fields we read; anything else is ignored)
// ---------------------------------------------------------------------------------------------------

/** Identifiers we put into paths and our records: Mercado Pago's are like `ORD01J…`, `PAY01J…`, `REF01J…`. */
const ProcessorId = z.string().min(1).max(128).regex(/^[A-Za-z0-9_-]+$/);

const OrderPayment = z.looseObject({
  id: ProcessorId,
  amount: z.string().optional(),
  status: z.string().max(64).optional(),
  status_detail: z.string().max(64).nullish(),
});

const OrderRefund = z.looseObject({
  id: ProcessorId,
  transaction_id: z.string().max(128).nullish(),
  amount: z.string().max(32).nullish(),
  status: z.string().max(64).nullish(),
});

export const MercadoPagoOrder = z.looseObject({
  id: ProcessorId,
  type: z.string().max(32).optional(),
  status: z.string().min(1).max(64),
  status_detail: z.string().max(64).nullish(),
  currency: z.string().max(8).nullish(),
  total_amount: z.string().max(32).nullish(),
  external_reference: z.string().max(256).nullish(),
  type_response: z.looseObject({ qr_data: z.string().max(4096).nullish() }).nullish(),
  transactions: z
    .looseObject({
      payments: z.array(OrderPayment).nullish(),
      refunds: z.array(OrderRefund).nullish(),
    })
    .nullish(),
});
export type MercadoPagoOrder = z.infer<typeof MercadoPagoOrder>;
export type MercadoPagoOrderRefund = z.infer<typeof OrderRefund>;

export const MercadoPagoUser = z.looseObject({ site_id: z.string().max(8) });

/** Mercado Pago's sites (`site_id` of GET /users/me) and their currency: an account charges in its own only. */
export const SITE_CURRENCIES: Readonly<Record<string, string>> = {
  MLA: 'ARS',
  MLB: 'BRL',
  MLM: 'MXN',
  MLC: 'CLP',
  MCO: 'COP',
  MLU: 'UYU',
  MPE: 'PEN',
};

/** Parses a successful answer; a body we cannot read is the processor misbehaving, never a crash. */
export function parseAnswer<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new ConnectorError('unavailable', 'Mercado Pago answered with a body that is not understood.', 'unexpected_response');
  return parsed.data;
}

export const firstPayment = (order: MercadoPagoOrder) => order.transactions?.payments?.[0];

/** The processor's status word, kept for support only (never in a public response). */
export function processorStatusOf(order: Pick<MercadoPagoOrder, 'status' | 'status_detail'>): string {
  return order.status_detail ? `${order.status}/${order.status_detail}` : order.status;
}

export function orderToOutcome(channel: Channel, order: MercadoPagoOrder): PaymentOutcome {
  const payment = firstPayment(order);
  const status = mapOrderStatus(order.status, order.status_detail, payment?.status_detail);
  const qrData = order.type_response?.qr_data;
  // The code is shown exactly as Mercado Pago produced it: the buyer's app reads it, byte for byte.
  const action: PaymentAction = channel === 'qr' && status === 'pending' && typeof qrData === 'string' && qrData.length > 0 ? { type: 'display_qr', qrData } : { type: 'none' };
  const declineCode = status === 'declined' ? (isDeclineDetail(payment?.status_detail) ? payment?.status_detail : order.status_detail) : undefined;
  return {
    status,
    processorReference: order.id,
    action,
    processorStatus: processorStatusOf(order),
    ...(declineCode ? { declineCode: safeCode(declineCode) ?? 'declined' } : {}),
  };
}

/** The amount of a decimal string of the order in `currency`'s minor units, or null when unreadable. */
export function minorOf(value: string | null | undefined, currency: string): number | null {
  if (typeof value !== 'string') return null;
  try {
    return parseAmount(value, currency);
  } catch (error) {
    if (error instanceof MoneyError) return null;
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------------------

/** Amounts travel as decimal strings with exactly the currency's minor digits ("10.50", CLP "1500"). */
export const amountString = (amount: Money) => formatAmount(amount.minor, amount.currency);

/** ISO 8601 duration of Mercado Pago's `expiration_time` ("PT15M", "PT1H30M", "PT90S" → "PT1M30S"). */
export function isoDuration(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return `PT${h ? `${h}H` : ''}${m ? `${m}M` : ''}${s || (!h && !m) ? `${s}S` : ''}`;
}

/** Orders API `description` limit we keep to (the reference documents a short free text). */
export const DESCRIPTION_MAX = 150;

/**
 * POST /v1/orders. `external_reference` is our payment id (unique, stable across retries, and what a
 * notification or the dashboard shows); the merchant's own reference goes into `description`.
 */
export function buildOrderRequest(
  channel: Channel,
  input: Pick<CreatePaymentInput, 'paymentId' | 'amount' | 'externalReference' | 'description'>,
  configuration: { externalPosId?: string; terminalId?: string; qrTtlSeconds?: number },
): Record<string, unknown> {
  const amount = amountString(input.amount);
  const description = (input.description ? `${input.externalReference}: ${input.description}` : input.externalReference).slice(0, DESCRIPTION_MAX);
  const common = {
    external_reference: input.paymentId,
    description,
    total_amount: amount,
    transactions: { payments: [{ amount }] },
  };
  if (channel === 'qr') {
    return {
      type: 'qr',
      ...common,
      expiration_time: isoDuration(configuration.qrTtlSeconds ?? 900),
      config: { qr: { external_pos_id: configuration.externalPosId, mode: 'dynamic' } },
    };
  }
  return { type: 'point', ...common, config: { point: { terminal_id: configuration.terminalId } } };
}

/** POST /v1/orders/{id}/refund: no body refunds the whole order; a partial names the payment transaction. */
export function buildRefundRequest(full: boolean, paymentTransactionId: string | undefined, amount: Money): Record<string, unknown> | undefined {
  if (full) return undefined;
  if (!paymentTransactionId) throw new ConnectorError('unavailable', 'The Mercado Pago order has no payment transaction to refund.', 'missing_payment_transaction');
  return { transactions: [{ id: paymentTransactionId, amount: amountString(amount) }] };
}

/**
 * Mercado Pago's `X-Idempotency-Key`, derived from ours and the operation, UUID-shaped (the form the
 * reference recommends): the same attempt always sends the same key, different operations never share one.
 */
export async function processorIdempotencyKey(purpose: 'order' | 'cancel' | 'refund' | 'void', ourKey: string): Promise<string> {
  const hex = await sha256Hex(`mercadopago:${purpose}:${ourKey}`);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

export function currencyOfSite(siteId: string): string | null {
  return Object.hasOwn(SITE_CURRENCIES, siteId) ? SITE_CURRENCIES[siteId]! : null;
}

// ---------------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------------

export type MercadoPagoOperation = 'create' | 'lookup' | 'cancel' | 'refund';

/**
 * HTTP status → error kind per operation. 409 is an `X-Idempotency-Key` reused with another body on
 * create (retryable once the conflict is resolved: `unavailable`); on cancel or refund a 409 or 422 that
 * is not about the key is the order's state refusing the operation (`declined`).
 */
export const HTTP_ERROR_TABLE: readonly { status: number | 'other_4xx' | '5xx'; kinds: Record<MercadoPagoOperation, ConnectorErrorKind> }[] = [
  { status: 400, kinds: { create: 'configuration_invalid', lookup: 'configuration_invalid', cancel: 'configuration_invalid', refund: 'configuration_invalid' } },
  { status: 401, kinds: { create: 'configuration_invalid', lookup: 'configuration_invalid', cancel: 'configuration_invalid', refund: 'configuration_invalid' } },
  { status: 403, kinds: { create: 'configuration_invalid', lookup: 'configuration_invalid', cancel: 'configuration_invalid', refund: 'configuration_invalid' } },
  { status: 404, kinds: { create: 'configuration_invalid', lookup: 'not_found', cancel: 'not_found', refund: 'not_found' } },
  { status: 409, kinds: { create: 'unavailable', lookup: 'unavailable', cancel: 'declined', refund: 'declined' } },
  { status: 422, kinds: { create: 'configuration_invalid', lookup: 'configuration_invalid', cancel: 'declined', refund: 'declined' } },
  { status: 429, kinds: { create: 'unavailable', lookup: 'unavailable', cancel: 'unavailable', refund: 'unavailable' } },
  { status: 'other_4xx', kinds: { create: 'configuration_invalid', lookup: 'configuration_invalid', cancel: 'configuration_invalid', refund: 'configuration_invalid' } },
  { status: '5xx', kinds: { create: 'unavailable', lookup: 'unavailable', cancel: 'unavailable', refund: 'unavailable' } },
];

const MESSAGES: Record<ConnectorErrorKind, string> = {
  configuration_invalid: 'Mercado Pago refused the request: check the access token and the payment method’s configuration.',
  not_found: 'Mercado Pago does not know this order.',
  unavailable: 'Mercado Pago is unavailable.',
  declined: 'Mercado Pago refused the operation in the order’s current state.',
  timeout: 'Mercado Pago did not answer in time.',
  invalid_notification: 'The notification is not understood.',
};

/** A processor code fit for `details.processor_code`: a short identifier, never free text of the payload. */
export function safeCode(value: unknown): string | undefined {
  if (typeof value === 'number' && Number.isInteger(value)) value = String(value);
  if (typeof value !== 'string') return undefined;
  return /^[A-Za-z0-9_.-]{1,64}$/.test(value) ? value : undefined;
}

/** The processor's own code: `errors[0].code` of the Orders API, or the older `code` / `error` fields. */
export function processorCodeOf(status: number, body: unknown): string {
  const b = (body && typeof body === 'object' ? body : {}) as { errors?: unknown; code?: unknown; error?: unknown };
  const first = Array.isArray(b.errors) && b.errors[0] && typeof b.errors[0] === 'object' ? (b.errors[0] as { code?: unknown }).code : undefined;
  return safeCode(first) ?? safeCode(b.code) ?? safeCode(b.error) ?? `http_${status}`;
}

const isIdempotencyCode = (code: string) => /idempot/i.test(code);

export function normalizeHttpError(operation: MercadoPagoOperation, status: number, body: unknown): ConnectorError {
  const code = processorCodeOf(status, body);
  const row =
    HTTP_ERROR_TABLE.find((r) => r.status === status) ??
    HTTP_ERROR_TABLE.find((r) => (status >= 500 ? r.status === '5xx' : status >= 400 && r.status === 'other_4xx'))!;
  let kind = row.kinds[operation];
  if (status === 409 && isIdempotencyCode(code)) kind = 'unavailable';
  // The raw body stays here: only the kind, a fixed message and the code leave the connector.
  return new ConnectorError(kind, MESSAGES[kind], code);
}

/** A fetch that threw: aborted by our timeout (outcome unknown) or never connected. */
export function normalizeFetchFailure(error: unknown): ConnectorError {
  const name = (error as { name?: unknown } | null)?.name;
  if (name === 'TimeoutError' || name === 'AbortError') return new ConnectorError('timeout', MESSAGES.timeout, 'timeout');
  return new ConnectorError('unavailable', MESSAGES.unavailable, 'network_error');
}

// ---------------------------------------------------------------------------------------------------
// Notifications (`x-signature`)
// ---------------------------------------------------------------------------------------------------

export interface SignatureHeader {
  ts: string;
  v1: string[];
}

/** `ts=1704908010,v1=618c85…` (spaces tolerated); null when `ts` or `v1` is missing or malformed. */
export function parseSignatureHeader(header: string): SignatureHeader | null {
  let ts: string | null = null;
  const v1: string[] = [];
  for (const part of header.split(',')) {
    const index = part.indexOf('=');
    if (index < 0) continue;
    const key = part.slice(0, index).trim();
    const value = part.slice(index + 1).trim();
    if (key === 'ts') ts = value;
    else if (key === 'v1') v1.push(value.toLowerCase());
  }
  if (ts === null || !/^\d{1,16}$/.test(ts) || v1.length === 0 || v1.length > 4) return null;
  return { ts, v1 };
}

/** `ts` in seconds; Mercado Pago has been seen sending milliseconds, which are accepted too. */
export function timestampSeconds(ts: string): number {
  const n = Number(ts);
  return n > 1e11 ? Math.floor(n / 1000) : n;
}

/** The `data.id` as the manifest wants it: lower-cased when alphanumeric, as written otherwise. */
export const manifestDataId = (dataId: string) => (/^[A-Za-z0-9]+$/.test(dataId) ? dataId.toLowerCase() : dataId);

/** `id:{data.id};request-id:{x-request-id};ts:{ts};`, each part omitted when the notification lacks it. */
export function signatureManifest(parts: { dataId?: string | null; requestId?: string | null; ts: string }): string {
  let manifest = '';
  if (parts.dataId) manifest += `id:${manifestDataId(parts.dataId)};`;
  if (parts.requestId) manifest += `request-id:${parts.requestId};`;
  manifest += `ts:${parts.ts};`;
  return manifest;
}

export async function signManifest(secret: string, manifest: string): Promise<string> {
  return bytesToHex(await hmacSha256(secret, manifest));
}

export type SignatureCheck = { ok: true } | { ok: false; reason: 'malformed' | 'stale' | 'mismatch' };

/** Fails closed; compares in constant time; `now` in milliseconds. */
export async function verifySignature(
  secret: string,
  header: string,
  parts: { dataId?: string | null; requestId?: string | null },
  now: number,
): Promise<SignatureCheck> {
  const parsed = parseSignatureHeader(header);
  if (!parsed) return { ok: false, reason: 'malformed' };
  if (Math.abs(now / 1000 - timestampSeconds(parsed.ts)) > SIGNATURE_TOLERANCE_SECONDS) return { ok: false, reason: 'stale' };
  const expected = utf8(await signManifest(secret, signatureManifest({ ...parts, ts: parsed.ts })));
  let match = false;
  for (const candidate of parsed.v1) match = timingSafeEqual(utf8(candidate), expected) || match;
  return match ? { ok: true } : { ok: false, reason: 'mismatch' };
}

/** The notification body (never trusted beyond the order id it names; only used to route). */
export const NotificationBody = z.looseObject({
  id: z.union([z.string(), z.number()]).nullish(),
  type: z.string().max(64).nullish(),
  topic: z.string().max(64).nullish(),
  action: z.string().max(64).nullish(),
  resource: z.string().max(512).nullish(),
  data: z
    .looseObject({
      id: z.union([z.string(), z.number()]).nullish(),
      transactions: z.looseObject({ refunds: z.array(z.looseObject({ id: z.unknown() })).nullish() }).nullish(),
    })
    .nullish(),
});
export type NotificationBody = z.infer<typeof NotificationBody>;

export function parseNotificationBody(rawBody: string): NotificationBody {
  if (!rawBody.trim()) return {};
  let json: unknown;
  try {
    json = JSON.parse(rawBody);
  } catch {
    throw new ConnectorError('invalid_notification', MESSAGES.invalid_notification);
  }
  const parsed = NotificationBody.safeParse(json);
  if (!parsed.success) throw new ConnectorError('invalid_notification', MESSAGES.invalid_notification);
  return parsed.data;
}

/** An id of ours or Mercado Pago's as it may appear in a notification, or null when it is not one. */
export function notificationId(value: unknown): string | null {
  const text = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : value;
  return typeof text === 'string' && ProcessorId.safeParse(text).success ? text : null;
}

/** The refund a refund notification is about: the last refund the body lists, when it lists any. */
export function refundIdOf(body: NotificationBody): string | null {
  const action = body.action ?? '';
  if (!/refund/i.test(action)) return null;
  const refunds = body.data?.transactions?.refunds ?? [];
  for (let i = refunds.length - 1; i >= 0; i--) {
    const id = notificationId(refunds[i]?.id);
    if (id) return id;
  }
  return null;
}
