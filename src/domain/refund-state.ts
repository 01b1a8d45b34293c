import { nextUpdatedAt, type TransitionResult } from './payment-state.ts';

/**
 * The refund state machine. The balance it keeps whole (a refund reserves its amount from the moment it is recorded
 * until it is declined or failed) is the ledger's running totals: domain/ledger/refunds.ts.
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
 * reports failed after it had succeeded, believed only on trusted news (the ledger's `refund_news` applies it with
 * the payment's recomputed status: domain/ledger/refunds.ts). Apart from `REFUND_TRANSITIONS` so that the ordinary
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
