import { z } from 'zod';
import type Stripe from 'stripe';
import type { DisputeReason, DisputeStatus } from '../../domain/disputes.ts';
import { recordedMinorUnits } from '../../domain/money.ts';
import type { RefundFailureReason } from '../../domain/reversals.ts';
import type {
  ConnectorErrorKind,
  Money,
  PaymentAction,
  PaymentOutcome,
  ProcessorDispute,
  ProcessorNotification,
  ProcessorPaymentStatus,
  ProcessorRefundStatus,
  RefundOutcome,
  TerminalActivity,
  TerminalDisplay,
  TerminalState,
  Settlement,
} from '../types.ts';
import { ConnectorError, TerminalUnavailableError } from '../types.ts';
import type { ProcessorHttp } from '../http.ts';
import {
  referenceId,
  StripeCharge,
  StripeDispute,
  StripeDisputeDetail,
  StripeErrorObject,
  StripePaymentIntent,
  StripeReader,
  StripeRefund,
  type StripeBalanceTransaction,
  type StripeErrorCode,
  type StripeDisputeEventType,
  type StripeErrorType,
  type StripeEvent,
  type StripeEventType,
  type StripeReaderEventType,
} from './sdk.ts';

/**
 * Pure translations between Stripe's API (https://docs.stripe.com/api, version 2024-06-20) and the
 * connector interface: status and error tables as data, keyed by the official SDK's own unions so a value
 * the SDK adds fails typecheck until it is mapped; form encoding, amounts, signature header parsing and
 * event mapping. Nothing here performs I/O. NOTES.md lists every row with its source.
 */

// ---------------------------------------------------------------------------------------------------------
// Status tables

/** `Stripe.PaymentIntent.Status` → ours. A word outside the SDK's union (a later API version) is pending. */
export const PAYMENT_INTENT_STATUS_MAP = {
  requires_payment_method: 'pending',
  requires_confirmation: 'pending',
  requires_action: 'pending',
  processing: 'processing',
  // Authorized, not captured: never approved. The connector captures it (`capture_method` is automatic,
  // so this only arises when the PaymentIntent was changed to manual capture) and reports the result.
  requires_capture: 'processing',
  succeeded: 'approved',
  canceled: 'canceled',
} as const satisfies Record<Stripe.PaymentIntent.Status, ProcessorPaymentStatus>;

/**
 * A failed payment attempt (`payment_intent.payment_failed`, or a PaymentIntent back in
 * `requires_payment_method` carrying `last_payment_error`), by the error's `type`
 * (`Stripe.PaymentIntent.LastPaymentError.Type`). An unknown type is a failure, never a success.
 */
export const PAYMENT_FAILURE_MAP = {
  card_error: 'declined',
  api_error: 'failed',
  idempotency_error: 'failed',
  invalid_request_error: 'failed',
} as const satisfies Record<Stripe.PaymentIntent.LastPaymentError.Type, ProcessorPaymentStatus>;
export const PAYMENT_FAILURE_DEFAULT: ProcessorPaymentStatus = 'failed';

/**
 * Refund statuses. The SDK types `Refund.status` as `string | null`; its documentation (and the API
 * reference) lists these five.
 */
export type StripeRefundStatus = 'pending' | 'requires_action' | 'succeeded' | 'failed' | 'canceled';

/** Refund `status` → ours. `null` or a word not listed is pending. */
export const REFUND_STATUS_MAP = {
  pending: 'pending',
  // Waits on the customer (PromptPay has no native refunds: Stripe emails them for bank details).
  requires_action: 'pending',
  succeeded: 'approved',
  failed: 'failed',
  // A `requires_action` refund the customer never completed expires as canceled: the money stayed.
  canceled: 'failed',
} as const satisfies Record<StripeRefundStatus, ProcessorRefundStatus>;

/** Refund `failure_reason` values the SDK documents (`Refund.failure_reason`). */
export type StripeRefundFailureReason =
  | 'lost_or_stolen_card'
  | 'expired_or_canceled_card'
  | 'charge_for_pending_refund_disputed'
  | 'insufficient_funds'
  | 'declined'
  | 'merchant_request'
  | 'unknown';

/**
 * A failed refund by `failure_reason`: `declined` (the issuer refused it) → declined; every other reason
 * (the card is gone, the balance or a dispute stood in the way, the merchant canceled it) → failed.
 */
export const REFUND_FAILURE_MAP = {
  declined: 'declined',
  lost_or_stolen_card: 'failed',
  expired_or_canceled_card: 'failed',
  charge_for_pending_refund_disputed: 'failed',
  insufficient_funds: 'failed',
  merchant_request: 'failed',
  unknown: 'failed',
} as const satisfies Record<StripeRefundFailureReason, ProcessorRefundStatus>;

/**
 * `failure_reason` → ours. Our set was modeled on Stripe's (src/domain/reversals.ts), so every row is the
 * same word; the table still fails typecheck if either side changes. A reason not listed is `unknown`.
 */
