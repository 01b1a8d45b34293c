import type { DisputeReason, DisputeStatus } from '../../domain/disputes.ts';
import { formatAmount, minorUnits, MoneyError } from '../../domain/money.ts';
import type { RefundFailureReason } from '../../domain/reversals.ts';
import { base64ToBytes, bytesToBase64, hmacSha256, sha256Hex, timingSafeEqual } from '../../lib/encoding.ts';
import { safeCode, type ProcessorHttp } from '../http.ts';
import type {
  ConnectorErrorKind,
  Money,
  ProcessorPaymentStatus,
  ProcessorRefundStatus,
  TerminalStatus,
} from '../types.ts';
import { ConnectorError } from '../types.ts';
import type {
  CheckoutQrMethod,
  CheckoutResultCode,
  CloudDeviceStatus,
  NotificationItem,
  SdkEventCode,
  TerminalErrorCondition,
  TerminalResult,
} from './sdk.ts';

/**
 * Pure translations between Adyen (Checkout API v72, Terminal API over the Cloud device API, standard webhooks)
 * and the connector interface: endpoints, the one amount conversion, the status tables keyed by the SDK's unions,
 * the HMAC of standard webhooks. Nothing here performs I/O. NOTES.md names the source of every row.
 */

// ---------------------------------------------------------------------------------------------------------
// Endpoints (specs/adyen: the `servers` and the "Going live" sections of each description)

export const CHECKOUT_TEST_BASE = 'https://checkout-test.adyen.com/v72';
/** CheckoutService-v72.json, "Going live": `https://{PREFIX}-checkout-live.adyenpayments.com/checkout/v72`. */
export const checkoutLiveBase = (prefix: string) => `https://${prefix}-checkout-live.adyenpayments.com/checkout/v72`;

export const CLOUD_DEVICE_TEST_BASE = 'https://device-api-test.adyen.com/v1';
/** CloudDeviceService-v1.json `servers`: one live endpoint per data centre. */
export const CLOUD_DEVICE_LIVE_BASES = {
  eu: 'https://device-api-live.adyen.com/v1',
  us: 'https://device-api-live-us.adyen.com/v1',
  au: 'https://device-api-live-au.adyen.com/v1',
  apse: 'https://device-api-live-apse.adyen.com/v1',
} as const;
export type CloudDeviceRegion = keyof typeof CLOUD_DEVICE_LIVE_BASES;

// ---------------------------------------------------------------------------------------------------------
// Amounts: ours are integer minor units of ISO 4217 (src/domain/money.ts); Checkout's are integer minor units
// of Adyen's own currency table, which differs from ISO for a few currencies; the Terminal API's are decimal
// numbers in major units. Every conversion goes through the exact decimal string of the amount, never a float
// product.

/**
 * Minor units per Adyen's "Currency codes" table (docs.adyen.com/development-resources/currency-codes), for the
 * currencies the connector takes and those its tests convert (zero and three decimals). CLP has two decimals at
 * Adyen although ISO 4217 gives it none ("For CLP, CVE, IDR, and ISK the standard has a different number of
 * decimals than shown in our currency codes table"); for the others Adyen agrees with ISO 4217.
 */
export const ADYEN_CURRENCY_DECIMALS: Readonly<Record<string, number>> = {
  USD: 2,
  EUR: 2,
  BRL: 2,
  ARS: 2,
  MXN: 2,
  UYU: 2,
  COP: 2,
  CLP: 2,
  THB: 2,
  SGD: 2,
  PEN: 2,
  MYR: 2,
  JPY: 0,
  KRW: 0,
  IDR: 0,
  BHD: 3,
  JOD: 3,
  KWD: 3,
  OMR: 3,
  TND: 3,
};

const DECIMAL = /^(0|[1-9]\d{0,14})(?:\.(\d{1,12}))?$/;

/** `minor` units of a currency with `digits` decimals as its exact decimal string ("10.50", "1500", "1.250"). */
export function decimalOf(minor: number, digits: number): string {
  if (!Number.isSafeInteger(minor) || minor < 0) throw new RangeError('not an amount');
  if (digits === 0) return String(minor);
  const padded = String(minor).padStart(digits + 1, '0');
  return `${padded.slice(0, -digits)}.${padded.slice(-digits)}`;
}

