import { nextUpdatedAt, type PaymentStatus } from './payment-state.ts';

/**
 * Money a processor reported returned and later took back: a refund that failed after it had succeeded
 * (Stripe: the issuer returns the money to the merchant's balance, "up to 30 days from the post date",
 * https://docs.stripe.com/refunds "Handle failed refunds"), or the refund behind a void. The service must
 * never show money as returned that was not, so these are the only moves out of a final status, and only
 * on trusted news: a verified notification, or the service's own read of the processor.
 * docs/states.md ("Reversals") is the prose of this file; test/docs.test.ts compares the tables.
 */

/**
 * Why a refund failed, normalized. Stripe's `Refund.failure_reason` values are the model (its SDK's doc
 * comment, stripe 16.12.0 types/Refunds.d.ts, and docs.stripe.com/refunds "Handle failed refunds", which
 * explains each); a processor's reason outside this set is `unknown`.
 */
export const REFUND_FAILURE_REASONS = [
  'lost_or_stolen_card',
  'expired_or_canceled_card',
  'charge_for_pending_refund_disputed',
  'insufficient_funds',
  'declined',
  'merchant_request',
  'unknown',
] as const;
export type RefundFailureReason = (typeof REFUND_FAILURE_REASONS)[number];

export function isRefundFailureReason(value: unknown): value is RefundFailureReason {
  return typeof value === 'string' && (REFUND_FAILURE_REASONS as readonly string[]).includes(value);
}

/**
 * The payment moves a reversal may make that `PAYMENT_TRANSITIONS` does not: a refunded payment whose
 * refund failed is collected again (in part or in full), and so is a voided one whose void's refund failed.
 * `partially_refunded -> partially_refunded` is a reversal that leaves other approved refunds standing.
 */
export const PAYMENT_REVERSALS: Readonly<Record<PaymentStatus, readonly PaymentStatus[]>> = {
  created: [],
  pending: [],
  processing: [],
  approved: [],
  declined: [],
  failed: [],
  expired: [],
  canceled: ['approved'],
  partially_refunded: ['partially_refunded', 'approved'],
  refunded: ['partially_refunded', 'approved'],
};

export function canReversePayment(from: PaymentStatus, to: PaymentStatus): boolean {
  return PAYMENT_REVERSALS[from].includes(to);
}

/**
 * The event a refund reversal sends (payload: the refund and the payment). The payment's own status
 * change does not also send its status event: `payment.refunded` or `payment.approved` would tell a
 * merchant that something was refunded or collected anew, when money came back from a failed refund.
 */
export const REFUND_REVERSAL_EVENT_TYPE = 'refund.failed' as const;

export type ReversalRefusal =
  /** Unsigned, stale or otherwise unverified news: the core reads the processor instead of believing it. */
  | 'untrusted'
  /** Not a failure of an approved refund (or of a void): nothing to reverse. */
  | 'not_a_reversal';

export type VoidReversalResult =
  | { ok: true; payment: { status: 'approved'; updatedAt: number } }
  | { ok: false; reason: ReversalRefusal };

/**
 * The event a void reversal sends (payload: the payment, `approved` again). Not `payment.approved`: a receiver
 * that fulfils orders on it would take the payment for a new collection, when the money it had returned never
 * reached the customer and is the merchant's to return another way (as for `refund.failed`).
 */
export const VOID_REVERSAL_EVENT_TYPE = 'payment.void_failed' as const;

/**
 * A payment canceled by a void that the processor fulfilled with a refund (Stripe's `voidByRefund`), whose
 * refund then failed: the money is back with the merchant (docs.stripe.com/refunds, "Handle failed
 * refunds"), so the payment is collected again, `approved`, with its full amount refundable (a void is no
 * refund of the ledger). It sends `VOID_REVERSAL_EVENT_TYPE`. `voided` says the cancel was a void of a
 * collected payment (the service dated it); a payment canceled before collection has nothing to take back,
 * whatever the news says.
 */
export function reverseVoid(input: {
  payment: { status: PaymentStatus; updatedAt: number };
  voided: boolean;
  news: { trusted: boolean };
  now: number;
}): VoidReversalResult {
  const { payment, voided, news, now } = input;
  if (!news.trusted) return { ok: false, reason: 'untrusted' };
  if (!voided || payment.status !== 'canceled') return { ok: false, reason: 'not_a_reversal' };
  return { ok: true, payment: { status: 'approved', updatedAt: nextUpdatedAt(payment.updatedAt, now) } };
}
