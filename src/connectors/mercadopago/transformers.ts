import { z } from 'zod';
import { isDisputeReason, type DisputeStatus } from '../../domain/disputes.ts';
import { formatAmount, minorUnits, MoneyError } from '../../domain/money.ts';
import type { RefundFailureReason } from '../../domain/reversals.ts';
import { bytesToHex, hmacSha256, sha256Hex, timingSafeEqual, utf8 } from '../../lib/encoding.ts';
import type {
  Channel,
  ConnectorErrorKind,
  CreatePaymentInput,
  Money,
  PaymentAction,
  PaymentOutcome,
  ProcessorDispute,
  ProcessorPaymentStatus,
  ProcessorRefundStatus,
  TerminalState,
} from '../types.ts';
import { ConnectorError, TerminalUnavailableError } from '../types.ts';
import { safeCode, type ProcessorHttp } from '../http.ts';
// Type-only: the SDK is the oracle of every field sent or read, and nothing of it is bundled.
import type {
  ChargebackResponse,
  OrderResponse,
  PaymentResponse,
  RefundResponse,
} from 'mercadopago/dist/clients/order/commonTypes';
import type { CreateOrderConfig, CreateOrderRequest } from 'mercadopago/dist/clients/order/create/types';
import type { RefundRequest } from 'mercadopago/dist/clients/order/refund/types';
import type { UserResponse } from 'mercadopago/dist/clients/user/get/types';
import type { ChargebackResponse as ChargebackApiResponse } from 'mercadopago/dist/clients/chargeback/commonTypes';

/**
 * Pure translations between our connector interface and Mercado Pago's Orders API
 * (https://api.mercadopago.com/v1/orders): the status tables as data, request bodies, error
 * normalization and the `x-signature` notification scheme. Nothing here performs I/O.
 */

/** Fixed: production never talks to anything else; tests replace `ctx.fetch`, not the address. */
export const MERCADOPAGO_API_BASE = 'https://api.mercadopago.com';
/** A signed notification whose `ts` is further than this from now (either way) is refused. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

// ---------------------------------------------------------------------------------------------------
// Status tables (NOTES.md names the source of every row)
// ---------------------------------------------------------------------------------------------------

/**
 * Order `status` → our payment status. `failed` is split by `status_detail` and `action_required` by the
 * channel and detail (see `mapOrder`); a status not in this table is ambiguous and maps to `pending`,
 * never to a final or approving status.
 */
export const ORDER_STATUS_TABLE: Readonly<Record<string, ProcessorPaymentStatus | 'by_status_detail' | 'by_channel'>> =
  {
    created: 'pending',
    at_terminal: 'pending',
    action_required: 'by_channel',
    processing: 'processing',
    processed: 'approved',
    // The payment succeeded; refunds of it are tracked by us as refunds.
    refunded: 'approved',
    canceled: 'canceled',
    cancelled: 'canceled',
    expired: 'expired',
    failed: 'by_status_detail',
    // The payer's bank took the money back: never pending, never plain approved.
    charged_back: 'charged_back',
  };

/**
 * `status_detail`s of `action_required` that wait for someone at the terminal: Mercado Pago's Point
 * flow puts an order there after 40 s of processing and gives it no way out by itself.
 */
export const TERMINAL_CHECK_DETAILS: readonly string[] = ['check_on_terminal'];

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
  'invalid_card_token',
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
  // Mercado Pago refused to refund: a decline, as a sandbox refund ending in .61 (docs/sandbox.md).
  rejected: 'declined',
  failed: 'failed',
  canceled: 'failed',
  cancelled: 'failed',
};

export function isDeclineDetail(detail: string | null | undefined): boolean {
  if (!detail) return false;
  return (
    DECLINE_STATUS_DETAILS.includes(detail) ||
    DECLINE_STATUS_DETAIL_PREFIXES.some((prefix) => detail.startsWith(prefix))
  );
}

/**
 * Point order statuses in which the order is on (or queued for) its terminal, waiting for the customer:
 * `created` ("has not yet been captured by the terminal") and `at_terminal` (Point "Status of an order and a
 * transaction"). Both settle by themselves once someone acts at the device.
 */
export const AT_TERMINAL_STATUSES: readonly string[] = ['created', 'at_terminal'];