/** A decimal string as minor units of `digits` decimals; null when it has more (non-zero) digits than that. */
export function minorOfDecimal(decimal: string, digits: number): number | null {
  const match = DECIMAL.exec(decimal);
  if (!match) return null;
  const fraction = match[2] ?? '';
  if (/[1-9]/.test(fraction.slice(digits))) return null;
  const minor = Number(match[1]! + fraction.slice(0, digits).padEnd(digits, '0'));
  return Number.isSafeInteger(minor) ? minor : null;
}

/** A Terminal API amount (a JSON number in major units) as its exact decimal string with `digits` decimals. */
export function decimalOfTerminalAmount(amount: number, digits: number): string | null {
  if (!Number.isFinite(amount) || amount < 0) return null;
  const fixed = amount.toFixed(digits);
  // More precision than the currency has (e.g. 10.505 USD) is no amount of it: never rounded away.
  return Number(fixed) === amount ? fixed : null;
}

const refuseCurrency = () =>
  new ConnectorError('configuration_invalid', 'Adyen does not take this currency here.', 'adyen_currency_unsupported');

export function adyenDecimals(currency: string): number {
  if (!Object.hasOwn(ADYEN_CURRENCY_DECIMALS, currency)) throw refuseCurrency();
  return ADYEN_CURRENCY_DECIMALS[currency]!;
}

function isoDecimals(currency: string): number {
  try {
    return minorUnits(currency);
  } catch (error) {
    if (error instanceof MoneyError) throw refuseCurrency();
    throw error;
  }
}

/** Ours → Checkout `Amount` (Adyen's minor units). */
export function toCheckoutAmount(money: Money): { currency: string; value: number } {
  const value = minorOfDecimal(formatAmount(money.minor, money.currency), adyenDecimals(money.currency));
  if (value === null) throw refuseCurrency();
  return { currency: money.currency, value };
}

/** Checkout `Amount` → ours; null when it is no amount of ours (a unit the currency does not have). */
export function fromCheckoutAmount(amount: { currency: string; value: number }): Money | null {
  const currency = amount.currency.toUpperCase();
  if (!Object.hasOwn(ADYEN_CURRENCY_DECIMALS, currency) || !Number.isSafeInteger(amount.value)) return null;
  try {
    const minor = minorOfDecimal(decimalOf(amount.value, ADYEN_CURRENCY_DECIMALS[currency]!), isoDecimals(currency));
    return minor === null ? null : { minor, currency };
  } catch (error) {
    if (error instanceof ConnectorError || error instanceof RangeError) return null;
    throw error;
  }
}

/** Ours → a Terminal API amount (`AmountsReq.RequestedAmount`: major units, a JSON number). */
export function toTerminalAmount(money: Money): number {
  return Number(decimalOf(money.minor, isoDecimals(money.currency)));
}

/** A Terminal API amount → ours; null when it is no amount of the currency. */
export function fromTerminalAmount(amount: number, currency: string): Money | null {
  const digits = isoDecimals(currency);
  const decimal = decimalOfTerminalAmount(amount, digits);
  const minor = decimal === null ? null : minorOfDecimal(decimal, digits);
  return minor === null ? null : { minor, currency };
}

// ---------------------------------------------------------------------------------------------------------
// Status tables (NOTES.md names the source of every row; a word outside them is pending, never a success)

/** Checkout `PaymentResponse.resultCode` → ours (CheckoutService-v72.json, `PaymentResponse.resultCode`). */
export const CHECKOUT_RESULT_STATUS = {
  Authorised: 'approved',
  Pending: 'pending',
  Received: 'pending',
  PresentToShopper: 'pending',
  RedirectShopper: 'pending',
  IdentifyShopper: 'pending',
  ChallengeShopper: 'pending',
  AuthenticationFinished: 'pending',
  AuthenticationNotRequired: 'pending',
  // Authorised for part of the amount only: never an approval of ours.
  PartiallyAuthorised: 'pending',
  // In the enumeration but not among the documented values: ambiguous.
  Success: 'pending',
  Cancelled: 'canceled',
  Error: 'failed',
  Refused: 'declined',
} as const satisfies Record<CheckoutResultCode, ProcessorPaymentStatus>;