export const REFUND_FAILURE_REASON_MAP = {
  lost_or_stolen_card: 'lost_or_stolen_card',
  expired_or_canceled_card: 'expired_or_canceled_card',
  charge_for_pending_refund_disputed: 'charge_for_pending_refund_disputed',
  insufficient_funds: 'insufficient_funds',
  declined: 'declined',
  merchant_request: 'merchant_request',
  unknown: 'unknown',
} as const satisfies Record<StripeRefundFailureReason, RefundFailureReason>;

/**
 * `Stripe.Terminal.Reader.Action.Status` → what it says of the PaymentIntent it carries. The PaymentIntent
 * is the record of the money and decides whenever it has moved; a reader's `failed` action decides only
 * for a PaymentIntent still waiting for a method with no error of its own (the customer canceled on the
 * reader, the card could not be read): that attempt is over. `null`: the PaymentIntent decides.
 */
export const READER_ACTION_STATUS_MAP = {
  in_progress: 'pending',
  succeeded: null,
  failed: 'failed',
} as const satisfies Record<Stripe.Terminal.Reader.Action.Status, ProcessorPaymentStatus | null>;

/**
 * `Stripe.Dispute.Status` → what a dispute says of its (succeeded) payment. Our `charged_back` is final,
 * and so is only `lost` at Stripe (closing a dispute "is irreversible"; a lost dispute keeps the funds
 * withdrawn). An open dispute has the funds withdrawn too, but a won one returns them: calling that
 * charged back would be final news that is not true yet, so it changes nothing until Stripe decides.
 * Inquiries (`warning_*`) withdraw nothing. NOTES.md argues every row.
 */
export const DISPUTE_STATUS_MAP = {
  warning_needs_response: null,
  warning_under_review: null,
  warning_closed: null,
  needs_response: null,
  under_review: null,
  won: null,
  lost: 'charged_back',
} as const satisfies Record<Stripe.Dispute.Status, Extract<ProcessorPaymentStatus, 'charged_back'> | null>;

/**
 * `Stripe.Dispute.Status` → our dispute status. Ours are Stripe's seven (src/domain/disputes.ts); NOTES.md
 * ("Dispute") gives each row its meaning and source. A status outside the union (`prevented` in later API
 * versions) reports no dispute: it is not one we can place in the state machine.
 */
export const DISPUTE_STATUS_TABLE = {
  warning_needs_response: 'warning_needs_response',
  warning_under_review: 'warning_under_review',
  warning_closed: 'warning_closed',
  needs_response: 'needs_response',
  under_review: 'under_review',
  won: 'won',
  lost: 'lost',
} as const satisfies Record<Stripe.Dispute.Status, DisputeStatus>;

/** `Dispute.reason` values the SDK documents (types/Disputes.d.ts, `reason`); the SDK types the field `string`. */
export type StripeDisputeReason =
  | 'bank_cannot_process'
  | 'check_returned'
  | 'credit_not_processed'
  | 'customer_initiated'
  | 'debit_not_authorized'
  | 'duplicate'
  | 'fraudulent'
  | 'general'
  | 'incorrect_account_details'
  | 'insufficient_funds'
  | 'product_not_received'
  | 'product_unacceptable'
  | 'subscription_canceled'
  | 'unrecognized';

/** `Dispute.reason` → ours (the same fourteen words); a reason not listed is `general`, Stripe's catch-all. */
export const DISPUTE_REASON_TABLE = {
  bank_cannot_process: 'bank_cannot_process',
  check_returned: 'check_returned',
  credit_not_processed: 'credit_not_processed',
  customer_initiated: 'customer_initiated',
  debit_not_authorized: 'debit_not_authorized',
  duplicate: 'duplicate',
  fraudulent: 'fraudulent',
  general: 'general',
  incorrect_account_details: 'incorrect_account_details',
  insufficient_funds: 'insufficient_funds',
  product_not_received: 'product_not_received',
  product_unacceptable: 'product_unacceptable',
  subscription_canceled: 'subscription_canceled',
  unrecognized: 'unrecognized',
} as const satisfies Record<StripeDisputeReason, DisputeReason>;

/**
 * Every event whose object is a Dispute; a type the SDK adds fails typecheck here until it is read. Each
 * carries the whole Dispute, so what it says is read from the object, not from the event's name:
 * `created` (a dispute or inquiry opened), `updated` (evidence, usually, or an inquiry escalated),
 * `funds_withdrawn` / `funds_reinstated` (a balance transaction added), `closed` (won, lost, warning_closed).
 */
export const DISPUTE_EVENT_TYPES = {
  'charge.dispute.created': true,
  'charge.dispute.updated': true,
  'charge.dispute.funds_withdrawn': true,
  'charge.dispute.funds_reinstated': true,
  'charge.dispute.closed': true,
} as const satisfies Record<StripeDisputeEventType, true>;

/**
 * Every event whose object is a Terminal reader, `terminal.reader.action_updated` included (typed from
 * stripe-node 18.3.0, see `StripeReaderEventType`): each points at the PaymentIntent the reader's action
 * carries, with no status, so the core asks the lookup (which reads the PaymentIntent and the reader).
 */
export const READER_EVENT_TYPES = {
  'terminal.reader.action_succeeded': true,
  'terminal.reader.action_failed': true,
  'terminal.reader.action_updated': true,
} as const satisfies Record<StripeReaderEventType, true>;