/**
 * The cancel of an order already on the terminal: `POST /v1/orders/{id}/cancel` with this header is accepted
 * with HTTP 202, "la order permanece en at_terminal hasta recibir la notificación de cancelación"; Point
 * Smart 1 and 2 with their latest software (news "Cancela orders Point en at_terminal vía API", 2026-10-23,
 * /developers/es/news/2026/10/23/Cancel-Point-orders-in-at-terminal-via-API). Without it only `created`
 * orders cancel (Point "Cancel order" reference: 409 `cannot_cancel_order` otherwise).
 */
export const CANCEL_AT_TERMINAL_HEADER = { 'x-allow-cancelable-status': 'at_terminal' } as const;

/** Whether an order waits for a check at the terminal (Point `action_required`, or any `check_on_terminal`). */
export function needsTerminalCheck(channel: Channel, status: string, statusDetail?: string | null): boolean {
  if (status !== 'action_required') return false;
  return channel === 'pos' || (statusDetail != null && TERMINAL_CHECK_DETAILS.includes(statusDetail));
}

export function mapOrderStatus(
  status: string,
  statusDetail?: string | null,
  paymentStatusDetail?: string | null,
  paymentStatus?: string | null,
): ProcessorPaymentStatus {
  // A chargeback may be reported on the payment transaction while the order still says `processed`.
  if (paymentStatus === 'charged_back' && (status === 'processed' || status === 'refunded')) return 'charged_back';
  const mapped = Object.hasOwn(ORDER_STATUS_TABLE, status) ? ORDER_STATUS_TABLE[status] : undefined;
  if (mapped === undefined || mapped === 'by_channel') return 'pending';
  if (mapped !== 'by_status_detail') return mapped;
  return isDeclineDetail(statusDetail) || isDeclineDetail(paymentStatusDetail) ? 'declined' : 'failed';
}

export function mapRefundStatus(status: string | null | undefined): ProcessorRefundStatus {
  if (!status || !Object.hasOwn(REFUND_STATUS_TABLE, status)) return 'pending';
  return REFUND_STATUS_TABLE[status]!;
}

/**
 * Why a refund failed, in our words. Mercado Pago's material gives refunds no failure reason (the SDK's
 * `RefundResponse` has `status` only), so a rejected refund is `declined` (Mercado Pago refused it) and any
 * other failure `unknown`. NOTES.md: its material shows no refund failing after approval either.
 */
export function refundFailureReason(status: ProcessorRefundStatus): RefundFailureReason | undefined {
  if (status === 'declined') return 'declined';
  return status === 'failed' ? 'unknown' : undefined;
}

// ---------------------------------------------------------------------------------------------------
// Responses: only the fields we read, each checked at compile time against the SDK's own type
// ---------------------------------------------------------------------------------------------------

/**
 * The paths at which `T` (what our schema reads) is not a field of `S` (the SDK's type) of a compatible
 * type, at any depth; `never` when every field conforms. A misspelt or mistyped field in a schema below
 * names itself in the `npm run typecheck` error. `null` is tolerated where the SDK says optional:
 * the schemas accept both, as JSON may carry either.
 */
export type SdkMismatches<T, S, Path extends string = ''> = [T] extends [readonly (infer U)[]]
  ? [S] extends [readonly (infer V)[]]
    ? SdkMismatches<U, NonNullable<V>, `${Path}[]`>
    : Path
  : [T] extends [object]
    ? {
        [K in keyof T & string]-?: K extends keyof S
          ? SdkMismatches<NonNullable<T[K]>, NonNullable<S[K]>, `${Path}.${K}`>
          : `${Path}.${K}`;
      }[keyof T & string]
    : [T] extends [S]
      ? never
      : Path;
/** Compiles only when `T` is `never`: `ExpectConforms<SdkMismatches<Ours, Sdk>>`. */
export type ExpectConforms<T extends never> = T;

/** Identifiers we put into paths and our records: Mercado Pago's are like `ORD01J…`, `PAY01J…`, `REF01J…`. */
const ProcessorId = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9_-]+$/);

const OrderPayment = z.object({
  id: ProcessorId,
  amount: z.string().max(32).nullish(),
  status: z.string().max(64).nullish(),
  status_detail: z.string().max(64).nullish(),
});

const OrderRefund = z.object({
  id: ProcessorId,
  transaction_id: z.string().max(128).nullish(),
  amount: z.string().max(32).nullish(),
  status: z.string().max(64).nullish(),
});