/** Terminal API `Response.Result` (`tapi.Result`); a `Failure` is read by its `ErrorCondition`. */
export const TERMINAL_RESULT_STATUS = {
  Success: 'approved',
  // Approved for part of the amount (a partial approval): never an approval of ours.
  Partial: 'pending',
  Failure: 'by_error_condition',
} as const satisfies Record<TerminalResult, ProcessorPaymentStatus | 'by_error_condition'>;

/**
 * A failed Terminal API payment by `Response.ErrorCondition` (`tapi.ErrorCondition`, TerminalAPI-v1.json
 * `ErrorCondition`). Only outcomes that say the payment did not and will not happen are final; where the terminal
 * could not tell (it did not reach Adyen, a payment still running), it stays pending, so a late AUTHORISATION can
 * still approve it.
 */
export const ERROR_CONDITION_STATUS = {
  // The sale system aborted it (our AbortRequest).
  Aborted: 'canceled',
  // Canceled at the terminal by the customer or cashier, or timed out there.
  Cancel: 'canceled',
  Refusal: 'declined',
  WrongPIN: 'declined',
  InvalidCard: 'declined',
  PaymentRestriction: 'declined',
  // The terminal refused to start it: nothing was collected. Busy, DeviceOut and UnavailableDevice are the service's
  // terminal errors at the create (`ERROR_CONDITION_TERMINAL`), a retry sending the next request; failed only once the
  // terminal refused every request a payment may send (index.ts `TERMINAL_REQUESTS_PER_PAYMENT`).
  Busy: 'failed',
  DeviceOut: 'failed',
  UnavailableDevice: 'failed',
  LoggedOut: 'failed',
  NotAllowed: 'failed',
  MessageFormat: 'failed',
  InsertedCard: 'failed',
  UnavailableService: 'failed',
  // The outcome is unknown to the terminal: Adyen's webhook or a later read decides.
  UnreachableHost: 'pending',
  InProgress: 'pending',
  // Only a TransactionStatus answer says this: the terminal has no such payment (the lookup's `not_found`).
  NotFound: 'pending',
} as const satisfies Record<TerminalErrorCondition, ProcessorPaymentStatus>;

/** The conditions that mean the terminal cannot take a request now (the service's `terminal_unavailable`). */
export const ERROR_CONDITION_TERMINAL = {
  Busy: 'busy',
  DeviceOut: 'offline',
  UnavailableDevice: 'offline',
} as const satisfies Partial<Record<TerminalErrorCondition, 'busy' | 'offline'>>;

/** Cloud device API `DeviceStatusResponse.status` (`clouddevice.DeviceStatus`). */
export const DEVICE_STATUS = { ONLINE: 'online', OFFLINE: 'offline' } as const satisfies Record<
  CloudDeviceStatus,
  TerminalStatus
>;

const lookup = <T>(table: Readonly<Record<string, T>>, key: string | null | undefined, fallback: T): T =>
  typeof key === 'string' && Object.hasOwn(table, key) ? table[key]! : fallback;

export const checkoutStatus = (resultCode: string | null | undefined): ProcessorPaymentStatus =>
  lookup<ProcessorPaymentStatus>(CHECKOUT_RESULT_STATUS, resultCode, 'pending');

/** A Terminal API `Response` as our payment status. */
export function terminalStatus(response: { Result?: string; ErrorCondition?: string }): ProcessorPaymentStatus {
  const byResult = lookup<ProcessorPaymentStatus | 'by_error_condition'>(
    TERMINAL_RESULT_STATUS,
    response.Result,
    'pending',
  );
  if (byResult !== 'by_error_condition') return byResult;
  return lookup<ProcessorPaymentStatus>(ERROR_CONDITION_STATUS, response.ErrorCondition, 'pending');
}

export function terminalUnavailability(condition: string | null | undefined): 'busy' | 'offline' | null {
  return lookup<'busy' | 'offline' | null>(ERROR_CONDITION_TERMINAL, condition, null);
}