/**
 * A reader action's `type` → what the reader is busy with while it is `in_progress`; null for an action
 * that yields to the next one (a cart on the screen: Stripe's cart display is set "before processing the
 * payment", https://docs.stripe.com/terminal/features/display). The three types of stripe-node 18.3.0
 * (API 2025-06-30.basil, types/Terminal/Readers.d.ts:619 at tag v18.3.0) are mapped too, in case a reader
 * is driven by a newer integration; any other word is `other`.
 */
export const READER_ACTION_ACTIVITY = {
  process_payment_intent: 'payment',
  process_setup_intent: 'setup',
  refund_payment: 'refund',
  set_reader_display: null,
  collect_payment_method: 'payment',
  confirm_payment_intent: 'payment',
  collect_inputs: 'input',
} as const satisfies Record<
  Stripe.Terminal.Reader.Action.Type | 'collect_payment_method' | 'confirm_payment_intent' | 'collect_inputs',
  TerminalActivity['kind'] | null
>;

const lookup = <T>(table: Record<string, T>, key: string | null | undefined, fallback: T): T =>
  typeof key === 'string' && Object.hasOwn(table, key) ? table[key]! : fallback;

// ---------------------------------------------------------------------------------------------------------
// Mapping

export function paymentFailureStatus(error: StripeErrorObject | null | undefined): ProcessorPaymentStatus {
  return lookup<ProcessorPaymentStatus>(PAYMENT_FAILURE_MAP, error?.type, PAYMENT_FAILURE_DEFAULT);
}

type PaymentIntentView = Pick<StripePaymentIntent, 'status'> & Partial<Pick<StripePaymentIntent, 'last_payment_error'>>;

/**
 * Our status of a PaymentIntent. A PaymentIntent back in `requires_payment_method` with a
 * `last_payment_error` had its attempt fail (a decline at the reader, a failed QR payment): this service
 * makes one attempt per payment, so that is final. `payment_intent.payment_failed` says the same.
 */
export function paymentIntentStatus(pi: PaymentIntentView, eventType?: string): ProcessorPaymentStatus {
  if (
    eventType === ('payment_intent.payment_failed' satisfies StripeEventType) ||
    (pi.status === 'requires_payment_method' && pi.last_payment_error)
  ) {
    return paymentFailureStatus(pi.last_payment_error);
  }
  return lookup<ProcessorPaymentStatus>(PAYMENT_INTENT_STATUS_MAP, pi.status, 'pending');
}

/**
 * The QR code's content, unaltered, from the `next_action` field of the method's own type
 * (`promptpay_display_qr_code.data`, `paynow_display_qr_code.data`); null when the PaymentIntent shows none.
 */
export function qrDataOf(pi: Pick<StripePaymentIntent, 'next_action'>): string | null {
  const action = pi.next_action;
  if (!action) return null;
  const code =
    action.type === 'promptpay_display_qr_code'
      ? action.promptpay_display_qr_code
      : action.type === 'paynow_display_qr_code'
        ? action.paynow_display_qr_code
        : undefined;
  return typeof code?.data === 'string' && code.data.length > 0 ? code.data : null;
}

/**
 * The PaymentIntent as our outcome. `action`, when given, is the reader's action for this PaymentIntent:
 * it decides only as READER_ACTION_STATUS_MAP says.
 */
export function toPaymentOutcome(
  pi: StripePaymentIntent,
  options: { eventType?: string; readerAction?: StripeReader['action'] } = {},
): PaymentOutcome {
  const readerFailed =
    pi.status === 'requires_payment_method' && !pi.last_payment_error && options.readerAction
      ? lookup(READER_ACTION_STATUS_MAP, options.readerAction.status, null) === 'failed'
      : false;
  if (readerFailed) {
    return {
      status: 'failed',
      processorReference: pi.id,
      action: { type: 'none' },
      processorStatus: `reader_action_failed:${options.readerAction?.failure_code ?? 'unknown'}`,
    };
  }
  const status = paymentIntentStatus(pi, options.eventType);
  const qr = status === 'pending' ? qrDataOf(pi) : null;
  // A reader still collecting this PaymentIntent: it waits for the customer at the counter.
  const collecting = status === 'pending' && options.readerAction?.status === 'in_progress';
  const action: PaymentAction =
    qr !== null ? { type: 'display_qr', qrData: qr } : collecting ? { type: 'at_terminal' } : { type: 'none' };
  const error = pi.last_payment_error;
  const declineCode = status === 'declined' ? (error?.decline_code ?? error?.code ?? undefined) : undefined;
  return {
    status,
    processorReference: pi.id,
    action,
    processorStatus: pi.status,
    ...(declineCode ? { declineCode } : {}),
    ...(status === 'approved' ? paymentSettlement(pi) : {}),
  };
}

/** What a dispute says of its payment: `charged_back` once lost, else nothing (an unknown status is nothing too). */
export function disputeStatus(dispute: Pick<StripeDispute, 'status'>): 'charged_back' | null {
  return lookup<'charged_back' | null>(DISPUTE_STATUS_MAP, dispute.status, null);
}