const OrderChargeback = z.object({
  id: z.string().max(128).nullish(),
  transaction_id: z.string().max(128).nullish(),
  status: z.string().max(64).nullish(),
});

export const MercadoPagoOrder = z.object({
  id: ProcessorId,
  type: z.string().max(32).nullish(),
  status: z.string().min(1).max(64),
  status_detail: z.string().max(64).nullish(),
  currency: z.string().max(8).nullish(),
  total_amount: z.string().max(32).nullish(),
  external_reference: z.string().max(256).nullish(),
  type_response: z.object({ qr_data: z.string().max(4096).nullish() }).nullish(),
  transactions: z
    .object({
      payments: z.array(OrderPayment).nullish(),
      refunds: z.array(OrderRefund).nullish(),
      chargebacks: z.array(OrderChargeback).nullish(),
    })
    .nullish(),
});
export type MercadoPagoOrder = z.infer<typeof MercadoPagoOrder>;
export type MercadoPagoOrderRefund = z.infer<typeof OrderRefund>;
export type OrderConformsToSdk = ExpectConforms<SdkMismatches<MercadoPagoOrder, OrderResponse>>;
export type PaymentConformsToSdk = ExpectConforms<SdkMismatches<z.infer<typeof OrderPayment>, PaymentResponse>>;
export type RefundConformsToSdk = ExpectConforms<SdkMismatches<MercadoPagoOrderRefund, RefundResponse>>;
export type ChargebackConformsToSdk = ExpectConforms<
  SdkMismatches<z.infer<typeof OrderChargeback>, ChargebackResponse>
>;

/**
 * GET /v1/chargebacks/{id}. Two sources disagree on its fields: the SDK (`ChargebackResponse`,
 * clients/chargeback/commonTypes.d.ts: `status` "e.g. new, in_review, won, lost", `currency_id`, `reason`,
 * `date_created`) and the API reference "Get chargeback" with the chargeback guides' example answers
 * (`currency`, `coverage_applied`, `documentation_required`, `documentation_status`,
 * `date_documentation_deadline`). Both are read; only the SDK's are held to its type.
 */
const ChargebackSdkFields = z.object({
  id: z.string().min(1).max(128),
  status: z.string().max(64).nullish(),
  amount: z.number().nonnegative().nullish(),
  currency_id: z.string().max(8).nullish(),
  reason: z.string().max(256).nullish(),
  date_created: z.string().max(64).nullish(),
});
export type ChargebackApiConformsToSdk = ExpectConforms<
  SdkMismatches<z.infer<typeof ChargebackSdkFields>, ChargebackApiResponse>
>;
export const MercadoPagoChargeback = ChargebackSdkFields.extend({
  currency: z.string().max(8).nullish(),
  coverage_applied: z.boolean().nullish(),
  documentation_required: z.boolean().nullish(),
  documentation_status: z.string().max(64).nullish(),
  date_documentation_deadline: z.string().max(64).nullish(),
});
export type MercadoPagoChargeback = z.infer<typeof MercadoPagoChargeback>;

/**
 * A chargeback's status in our words, decided in this order (NOTES.md, "Chargebacks", names the source of
 * each row): the decision (`coverage_applied`) first, then the SDK's `status` when it says won or lost, then
 * whether documentation is due; any other open case is `under_review` (the decision is with Mercado Pago and
 * the issuer). Mercado Pago has no inquiry phase in its material: no `warning_*`.
 */
export const CHARGEBACK_DECISIONS: Readonly<Record<string, DisputeStatus>> = { true: 'won', false: 'lost' };
export const CHARGEBACK_SDK_STATUSES: Readonly<Record<string, DisputeStatus>> = { won: 'won', lost: 'lost' };

export function chargebackStatus(chargeback: MercadoPagoChargeback): DisputeStatus {
  const decided = chargeback.coverage_applied;
  if (typeof decided === 'boolean') return CHARGEBACK_DECISIONS[String(decided)]!;
  const status = chargeback.status;
  if (status && Object.hasOwn(CHARGEBACK_SDK_STATUSES, status)) return CHARGEBACK_SDK_STATUSES[status]!;
  const documentation = chargeback.documentation_status ?? 'pending';
  return chargeback.documentation_required === true && documentation === 'pending' ? 'needs_response' : 'under_review';
}