// ---------------------------------------------------------------------------------------------------------
// QR methods

/** The QR method a currency gets when the configuration names none (NOTES.md, "QR methods"). */
export const QR_METHOD_BY_CURRENCY: Readonly<Record<string, CheckoutQrMethod>> = {
  BRL: 'pix',
  SGD: 'paynow',
  THB: 'promptpay',
  MYR: 'duitnow',
};
/**
 * The currencies each method takes: each local method its country's currency; WeChat Pay the cross-border
 * processing currencies among ours (USD, EUR; NOTES.md, "Limits": not found in Adyen's stored material).
 */
export const QR_METHOD_CURRENCIES = {
  pix: ['BRL'],
  paynow: ['SGD'],
  promptpay: ['THB'],
  duitnow: ['MYR'],
  wechatpayQR: ['USD', 'EUR'],
} as const satisfies Record<CheckoutQrMethod, readonly string[]>;

export function qrMethodFor(currency: string, configured: CheckoutQrMethod | undefined): CheckoutQrMethod {
  const method = configured ?? lookup<CheckoutQrMethod | undefined>(QR_METHOD_BY_CURRENCY, currency, undefined);
  if (method && (QR_METHOD_CURRENCIES[method] as readonly string[]).includes(currency)) return method;
  throw new ConnectorError(
    'configuration_invalid',
    `No Adyen QR method of this payment method takes ${currency}.`,
    'adyen_qr_method_currency',
  );
}

// ---------------------------------------------------------------------------------------------------------
// Standard webhooks

/**
 * The eventCodes of Webhooks-v1.json (`NotificationRequestItem.eventCode` and the names of its `webhooks`)
 * that the SDK's `NotificationRequestItem.EventCodeEnum` lacks; with the SDK's they make every eventCode.
 */
export type SpecOnlyEventCode =
  | 'ACH_NOTIFICATION_OF_CHANGE'
  | 'AUTHENTICATION'
  | 'DIRECT_DEBIT_NOTICE_OF_CHANGE_NOTIFICATION'
  | 'PREARBITRATION_ACCEPTED'
  | 'PREARBITRATION_DECLINED'
  | 'PREARBITRATION_ISSUER_WITHDRAWN'
  | 'PREARBITRATION_OPEN'
  | 'SCHEME_ARBITRATION'
  | 'SCHEME_ARBITRATION_LOST'
  | 'SCHEME_ARBITRATION_WON';
export type AdyenEventCode = SdkEventCode | SpecOnlyEventCode;

/**
 * What an eventCode says. `payment`: the payment's status when `success` is true / false (null: nothing changes).
 * `refund`: likewise for the refund the item's `pspReference` names. `dispute`: a dispute of the payment in our
 * status, in its first cycle (chargeback) or second (pre-arbitration, second chargeback, scheme arbitration),
 * with the funds moving when the description says so. `ignored`: not news of a payment, refund or dispute of
 * this service.
 */
export type EventRule =
  | { kind: 'payment'; success: ProcessorPaymentStatus | null; failure: ProcessorPaymentStatus | null }
  | { kind: 'refund'; success: ProcessorRefundStatus; failure: ProcessorRefundStatus | null }
  | { kind: 'dispute'; status: DisputeStatus; cycle: 1 | 2; funds?: 'withdrawn' | 'reinstated' }
  | { kind: 'ignored' };

const payment = (success: ProcessorPaymentStatus | null, failure: ProcessorPaymentStatus | null): EventRule => ({
  kind: 'payment',
  success,
  failure,
});
const refund = (success: ProcessorRefundStatus, failure: ProcessorRefundStatus | null): EventRule => ({
  kind: 'refund',
  success,
  failure,
});
const dispute = (status: DisputeStatus, cycle: 1 | 2, funds?: 'withdrawn' | 'reinstated'): EventRule => ({
  kind: 'dispute',
  status,
  cycle,
  ...(funds ? { funds } : {}),
});
const IGNORED: EventRule = { kind: 'ignored' };