/** Whether the PaymentIntent's charge, when the lookup expanded it, says it is disputed. */
export function isDisputed(pi: Pick<StripePaymentIntent, 'status' | 'latest_charge'>): boolean {
  const charge = pi.latest_charge;
  return pi.status === 'succeeded' && typeof charge === 'object' && charge?.disputed === true;
}

/** A succeeded PaymentIntent with a lost dispute among `disputes` is charged back; null when none is lost. */
export function chargedBackOutcome(
  pi: Pick<StripePaymentIntent, 'id' | 'status'>,
  disputes: readonly StripeDispute[],
): PaymentOutcome | null {
  if (pi.status !== 'succeeded') return null;
  const lost = disputes.find((d) => referenceId(d.payment_intent) === pi.id && disputeStatus(d) === 'charged_back');
  return lost
    ? {
        status: 'charged_back',
        processorReference: pi.id,
        action: { type: 'none' },
        processorStatus: `dispute_${lost.status}`,
      }
    : null;
}

export function refundStatus(
  refund: Pick<StripeRefund, 'status'> & Partial<Pick<StripeRefund, 'failure_reason'>>,
): ProcessorRefundStatus {
  if (refund.status === ('failed' satisfies StripeRefundStatus))
    return lookup<ProcessorRefundStatus>(REFUND_FAILURE_MAP, refund.failure_reason, 'failed');
  return lookup<ProcessorRefundStatus>(REFUND_STATUS_MAP, refund.status, 'pending');
}

export function refundFailureReason(reason: string | null | undefined): RefundFailureReason {
  return lookup<RefundFailureReason>(REFUND_FAILURE_REASON_MAP, reason, 'unknown');
}

export function toRefundOutcome(refund: StripeRefund): RefundOutcome {
  const status = refundStatus(refund);
  // A canceled refund carries its failure_reason too: "cancellations are a type of refund failure" (docs.stripe.com/refunds).
  const failed = status === 'failed' || status === 'declined';
  return {
    status,
    processorReference: refund.id,
    processorStatus: refund.status ?? 'unknown',
    ...(failed ? { failureReason: refundFailureReason(refund.failure_reason) } : {}),
    ...(status === 'approved' ? booked(refund.balance_transaction) : {}),
  };
}

// ---------------------------------------------------------------------------------------------------------
// Settlement and disputes

/** Stripe's amount and currency as ours: the currencies we take agree with Stripe on minor units (`toStripeAmount`). */
export const fromStripeAmount = (amount: number, currency: string): Money => ({
  minor: amount,
  currency: currency.toUpperCase(),
});

/**
 * An amount Stripe booked, in any currency its balance holds, in ISO 4217 minor units: Stripe's unit is ISO's but
 * for a few currencies (`stripeMinorDigits`: ISK in hundredths, MGA in whole ariary), converted exactly. Null when it
 * cannot be: a currency ISO 4217 does not give a minor unit, or a fraction of ISO's unit.
 */
export function fromStripeBooking(amount: number, currency: string): Money | null {
  const code = currency.toUpperCase();
  const iso = recordedMinorUnits(code);
  if (iso === undefined || !Number.isSafeInteger(amount)) return null;
  const shift = iso - stripeMinorDigits(code);
  if (shift >= 0) {
    const minor = amount * 10 ** shift;
    return Number.isSafeInteger(minor) ? { minor, currency: code } : null;
  }
  const scale = 10 ** -shift;
  return amount % scale === 0 ? { minor: amount / scale, currency: code } : null;
}

/**
 * What a balance transaction booked, in its own currency (the account's settlement currency, which may
 * differ from the payment's): `fee` and `net` (`net` = `amount` − `fee`, signed as the balance moves),
 * `available_on` as milliseconds.
 */
export function settlementOf(bt: StripeBalanceTransaction): Settlement | null {
  const [fee, net] = [fromStripeBooking(bt.fee, bt.currency), fromStripeBooking(bt.net, bt.currency)];
  return fee && net ? { fee, net, availableOn: bt.available_on * 1000 } : null;
}

/**
 * The settlement of money that moved, from its (expandable) balance transaction: reported when expanded,
 * `pending_at_processor` while Stripe has booked nothing (`null`), nothing when it was not expanded.
 */
function booked(
  bt: StripeBalanceTransaction | string | null | undefined,
): Pick<PaymentOutcome, 'settlement' | 'settlementNullReason'> {
  if (bt === null) return { settlement: null, settlementNullReason: 'pending_at_processor' };
  if (typeof bt !== 'object') return {};
  const settlement = settlementOf(bt);
  return settlement ? { settlement } : { settlement: null, settlementNullReason: 'unrepresentable_amount' };
}

/** A succeeded PaymentIntent's settlement, from its charge's balance transaction when the read expanded them. */
export function paymentSettlement(
  pi: Pick<StripePaymentIntent, 'latest_charge'>,
): Pick<PaymentOutcome, 'settlement' | 'settlementNullReason'> {
  const charge = pi.latest_charge;
  return typeof charge === 'object' && charge !== null ? booked(charge.balance_transaction) : {};
}

const timeOf = (seconds: number | null | undefined) =>
  typeof seconds === 'number' && seconds > 0 ? seconds * 1000 : null;