const timeOf = (iso: string | null | undefined) => {
  const ms = typeof iso === 'string' ? Date.parse(iso) : Number.NaN;
  return Number.isFinite(ms) ? ms : null;
};

/**
 * A chargeback as our dispute. The amount is its own (`amount` in `currency`, else `currency_id`), or the
 * order's when it cannot be read; the reason is ours when Mercado Pago's word is one (its example answers
 * say `general`), else `general`. Mercado Pago gives no dates for the money it withholds or returns, so
 * `fundsWithdrawnAt` and `fundsReinstatedAt` stay null.
 */
export function chargebackToDispute(
  chargeback: MercadoPagoChargeback,
  order: Pick<MercadoPagoOrder, 'id' | 'total_amount'>,
  orderCurrency: string,
): ProcessorDispute {
  const currency = (chargeback.currency ?? chargeback.currency_id ?? orderCurrency).toUpperCase();
  const own = typeof chargeback.amount === 'number' ? minorOf(String(chargeback.amount), currency) : null;
  const amount: Money =
    own !== null && own > 0
      ? { minor: own, currency }
      : { minor: minorOf(order.total_amount, orderCurrency) ?? 0, currency: orderCurrency };
  const status = chargebackStatus(chargeback);
  return {
    processorDisputeId: chargeback.id,
    paymentProcessorReference: order.id,
    status,
    amount,
    reason: isDisputeReason(chargeback.reason) ? chargeback.reason : 'general',
    evidenceDueBy: timeOf(chargeback.date_documentation_deadline),
    fundsWithdrawnAt: null,
    fundsReinstatedAt: null,
    processorStatus: [
      chargeback.status,
      chargeback.documentation_status,
      chargeback.coverage_applied == null ? null : `coverage_${chargeback.coverage_applied}`,
    ]
      .filter(Boolean)
      .join('/')
      .slice(0, 128),
  };
}

export const MercadoPagoUser = z.object({ site_id: z.string().max(8) });
export type UserConformsToSdk = ExpectConforms<SdkMismatches<z.infer<typeof MercadoPagoUser>, UserResponse>>;

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
  if (!parsed.success)
    throw new ConnectorError(
      'unavailable',
      'Mercado Pago answered with a body that is not understood.',
      'unexpected_response',
    );
  return parsed.data;
}

export const firstPayment = (order: MercadoPagoOrder) => order.transactions?.payments?.[0];

/** The processor's status word, kept for support only (never in a public response). */
export function processorStatusOf(order: Pick<MercadoPagoOrder, 'status' | 'status_detail'>): string {
  return order.status_detail ? `${order.status}/${order.status_detail}` : order.status;
}

export function orderToOutcome(channel: Channel, order: MercadoPagoOrder): PaymentOutcome {
  const payment = firstPayment(order);
  const status = mapOrderStatus(order.status, order.status_detail, payment?.status_detail, payment?.status);
  const qrData = order.type_response?.qr_data;
  // The code is shown exactly as Mercado Pago produced it: the buyer's app reads it, byte for byte.
  const action: PaymentAction =
    status === 'pending' && needsTerminalCheck(channel, order.status, order.status_detail)
      ? { type: 'check_terminal' }
      : channel === 'qr' && status === 'pending' && typeof qrData === 'string' && qrData.length > 0
        ? { type: 'display_qr', qrData }
        : channel === 'pos' && status === 'pending' && AT_TERMINAL_STATUSES.includes(order.status)
          ? { type: 'at_terminal' }
          : { type: 'none' };
  const declineCode =
    status === 'declined'
      ? isDeclineDetail(payment?.status_detail)
        ? payment?.status_detail
        : order.status_detail
      : undefined;
  return {
    status,
    processorReference: order.id,
    action,
    processorStatus: processorStatusOf(order),
    ...(declineCode ? { declineCode: safeCode(declineCode) ?? 'declined' } : {}),
    // The Orders API reports no fee, net or release date for in-person orders (NOTES.md, "Fees").
    ...(status === 'approved' ? { settlement: null, settlementNullReason: 'not_reported' as const } : {}),
  };
}