/** Every eventCode → what it says (NOTES.md, "Status tables", cites each row's `Webhooks` summary). */
export const EVENT_RULES = {
  AUTHORISATION: payment('approved', 'declined'),
  CANCELLATION: payment('canceled', null),
  CANCEL_OR_REFUND: payment('canceled', null),
  TECHNICAL_CANCEL: payment('canceled', null),
  // "The offer expired, for example, because the shopper abandoned the session": a QR nobody paid.
  OFFER_CLOSED: payment('expired', null),
  PENDING: payment('pending', null),
  REFUND: refund('approved', 'declined'),
  REFUND_FAILED: refund('failed', 'failed'),
  REFUNDED_REVERSED: refund('failed', 'failed'),
  VOID_PENDING_REFUND: refund('failed', null),
  POSTPONED_REFUND: refund('pending', null),
  REQUEST_FOR_INFORMATION: dispute('warning_needs_response', 1),
  NOTIFICATION_OF_CHARGEBACK: dispute('needs_response', 1),
  CHARGEBACK: dispute('needs_response', 1, 'withdrawn'),
  CHARGEBACK_REVERSED: dispute('won', 1, 'reinstated'),
  ISSUER_RESPONSE_TIMEFRAME_EXPIRED: dispute('won', 1),
  DISPUTE_DEFENSE_PERIOD_ENDED: dispute('lost', 1),
  SECOND_CHARGEBACK: dispute('lost', 2, 'withdrawn'),
  PREARBITRATION_OPEN: dispute('needs_response', 2),
  PREARBITRATION_DECLINED: dispute('under_review', 2),
  PREARBITRATION_ACCEPTED: dispute('under_review', 2),
  SCHEME_ARBITRATION: dispute('under_review', 2),
  PREARBITRATION_WON: dispute('won', 2, 'reinstated'),
  PREARBITRATION_ISSUER_WITHDRAWN: dispute('won', 2),
  SCHEME_ARBITRATION_WON: dispute('won', 2, 'reinstated'),
  PREARBITRATION_LOST: dispute('lost', 2),
  SCHEME_ARBITRATION_LOST: dispute('lost', 2),
  INFORMATION_SUPPLIED: IGNORED,
  ISSUER_COMMENTS: IGNORED,
  NOTIFICATION_OF_FRAUD: IGNORED,
  AUTHENTICATION: IGNORED,
  AUTHORISATION_ADJUSTMENT: IGNORED,
  AUTORESCUE: IGNORED,
  CANCEL_AUTORESCUE: IGNORED,
  CAPTURE: IGNORED,
  CAPTURE_FAILED: IGNORED,
  DONATION: IGNORED,
  EXPIRE: IGNORED,
  HANDLED_EXTERNALLY: IGNORED,
  MANUAL_REVIEW_ACCEPT: IGNORED,
  MANUAL_REVIEW_REJECT: IGNORED,
  ORDER_CLOSED: IGNORED,
  ORDER_OPENED: IGNORED,
  PAIDOUT_REVERSED: IGNORED,
  PAYOUT_DECLINE: IGNORED,
  PAYOUT_EXPIRE: IGNORED,
  PAYOUT_THIRDPARTY: IGNORED,
  PROCESS_RETRY: IGNORED,
  RECURRING_CONTRACT: IGNORED,
  REFUND_WITH_DATA: IGNORED,
  REPORT_AVAILABLE: IGNORED,
  ACH_NOTIFICATION_OF_CHANGE: IGNORED,
  DIRECT_DEBIT_NOTICE_OF_CHANGE_NOTIFICATION: IGNORED,
} as const satisfies Record<AdyenEventCode, EventRule>;

export const eventRule = (eventCode: string): EventRule => lookup<EventRule>(EVENT_RULES, eventCode, IGNORED);

/** Why a refund failed, by eventCode: a scheme rejected it, or the money came back (NOTES.md, "Refunds"). */
export const REFUND_FAILURE_REASONS = {
  REFUND: 'declined',
  REFUND_FAILED: 'declined',
  REFUNDED_REVERSED: 'unknown',
  VOID_PENDING_REFUND: 'merchant_request',
} as const satisfies Partial<Record<AdyenEventCode, RefundFailureReason>>;