/**
 * A Dispute as our dispute, or null when it cannot be one: a status outside the SDK's union, or no
 * PaymentIntent to attach it to. Funds withdrawn and reinstated are read from its balance transactions
 * (negative: withdrawn; positive: reinstated), at their `created`. `due_by` 0 means no response is
 * allowed ("Will be 0 if the customer's bank ... doesn't allow a response"): no deadline.
 */
export function toProcessorDispute(dispute: StripeDisputeDetail): ProcessorDispute | null {
  const paymentIntent = referenceId(dispute.payment_intent);
  if (!paymentIntent || !Object.hasOwn(DISPUTE_STATUS_TABLE, dispute.status)) return null;
  const earliest = (sign: 1 | -1) => {
    const times = dispute.balance_transactions.filter((bt) => Math.sign(bt.amount) === sign).map((bt) => bt.created);
    return times.length > 0 ? Math.min(...times) * 1000 : null;
  };
  return {
    processorDisputeId: dispute.id,
    paymentProcessorReference: paymentIntent,
    status: DISPUTE_STATUS_TABLE[dispute.status as Stripe.Dispute.Status],
    amount: fromStripeAmount(dispute.amount, dispute.currency),
    reason: lookup<DisputeReason>(DISPUTE_REASON_TABLE, dispute.reason, 'general'),
    evidenceDueBy: timeOf(dispute.evidence_details.due_by),
    fundsWithdrawnAt: earliest(-1),
    fundsReinstatedAt: earliest(1),
    processorStatus: dispute.status,
  };
}

/** The PaymentIntent a reader's action carries, when it is a `process_payment_intent`. */
export function readerPaymentIntent(reader: StripeReader | null): string | null {
  return referenceId(reader?.action?.process_payment_intent?.payment_intent);
}

/** What a reader's action in progress keeps it busy with; null when it has none, or one that yields. */
export function readerActivity(reader: StripeReader): TerminalActivity | null {
  const action = reader.action;
  if (action?.status !== ('in_progress' satisfies Stripe.Terminal.Reader.Action.Status)) return null;
  const kind = lookup<TerminalActivity['kind'] | null>(READER_ACTION_ACTIVITY, action.type, 'other');
  if (kind === null) return null;
  return { kind, processorReference: kind === 'payment' ? readerPaymentIntent(reader) : null };
}

/**
 * A reader as a terminal (`Reader.status`: `online` | `offline` | null, types/Terminal/Readers.d.ts:95).
 * Offline wins: a reader that lost its connection mid-payment keeps its action `in_progress` in the API
 * (https://docs.stripe.com/terminal/payments/collect-card-payment?terminal-sdk-platform=server-driven,
 * "Reader offline"), which is then said as what it was busy with. Null status: `unknown`, unless busy.
 */
export function readerTerminalState(reader: StripeReader): TerminalState {
  const activity = readerActivity(reader);
  const status =
    reader.status === 'offline' ? 'offline' : activity ? 'busy' : reader.status === 'online' ? 'online' : 'unknown';
  const action = reader.action ? `/${reader.action.type ?? 'action'}:${reader.action.status}` : '';
  return {
    processorId: reader.id,
    status,
    ...(activity ? { busyWith: activity } : {}),
    processorStatus: `${reader.status ?? 'unknown'}${action}`,
  };
}

/**
 * Stripe's cart (`set_reader_display`, type `cart`) for a display checked against the payment: integer
 * amounts in the smallest unit, the currency in lower case, tax left out when none is given.
 */