/**
 * An amount Mercado Pago wrote, in `currency`'s minor units, or null when unreadable. Its formats vary
 * ("1500", "1500.0", "1500.00" for CLP; "10.5" for ARS): digits beyond the currency's are accepted
 * when they are zeros, never rounded away otherwise.
 */
export function minorOf(value: string | null | undefined, currency: string): number | null {
  if (typeof value !== 'string') return null;
  const match = /^(\d{1,15})(?:\.(\d{1,12}))?$/.exec(value.trim());
  if (!match) return null;
  let digits: number;
  try {
    digits = minorUnits(currency);
  } catch (error) {
    if (error instanceof MoneyError) return null;
    throw error;
  }
  const fraction = match[2] ?? '';
  if (/[1-9]/.test(fraction.slice(digits))) return null;
  const minor = Number(match[1]! + fraction.slice(0, digits).padEnd(digits, '0'));
  return Number.isSafeInteger(minor) ? minor : null;
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
 * `config.qr` and `config.point` of an in-person order: required by the Orders API reference for QR
 * ("Create order", https://www.mercadopago.com/developers/en/reference/in-person-payments/qr-code/orders/create-order/post)
 * and Point ("Create order", https://www.mercadopago.com/developers/en/reference/in-person-payments/point/orders/create-order/post),
 * absent from the SDK's `CreateOrderConfig` (mercadopago 3.6.1, dist/clients/order/create/types.d.ts).
 * The SDK type is extended with exactly these members, nothing else.
 */
export type InPersonOrderConfig = CreateOrderConfig & {
  qr?: { external_pos_id: string; mode: 'static' | 'dynamic' | 'hybrid' };
  point?: { terminal_id: string };
};
/** The create-order body we send: the SDK's `CreateOrderRequest` with the in-person `config` above. */
export type InPersonOrderRequest = Omit<CreateOrderRequest, 'config'> & { config: InPersonOrderConfig };

/**
 * POST /v1/orders. `external_reference` is our payment id (unique, stable across retries, and what a
 * notification or the dashboard shows); the merchant's own reference goes into `description`.
 */
export function buildOrderRequest(
  channel: Channel,
  input: Pick<CreatePaymentInput, 'paymentId' | 'amount' | 'externalReference' | 'description'>,
  configuration: { externalPosId?: string; terminalId?: string; qrTtlSeconds?: number },
): InPersonOrderRequest {
  const amount = amountString(input.amount);
  const description = (
    input.description ? `${input.externalReference}: ${input.description}` : input.externalReference
  ).slice(0, DESCRIPTION_MAX);
  const common = {
    external_reference: input.paymentId,
    description,
    total_amount: amount,
    transactions: { payments: [{ amount }] },
  } satisfies CreateOrderRequest;
  if (channel === 'qr') {
    if (!configuration.externalPosId)
      throw new ConnectorError(
        'configuration_invalid',
        'A Mercado Pago QR payment needs configuration.external_pos_id.',
        'missing_external_pos_id',
      );
    return {
      type: 'qr',
      ...common,
      expiration_time: isoDuration(configuration.qrTtlSeconds ?? 900),
      config: { qr: { external_pos_id: configuration.externalPosId, mode: 'dynamic' } },
    } satisfies InPersonOrderRequest;
  }
  if (!configuration.terminalId)
    throw new ConnectorError(
      'configuration_invalid',
      'A Mercado Pago Point payment needs configuration.terminal_id.',
      'missing_terminal_id',
    );
  return {
    type: 'point',
    ...common,
    config: { point: { terminal_id: configuration.terminalId } },
  } satisfies InPersonOrderRequest;
}

/** POST /v1/orders/{id}/refund: no body refunds the whole order; a partial names the payment transaction. */
export function buildRefundRequest(
  full: boolean,
  paymentTransactionId: string | null | undefined,
  amount: Money,
): RefundRequest | undefined {
  if (full) return undefined;
  if (!paymentTransactionId)
    throw new ConnectorError(
      'unavailable',
      'The Mercado Pago order has no payment transaction to refund.',
      'missing_payment_transaction',
    );
  return { transactions: [{ id: paymentTransactionId, amount: amountString(amount) }] } satisfies RefundRequest;
}

/**
 * Mercado Pago's `X-Idempotency-Key`, derived from ours and the operation, UUID-shaped (the form the
 * reference recommends): the same attempt always sends the same key, different operations never share one.
 */
export async function processorIdempotencyKey(
  purpose: 'order' | 'cancel' | 'refund' | 'void',
  ourKey: string,
): Promise<string> {
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

const every = (kind: ConnectorErrorKind): Record<MercadoPagoOperation, ConnectorErrorKind> => ({
  create: kind,
  lookup: kind,
  cancel: kind,
  refund: kind,
});

/**
 * HTTP status → error kind per operation (NOTES.md, "HTTP errors", names the source of each row).
 * 409 on create is an `X-Idempotency-Key` reused with another body (retryable once resolved:
 * `unavailable`); on cancel or refund a 409 or 422 that is not about the key is the order's state
 * refusing the operation (`declined`). 423 (the key is locked by a request still running) and 424 (a
 * dependency of Mercado Pago failed) leave the outcome of a POST unknown: `timeout`, so the core keeps
 * the operation open and retries with the same key, and never fails it.
 */
export const HTTP_ERROR_TABLE: readonly {
  status: number | 'other_4xx' | '5xx';
  kinds: Record<MercadoPagoOperation, ConnectorErrorKind>;
}[] = [
  { status: 400, kinds: every('configuration_invalid') },
  { status: 401, kinds: every('configuration_invalid') },
  // "Payment Required — transaction processing error" (the SDKs' MPPaymentError): the payment was refused.
  { status: 402, kinds: { create: 'declined', lookup: 'unavailable', cancel: 'declined', refund: 'declined' } },
  { status: 403, kinds: every('configuration_invalid') },
  {
    status: 404,
    kinds: { create: 'configuration_invalid', lookup: 'not_found', cancel: 'not_found', refund: 'not_found' },
  },
  { status: 409, kinds: { create: 'unavailable', lookup: 'unavailable', cancel: 'declined', refund: 'declined' } },
  {
    status: 422,
    kinds: { create: 'configuration_invalid', lookup: 'configuration_invalid', cancel: 'declined', refund: 'declined' },
  },
  { status: 423, kinds: { create: 'timeout', lookup: 'unavailable', cancel: 'timeout', refund: 'timeout' } },
  { status: 424, kinds: { create: 'timeout', lookup: 'unavailable', cancel: 'timeout', refund: 'timeout' } },
  { status: 429, kinds: every('unavailable') },
  { status: 'other_4xx', kinds: every('configuration_invalid') },
  // A 5xx may come after the POST took effect; the same key recovers it, so `unavailable` (retry) is safe.
  { status: '5xx', kinds: every('unavailable') },
];

const MESSAGES: Record<ConnectorErrorKind, string> = {
  configuration_invalid:
    'Mercado Pago refused the request: check the access token and the payment method’s configuration.',
  not_found: 'Mercado Pago does not know this order.',
  unavailable: 'Mercado Pago is unavailable.',
  declined: 'Mercado Pago refused the operation.',
  timeout: 'Mercado Pago did not settle the request; its outcome is unknown until it is retried with the same key.',
  invalid_notification: 'The notification is not understood.',
};

/** The processor's own code: `errors[0].code` of the Orders API, or the older `code` / `error` fields. */
export function processorCodeOf(status: number, body: unknown): string {
  const b = (body && typeof body === 'object' ? body : {}) as { errors?: unknown; code?: unknown; error?: unknown };
  const first =
    Array.isArray(b.errors) && b.errors[0] && typeof b.errors[0] === 'object'
      ? (b.errors[0] as { code?: unknown }).code
      : undefined;
  return safeCode(first) ?? safeCode(b.code) ?? safeCode(b.error) ?? `http_${status}`;
}

const isIdempotencyCode = (code: string) => /idempot/i.test(code);

/**
 * Point "Create order": 409 `already_queued_order_for_terminal`, "La terminal ya tiene una order en espera.
 * Es necesario finalizarla o cancelarla para enviar nuevas orders." Mercado Pago documents no error for an
 * offline terminal: an order for one is created and waits (`created`) until it expires.
 */
export const TERMINAL_BUSY_CODE = 'already_queued_order_for_terminal';

export function normalizeHttpError(operation: MercadoPagoOperation, status: number, body: unknown): ConnectorError {
  const code = processorCodeOf(status, body);
  if (operation === 'create' && status === 409 && code === TERMINAL_BUSY_CODE)
    return new TerminalUnavailableError('busy', 'The Point terminal already has an order waiting.', code);
  const row =
    HTTP_ERROR_TABLE.find((r) => r.status === status) ??
    HTTP_ERROR_TABLE.find((r) => (status >= 500 ? r.status === '5xx' : status >= 400 && r.status === 'other_4xx'))!;
  let kind = row.kinds[operation];
  if (status === 409 && isIdempotencyCode(code)) kind = 'unavailable';
  // The raw body stays here: only the kind, a fixed message and the code leave the connector.
  return new ConnectorError(kind, MESSAGES[kind], code);
}

/** Every call is aborted after 15 s and reported as `timeout` (the outcome is unknown); one that never connected is `unavailable`. */
export const MERCADOPAGO_HTTP: ProcessorHttp = {
  timeoutMs: 15_000,
  timeout: { code: 'timeout', message: MESSAGES.timeout },
  network: { code: 'network_error', message: MESSAGES.unavailable },
};

// ---------------------------------------------------------------------------------------------------
// Terminals (GET /terminals/v1/list)
// ---------------------------------------------------------------------------------------------------

/**
 * The terminals list as the Point reference "Get list of terminals" documents it
 * (/developers/en/reference/in-person-payments/point/terminals/get-terminals/get): `data.terminals[]` with
 * `id`, `pos_id`, `store_id`, `external_pos_id`, `operating_mode` ("PDV | STANDALONE | UNDEFINED"), and
 * `paging` (`total`, `offset`, `limit`; `limit` at most 50). No Mercado Pago SDK has this endpoint:
 * mercadopago 3.6.1 (and sdk-nodejs at 3.3.0) know only the older Point Integration API's
 * `GET /point/integration-api/devices`, whose `Device` type (`clients/point/commonTypes.d.ts`) does not
 * describe this answer. This declaration is therefore the docs', and the schema below is held to it.
 */
export interface DocsTerminalList {
  data: {
    terminals: {
      id: string;
      pos_id?: number;
      store_id?: string | number;
      external_pos_id?: string;
      operating_mode?: string;
    }[];
  };
  paging?: { total?: number; offset?: number; limit?: number };
}

/** The page size of the list: its documented maximum. */
export const TERMINALS_PAGE_SIZE = 50;
/** Pages read at most for one terminal (500 terminals); a larger account should filter by store (not yet). */
export const TERMINALS_MAX_PAGES = 10;

export const MercadoPagoTerminalList = z.object({
  data: z.object({
    terminals: z.array(
      z.object({
        id: z.string().min(1).max(128),
        operating_mode: z.string().max(32).nullish(),
      }),
    ),
  }),
  paging: z.object({ total: z.number().int().nullish() }).nullish(),
});
export type MercadoPagoTerminalList = z.infer<typeof MercadoPagoTerminalList>;
export type TerminalListConformsToDocs = ExpectConforms<SdkMismatches<MercadoPagoTerminalList, DocsTerminalList>>;

/**
 * `operating_mode` → ours. `PDV` and `STANDALONE` (Point reference "Update terminal operation mode": PDV is
 * "integrated via API", STANDALONE "not integrated with the API"); `SELF_SERVICE`, the unattended mode the
 * Point v2 "Configure terminal" page adds; `UNDEFINED` and any other word: unknown.
 */
export const OPERATING_MODE_TABLE: Readonly<Record<string, NonNullable<TerminalState['operatingMode']>>> = {
  PDV: 'pdv',
  SELF_SERVICE: 'self_service',
  STANDALONE: 'standalone',
};

/**
 * A listed terminal as ours. The list says nothing of connectivity or of what the device is doing, so the
 * status is `unknown` whatever the mode: only the mode is known.
 */
export function terminalState(terminal: MercadoPagoTerminalList['data']['terminals'][number]): TerminalState {
  const mode = terminal.operating_mode ?? 'UNDEFINED';
  return {
    processorId: terminal.id,
    status: 'unknown',
    operatingMode: Object.hasOwn(OPERATING_MODE_TABLE, mode) ? OPERATING_MODE_TABLE[mode]! : 'unknown',
    processorStatus: `operating_mode/${mode}`,
  };
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
  if (Math.abs(now / 1000 - timestampSeconds(parsed.ts)) > SIGNATURE_TOLERANCE_SECONDS)
    return { ok: false, reason: 'stale' };
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