/**
 * Chargeback reason codes whose dispute category is fraud (Adyen's "Dispute reason codes": Visa 10.1 to 10.5
 * "Fraud"; Mastercard 4837, 4840, 4849, 4863, 4870, 4871): ours `fraudulent`; any other code `general`.
 */
export const FRAUD_REASON_CODES: readonly string[] = [
  '10.1',
  '10.2',
  '10.3',
  '10.4',
  '10.5',
  '4837',
  '4840',
  '4849',
  '4863',
  '4870',
  '4871',
];

export const disputeReason = (code: string | null | undefined): DisputeReason =>
  code && FRAUD_REASON_CODES.includes(code) ? 'fraudulent' : 'general';

/**
 * The fields an item's HMAC signs, in order (docs "Verify HMAC signatures"; the SDK's `HmacValidator.getDataToSign`):
 * `pspReference:originalReference:merchantAccountCode:merchantReference:value:currency:eventCode:success`, an
 * absent field empty.
 */
export function hmacPayload(
  item: Pick<
    NotificationItem,
    'pspReference' | 'originalReference' | 'merchantAccountCode' | 'merchantReference' | 'amount' | 'success'
  > & { eventCode: string },
): string {
  return [
    item.pspReference,
    item.originalReference ?? '',
    item.merchantAccountCode,
    item.merchantReference,
    item.amount.value ?? '',
    item.amount.currency ?? '',
    item.eventCode,
    item.success,
  ].join(':');
}

/** HMAC-SHA256 of the payload with the hex-decoded key, base64: the item's `additionalData.hmacSignature`. */
export async function hmacSignature(hexKey: string, payload: string): Promise<string> {
  const key = new Uint8Array(hexKey.length / 2);
  for (let i = 0; i < key.length; i++) key[i] = Number.parseInt(hexKey.slice(i * 2, i * 2 + 2), 16);
  return bytesToBase64(await hmacSha256(key, payload));
}

/** Fails closed: a missing, malformed or different signature is false; compared in constant time. */
export async function verifyHmac(hexKey: string, payload: string, signature: string | undefined): Promise<boolean> {
  if (typeof signature !== 'string' || !/^[A-Za-z0-9+/]{43}=$/.test(signature)) return false;
  const expected = base64ToBytes(await hmacSignature(hexKey, payload));
  return timingSafeEqual(expected, base64ToBytes(signature));
}

// ---------------------------------------------------------------------------------------------------------
// Terminal API identifiers

/**
 * `MessageHeader.ServiceID` of the payment's PaymentRequest: 1 to 10 characters (TerminalAPI-v1.json
 * `MessageHeader.ServiceID`, `^.{1,10}$`), "unique within the last 48 hours" per SaleID (Adyen, "Verify transaction
 * status"). Derived from the payment's processor key, so every retry and every read of one payment names the
 * same request, and the AbortRequest of a cancel another.
 */
export async function serviceIdOf(purpose: 'payment' | 'abort', processorKey: string): Promise<string> {
  return (await sha256Hex(`adyen:${purpose}:${processorKey}`)).slice(0, 10).toUpperCase();
}

/**
 * The ServiceID of the payment's `request`-th PaymentRequest. A request the terminal refused at once (busy, out of
 * service: `ERROR_CONDITION_TERMINAL`) never started, and a ServiceID is used once: the payment's next request takes
 * the next ServiceID. The first is the one every payment had before.
 */
export const paymentServiceId = (paymentId: string, request: number) =>
  serviceIdOf('payment', request === 1 ? paymentId : `${paymentId}:${request}`);

/** The ServiceID of a read: a read may be repeated any number of times, so it is new each time. */
export function readServiceId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(5));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0'))
    .join('')
    .toUpperCase();
}

/**
 * The payment's PSP reference from a Terminal API PaymentResponse: `POIData.POITransactionID.TransactionID` is
 * `tenderReference.pspReference` (Adyen, "Make a payment": "the PSP reference ... after the period"), and
 * `AdditionalResponse` may carry `pspReference=` too.
 */
