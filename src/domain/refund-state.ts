import { nextUpdatedAt, type RefundedPaymentStatus, type TransitionResult } from './payment-state.ts';

/**
 * The refund state machine and the balance rules that keep refunds from ever exceeding the payment.
 * Amounts are integer minor units. A refund reserves its amount from the moment it is recorded (before
 * the processor is asked) until it is declined or failed, so whatever the interleaving of refund
 * requests, approved plus reserved never exceeds the payment amount, provided the caller serializes
 * `reserveRefund` and the write of the new refund per payment.
 */

export const REFUND_STATUSES = ['created', 'pending', 'processing', 'approved', 'declined', 'failed'] as const;

export type RefundStatus = (typeof REFUND_STATUSES)[number];

/** docs/states.md ("Refund transitions"): `created` -> `pending`/`processing` -> `approved` | `declined` | `failed`. */
export const REFUND_TRANSITIONS: Readonly<Record<RefundStatus, readonly RefundStatus[]>> = {
  created: ['pending', 'processing', 'approved', 'declined', 'failed'],
  pending: ['processing', 'approved', 'declined', 'failed'],
  processing: ['approved', 'declined', 'failed'],
  approved: [],
  declined: [],
  failed: [],
};

/**
 * The one way out of a final refund status (docs/states.md, "Refund reversals"): a refund the processor
 * reports failed after it had succeeded, believed only on trusted news (`reverseRefund` in reversals.ts
 * applies it with the payment's recomputed status). Apart from `REFUND_TRANSITIONS` so that the ordinary
 * settling path can never take it by accident.
 */
export const REFUND_REVERSALS: Readonly<Record<RefundStatus, readonly RefundStatus[]>> = {
  created: [],
  pending: [],
  processing: [],
  approved: ['failed'],
  declined: [],
  failed: [],
};

export function canReverseRefund(from: RefundStatus, to: RefundStatus): boolean {
  return REFUND_REVERSALS[from].includes(to);
}

/** Still waiting for the processor, so its amount stays reserved. */
export function isReserving(status: RefundStatus): boolean {
  return status === 'created' || status === 'pending' || status === 'processing';
}

export function canRefundTransition(from: RefundStatus, to: RefundStatus): boolean {
  return REFUND_TRANSITIONS[from].includes(to);
}

export function applyRefundTransition(
  current: { status: RefundStatus; updatedAt: number },
  to: RefundStatus,
  now: number,
): TransitionResult<RefundStatus> {
  const allowed = REFUND_TRANSITIONS[current.status];
  if (current.status === to) return { ok: false, reason: 'no_change' };
  if (allowed.length === 0) return { ok: false, reason: 'final' };
  if (!allowed.includes(to)) return { ok: false, reason: 'not_allowed' };
  return { ok: true, status: to, updatedAt: nextUpdatedAt(current.updatedAt, now) };
}

export interface RefundLedgerEntry {
  status: RefundStatus;
  amount: number;
}

function sum(refunds: readonly RefundLedgerEntry[], include: (status: RefundStatus) => boolean): number {
  let total = 0;
  for (const refund of refunds) if (include(refund.status)) total += refund.amount;
  return total;
}

export const approvedRefundTotal = (refunds: readonly RefundLedgerEntry[]) => sum(refunds, (s) => s === 'approved');

export const reservedRefundTotal = (refunds: readonly RefundLedgerEntry[]) => sum(refunds, isReserving);

/**
 * What a new refund may still take: the amount less approved and reserved refunds. Declined and failed
 * refunds have released their reservation. A "full refund" is exactly this amount.
 */
export function refundableBalance(paymentAmount: number, refunds: readonly RefundLedgerEntry[]): number {
  return paymentAmount - approvedRefundTotal(refunds) - reservedRefundTotal(refunds);
}

export type ReserveResult =
  | { ok: true; balanceAfter: number }
  | { ok: false; reason: 'refund_exceeds_balance'; balance: number };

/**
 * Whether `requested` fits the refundable balance. A non-positive or fractional request is a caller bug
 * (parseAmount never yields one), not a client-facing outcome, so it throws.
 */
export function reserveRefund(
  paymentAmount: number,
  refunds: readonly RefundLedgerEntry[],
  requested: number,
): ReserveResult {
  if (!Number.isSafeInteger(requested) || requested <= 0)
    throw new RangeError('Refund amount must be a positive integer');
  const balance = refundableBalance(paymentAmount, refunds);
  if (requested > balance) return { ok: false, reason: 'refund_exceeds_balance', balance };
  return { ok: true, balanceAfter: balance - requested };
}

/**
 * The payment status the approved refunds call for: null with none, `refunded` when they sum to the
 * amount, `partially_refunded` otherwise. More than the amount cannot be expressed as a status and
 * means the reservation rule was bypassed, so it throws rather than hide it.
 */
export function paymentStatusAfterRefunds(
  paymentAmount: number,
  refunds: readonly RefundLedgerEntry[],
): RefundedPaymentStatus | null {
  const approved = approvedRefundTotal(refunds);
  if (approved > paymentAmount) throw new RangeError('Approved refunds exceed the payment amount');
  if (approved === 0) return null;
  return approved === paymentAmount ? 'refunded' : 'partially_refunded';
}