export function readerDisplayParams(display: TerminalDisplay): Stripe.Terminal.ReaderSetReaderDisplayParams {
  return {
    type: 'cart',
    cart: {
      currency: display.total.currency.toLowerCase(),
      line_items: display.lines.map((line) => ({
        amount: line.amount.minor,
        description: line.description,
        quantity: line.quantity,
      })),
      ...(display.tax ? { tax: display.tax.minor } : {}),
      total: display.total.minor,
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// Requests

/**
 * The largest amount a PaymentIntent takes: "up to eight digits" (`PaymentIntentCreateParams.amount` in
 * the SDK). Ours allow twelve: a larger payment is refused here rather than sent for Stripe to refuse
 * with `amount_too_large`, which on a refund means something else.
 */
export const STRIPE_MAX_AMOUNT = 99_999_999;

/**
 * Currencies Stripe counts in whole units (https://docs.stripe.com/currencies#zero-decimal). Stripe's
 * amount is "in the smallest currency unit", which is ours exactly when both agree on the exponent.
 */
export const STRIPE_ZERO_DECIMAL_CURRENCIES: readonly string[] = [
  'BIF',
  'CLP',
  'DJF',
  'GNF',
  'JPY',
  'KMF',
  'KRW',
  'MGA',
  'PYG',
  'RWF',
  'UGX',
  'VND',
  'VUV',
  'XAF',
  'XOF',
  'XPF',
];

/**
 * Currencies Stripe counts in thousandths, as ISO 4217 does ("three-decimal currencies",
 * https://docs.stripe.com/currencies#three-decimal).
 */
export const STRIPE_THREE_DECIMAL_CURRENCIES: readonly string[] = ['BHD', 'JOD', 'KWD', 'OMR', 'TND'];

/**
 * The digits of Stripe's "smallest currency unit" of a currency: 0 for the zero-decimal ones, 3 for the
 * three-decimal ones, 2 for every other, ISK included ("ISK will remain a two-decimal currency in the Stripe API",
 * support.stripe.com, deprecation of fractional ISK charges), where ISO 4217 counts 0.
 */
export function stripeMinorDigits(currency: string): number {
  const code = currency.toUpperCase();
  if (STRIPE_ZERO_DECIMAL_CURRENCIES.includes(code)) return 0;
  return STRIPE_THREE_DECIMAL_CURRENCIES.includes(code) ? 3 : 2;
}

/**
 * Stripe's amount and currency for ours: integer minor units (ours and Stripe's agree on every currency
 * we accept; `minorDigits` says ours), the currency in lower case as Stripe writes it.
 */
export function toStripeAmount(money: Money, minorDigits: number): { amount: number; currency: string } {
  if (!Number.isSafeInteger(money.minor) || money.minor <= 0 || stripeMinorDigits(money.currency) !== minorDigits) {
    throw new ConnectorError('configuration_invalid', 'The amount cannot be sent to Stripe.', 'stripe_invalid_amount');
  }
  return { amount: money.minor, currency: money.currency.toLowerCase() };
}

/**
 * `application/x-www-form-urlencoded` in Stripe's bracket notation: nested objects as `a[b]=`, arrays as
 * `a[]=`, booleans as `true`/`false`; `undefined` and `null` are left out. Objects in an array are indexed
 * (`a[0][b]=`), as the SDK's encoder (qs, `utils.stringifyRequestData`) writes every array: `a[][b]=&a[][c]=`
 * would leave it to the server to guess where one object ends. Callers pass the SDK's own parameter types
 * (`Stripe.PaymentIntentCreateParams`...), which is where a misspelt field fails typecheck.
 */
export function encodeForm(params: object): string {
  const pairs: string[] = [];
  const walk = (key: string, value: unknown) => {
    if (value === undefined || value === null) return;
    if (Array.isArray(value)) {
      for (const [i, item] of value.entries())
        walk(`${key}[${typeof item === 'object' && item !== null ? i : ''}]`, item);
    } else if (typeof value === 'object') {
      for (const [child, inner] of Object.entries(value)) walk(`${key}[${encodeURIComponent(child)}]`, inner);
    } else {
      pairs.push(`${key}=${encodeURIComponent(String(value))}`);
    }
  };
  for (const [key, value] of Object.entries(params)) walk(encodeURIComponent(key), value);
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
 * Every error `type` (`Stripe.RawErrorType`: the API reference's four plus the SDK's rate-limit,
 * authentication and OAuth ones) → ours, when neither the HTTP status nor the code decides first.
 * Retryable kinds are `unavailable` and `timeout`; `idempotency_error` (the key was already used with other
 * parameters) means a request with this key ran before: its outcome is unknown, so the operation waits as
 * pending for the lookup that finds it by metadata, instead of failing.
 */
export const STRIPE_ERROR_TYPE_MAP = {
  card_error: 'declined',
  invalid_request_error: 'configuration_invalid',
  api_error: 'unavailable',
  idempotency_error: 'timeout',
  rate_limit_error: 'unavailable',
  authentication_error: 'configuration_invalid',
  invalid_grant: 'configuration_invalid',
} as const satisfies Record<StripeErrorType, ConnectorErrorKind>;

/**
 * Error codes whose meaning wins over the type and HTTP status (https://docs.stripe.com/error-codes;
 * the names are checked against the SDK's `code` union). Every other code maps by its type and status.
 */
export const STRIPE_ERROR_CODE_MAP = {
  // A refund (or a void) Stripe refuses for what the payment is: a business answer, not a misconfiguration.
  charge_already_refunded: 'declined',
  amount_too_large: 'declined',
  charge_disputed: 'declined',
  refund_disputed_payment: 'declined',
  charge_not_refundable: 'declined',
  // The PaymentIntent is not in a state that allows the operation (it moved meanwhile).
  payment_intent_unexpected_state: 'declined',
  intent_invalid_state: 'declined',
  // The reader cannot take the payment now; the same request may succeed later.
  terminal_reader_busy: 'unavailable',
  terminal_reader_offline: 'unavailable',
  terminal_reader_hardware_fault: 'unavailable',
  // Stripe did not hear back from the reader: whether it got the payment is unknown.
  terminal_reader_timeout: 'timeout',
  terminal_reader_invalid_location_for_payment: 'configuration_invalid',
  terminal_location_country_unsupported: 'configuration_invalid',
  // Concurrency and load: retry later with the same key (no result was stored for these).
  idempotency_key_in_use: 'unavailable',
  lock_timeout: 'unavailable',
  rate_limit: 'unavailable',
  // The key: expired, restricted, or of the other mode.
  api_key_expired: 'configuration_invalid',
  secret_key_required: 'configuration_invalid',
  livemode_mismatch: 'configuration_invalid',
  testmode_charges_only: 'configuration_invalid',
} as const satisfies Partial<Record<StripeErrorCode, ConnectorErrorKind>>;

/**
 * By HTTP status (https://docs.stripe.com/api/errors), after the code and before the type. 400 and 404
 * are handled apart (they depend on the operation and the type).
 */
export const STRIPE_HTTP_STATUS_MAP = {
  401: 'configuration_invalid',
  402: 'declined',
  403: 'configuration_invalid',
  // "The request conflicts with another request (perhaps due to using the same idempotent key)": retry.
  409: 'unavailable',
  // 424 External Dependency Failed: retry.
  424: 'unavailable',
  429: 'unavailable',
} as const satisfies Record<number, ConnectorErrorKind>;

export type StripeOperation = 'lookup' | 'write';

/** The `error` object of a Stripe error body, when there is one. */
export function stripeErrorOf(body: unknown): StripeErrorObject | null {
  const parsed = z.object({ error: StripeErrorObject }).safeParse(body);
  return parsed.success ? parsed.data.error : null;
}

/** What a failed answer carries besides its body: `Stripe-Should-Retry` (set when Stripe knows). */
export interface StripeErrorContext {
  operation: StripeOperation;
  shouldRetry?: boolean | null;
}

/**
 * A Stripe error response as a ConnectorError. Only the processor's code survives (decline_code, else
 * code, else type); its message and body stay here.
 */
export function normalizeStripeError(httpStatus: number, body: unknown, context: StripeErrorContext): ConnectorError {
  const error = stripeErrorOf(body);
  const processorCode = error?.decline_code ?? error?.code ?? error?.type ?? `http_${httpStatus}`;
  const kind = stripeErrorKind(httpStatus, error, context);
  const terminal = kind === 'unavailable' ? lookup(READER_UNAVAILABLE_CODES, error?.code, null) : null;
  if (terminal) return new TerminalUnavailableError(terminal, READER_MESSAGES[terminal], processorCode);
  return new ConnectorError(kind, MESSAGES[kind], processorCode);
}

/**
 * The reader's refusals that say why it cannot act now: "A reader is considered offline if Stripe hasn't
 * received any signal from that reader in the past 2 minutes" (`terminal_reader_offline`); "A reader can
 * only process one request at a time" (`terminal_reader_busy`), server-driven guide, "Handle errors".
 * Stripe answers them at once, so the core can tell the cashier without waiting for any timeout.
 */
export const READER_UNAVAILABLE_CODES = {
  terminal_reader_offline: 'offline',
  terminal_reader_busy: 'busy',
} as const satisfies Partial<Record<StripeErrorCode, 'offline' | 'busy'>>;

const READER_MESSAGES = {
  offline: 'The Stripe reader is offline.',
  busy: 'The Stripe reader is busy with another action.',
} as const;

export function stripeErrorKind(
  httpStatus: number,
  error: StripeErrorObject | null,
  context: StripeErrorContext,
): ConnectorErrorKind {
  const kind = decidedKind(httpStatus, error, context.operation);
  // "Stripe-Should-Retry: true": Stripe says the same request can succeed (https://docs.stripe.com/error-low-level).
  if (context.shouldRetry === true && (kind === 'configuration_invalid' || kind === 'not_found')) return 'unavailable';
  return kind;
}

function decidedKind(
  httpStatus: number,
  error: StripeErrorObject | null,
  operation: StripeOperation,
): ConnectorErrorKind {
  // 5xx: Stripe's side. A POST that began executing stores its 500 under the key, so a retry may replay it;
  // the lookups (by reference or metadata) then tell what happened.
  if (httpStatus >= 500) return 'unavailable';
  if (error?.type === 'card_error' || httpStatus === 402) return 'declined';
  if (error?.code && Object.hasOwn(STRIPE_ERROR_CODE_MAP, error.code))
    return STRIPE_ERROR_CODE_MAP[error.code as keyof typeof STRIPE_ERROR_CODE_MAP];
  if (httpStatus === 404 || (httpStatus === 400 && error?.code === 'resource_missing'))
    return operation === 'lookup' ? 'not_found' : 'configuration_invalid';
  if (Object.hasOwn(STRIPE_HTTP_STATUS_MAP, httpStatus))
    return STRIPE_HTTP_STATUS_MAP[httpStatus as keyof typeof STRIPE_HTTP_STATUS_MAP];
  if (error?.type && Object.hasOwn(STRIPE_ERROR_TYPE_MAP, error.type))
    return STRIPE_ERROR_TYPE_MAP[error.type as StripeErrorType];
  // Any other 4xx is a request this integration should not have made: retrying it will not help.
  if (httpStatus >= 400 && httpStatus < 500) return 'configuration_invalid';
  return 'unavailable';
}

const MESSAGES: Record<ConnectorErrorKind, string> = {
  declined: 'Stripe declined the operation.',
  timeout: 'Stripe did not answer in time.',
  unavailable: 'Stripe is unavailable.',
  configuration_invalid: 'Stripe refused the request: check the payment method’s credentials and configuration.',
  invalid_notification: 'The Stripe notification does not verify.',
  not_found: 'Stripe has no such object.',
};

/** Stripe's timeout (per request; a POS payment makes up to six) and its fetch failures' codes. */
export const STRIPE_HTTP: ProcessorHttp = {
  timeoutMs: 15_000,
  timeout: { code: 'stripe_timeout', message: MESSAGES.timeout },
  network: { code: 'stripe_network_error', message: MESSAGES.unavailable },
};

// ---------------------------------------------------------------------------------------------------------
// Notifications

/** Header tolerance of https://docs.stripe.com/webhooks#verify-manually (and the SDK's DEFAULT_TOLERANCE). */
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

/** The `metadata.purpose` the connector gives the refund that fulfils a void (index.ts, `voidByRefund`). */
export const VOID_REFUND_PURPOSE = 'void';

/**
 * The refund of a void failed (or was canceled) after the void: news of its PaymentIntent, collected again
 * (NOTES.md, "A void whose refund fails"). Any other news of a void's refund is left as refund news, which
 * the core does not know (a void is no refund of ours). Null when `refund` is no failed void refund.
 */
function voidReversal(
  refund: StripeRefund,
  outcome: RefundOutcome,
): Omit<Extract<ProcessorNotification, { resource: 'payment' }>, 'eventId' | 'trusted'> | null {
  const paymentIntent = referenceId(refund.payment_intent);
  if (refund.metadata?.purpose !== VOID_REFUND_PURPOSE || !paymentIntent || !outcome.failureReason) return null;
  return {
    resource: 'payment',
    processorReference: paymentIntent,
    status: 'approved',
    voidReversal: { processorRefundReference: refund.id, failureReason: outcome.failureReason },
  };
}

/**
 * PaymentIntent events whose object's status the tables can believe. `amount_capturable_updated`
 * (`requires_capture`) is not among them: the connector captures on its lookup, so the core is told to ask.
 */
const PAYMENT_INTENT_EVENTS_WITH_STATUS: readonly StripeEventType[] = [
  'payment_intent.created',
  'payment_intent.requires_action',
  'payment_intent.processing',
  'payment_intent.succeeded',
  'payment_intent.payment_failed',
  'payment_intent.canceled',
  'payment_intent.partially_funded',
];

/**
 * A verified event as news. PaymentIntent and Refund events carry the object: its status comes from the
 * tables. A dispute event points at its PaymentIntent, `charged_back` when the dispute is lost (final at
 * Stripe), else `status: null`. Events about other objects point at the PaymentIntent they concern (a
 * charge, a Terminal reader's action) with `status: null`, so the core asks the connector; any other event
 * names its own object (or itself), which the core will not know.
 */
export function eventToNotification(event: StripeEvent, object: unknown): ProcessorNotification {
  const base = { eventId: event.id, trusted: true };
  const kind = event.data.object.object;
  const ownId = event.data.object.id ?? event.id;
  if (kind === 'payment_intent') {
    const pi = StripePaymentIntent.safeParse(object);
    const believed =
      pi.success &&
      (PAYMENT_INTENT_EVENTS_WITH_STATUS as readonly string[]).includes(event.type) &&
      pi.data.status !== 'requires_capture';
    return {
      ...base,
      resource: 'payment',
      processorReference: ownId,
      status: believed ? paymentIntentStatus(pi.data, event.type) : null,
    };
  }
  if (kind === 'refund') {
    const refund = StripeRefund.safeParse(object);
    if (!refund.success) return { ...base, resource: 'refund', processorReference: ownId, status: null };
    const outcome = toRefundOutcome(refund.data);
    const voided = voidReversal(refund.data, outcome);
    if (voided) return { ...base, ...voided };
    return {
      ...base,
      resource: 'refund',
      processorReference: ownId,
      status: outcome.status,
      ...(outcome.failureReason ? { failureReason: outcome.failureReason } : {}),
    };
  }
  if (kind === 'charge') {
    const charge = StripeCharge.safeParse(object);
    const pi = charge.success ? referenceId(charge.data.payment_intent) : null;
    if (pi) return { ...base, resource: 'payment', processorReference: pi, status: null };
  }
  if (kind === 'dispute' && Object.hasOwn(DISPUTE_EVENT_TYPES, event.type)) {
    // The dispute's own status is final news only when lost; any other leaves the core to ask the lookup.
    const dispute = StripeDispute.safeParse(object);
    const pi = dispute.success ? referenceId(dispute.data.payment_intent) : null;
    if (pi && dispute.data) {
      const detail = StripeDisputeDetail.safeParse(object);
      const normalized = detail.success ? toProcessorDispute(detail.data) : null;
      return {
        ...base,
        resource: 'payment',
        processorReference: pi,
        status: disputeStatus(dispute.data),
        ...(normalized ? { dispute: normalized } : {}),
      };
    }
  }
  if (kind === 'terminal.reader' && Object.hasOwn(READER_EVENT_TYPES, event.type)) {
    const reader = StripeReader.safeParse(object);
    const pi = reader.success ? readerPaymentIntent(reader.data) : null;
    if (pi) return { ...base, resource: 'payment', processorReference: pi, status: null };
  }
  return { ...base, resource: 'payment', processorReference: ownId, status: null };
}