export function pspReferenceOf(response: {
  POIData?: { POITransactionID?: { TransactionID?: string } | null } | null;
  Response?: { AdditionalResponse?: string } | null;
}): string | null {
  const transaction = response.POIData?.POITransactionID?.TransactionID ?? '';
  const tail = transaction.split('.').pop() ?? '';
  if (/^[A-Z0-9]{16}$/.test(tail)) return tail;
  const additional = response.Response?.AdditionalResponse ?? '';
  const fromAdditional = /(?:^|&)pspReference=([A-Z0-9]{16})(?:&|$)/.exec(additional)?.[1];
  return fromAdditional ?? null;
}

// ---------------------------------------------------------------------------------------------------------
// HTTP errors

export type AdyenOperation = 'create' | 'lookup' | 'modify';

/**
 * HTTP status → error kind per operation (Checkout and Cloud device API `responses`; NOTES.md, "HTTP errors").
 * A 5xx or no answer after a POST leaves the outcome unknown: the Idempotency-Key (Checkout) or the ServiceID
 * read (Terminal API) recovers it.
 */
export const HTTP_ERROR_KINDS: Readonly<
  Record<number | 'other_4xx' | '5xx', Record<AdyenOperation, ConnectorErrorKind>>
> = {
  400: { create: 'configuration_invalid', lookup: 'configuration_invalid', modify: 'configuration_invalid' },
  401: { create: 'configuration_invalid', lookup: 'configuration_invalid', modify: 'configuration_invalid' },
  403: { create: 'configuration_invalid', lookup: 'configuration_invalid', modify: 'configuration_invalid' },
  404: { create: 'configuration_invalid', lookup: 'not_found', modify: 'not_found' },
  // Checkout "422 - Unprocessable Entity": a field Adyen refuses (create), or a modification the payment's state
  // or balance does not allow (a refund above what is left).
  422: { create: 'configuration_invalid', lookup: 'unavailable', modify: 'declined' },
  429: { create: 'unavailable', lookup: 'unavailable', modify: 'unavailable' },
  other_4xx: { create: 'configuration_invalid', lookup: 'configuration_invalid', modify: 'configuration_invalid' },
  '5xx': { create: 'unavailable', lookup: 'unavailable', modify: 'unavailable' },
};

const MESSAGES: Record<ConnectorErrorKind, string> = {
  configuration_invalid:
    'Adyen refused the request: check the API key, merchant account and the method’s configuration.',
  not_found: 'Adyen does not know this payment.',
  unavailable: 'Adyen is unavailable.',
  declined: 'Adyen refused the operation.',
  timeout: 'Adyen did not answer in time; the outcome is unknown until it is asked again.',
  invalid_notification: 'The Adyen notification does not verify.',
};

export function normalizeHttpError(operation: AdyenOperation, status: number, body: unknown): ConnectorError {
  const row = HTTP_ERROR_KINDS[status] ?? (status >= 500 ? HTTP_ERROR_KINDS['5xx'] : HTTP_ERROR_KINDS.other_4xx)!;
  const kind = row[operation];
  const errorCode = (body && typeof body === 'object' ? (body as { errorCode?: unknown }).errorCode : undefined) as
    | unknown
    | undefined;
  // The body stays here: only the kind, a fixed message and Adyen's code leave the connector.
  return new ConnectorError(kind, MESSAGES[kind], safeCode(errorCode) ?? `http_${status}`);
}

export const messageOf = (kind: ConnectorErrorKind) => MESSAGES[kind];

/** Every call is aborted after 15 s (`timeout`: its outcome unknown); one that never connected is `unavailable`. */
export const ADYEN_HTTP: ProcessorHttp = {
  timeoutMs: 15_000,
  timeout: { code: 'timeout', message: MESSAGES.timeout },
  network: { code: 'network_error', message: MESSAGES.unavailable },
};

/** Epoch milliseconds of an ISO 8601 time Adyen wrote, or null. */
export function timeOf(value: string | null | undefined): number | null {
  const ms = typeof value === 'string' ? Date.parse(value) : Number.NaN;
  return Number.isFinite(ms) ? ms : null;
}
