/**
 * The payment state machine. Every status change of a payment goes through `applyTransition`, whether
 * it comes from the processor's answer, a notification, a test helper, a cancel or a settled refund, so
 * the rules of docs/states.md ("Payment transitions") live in this one table.
 */

export const PAYMENT_STATUSES = [
  'created',
  'pending',
  'processing',
  'approved',
  'declined',
  'failed',
  'expired',
  'canceled',
  'partially_refunded',
  'refunded',
] as const;

export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

export type RefundedPaymentStatus = 'partially_refunded' | 'refunded';

/** Statuses whose money was collected (refunded money was collected first): only these have a settlement. */
export const COLLECTED_STATUSES: readonly PaymentStatus[] = ['approved', 'partially_refunded', 'refunded'];

/**
 * Allowed next statuses. Nothing leads back to `created`, `pending` or `processing` from a later
 * status, so a late or out-of-order notification can never move a payment backwards.
 * `partially_refunded -> partially_refunded` is another partial refund, the only repeatable step.
 */
export const PAYMENT_TRANSITIONS: Readonly<Record<PaymentStatus, readonly PaymentStatus[]>> = {
  created: ['pending', 'processing', 'approved', 'declined', 'failed', 'expired', 'canceled'],
  pending: ['processing', 'approved', 'declined', 'failed', 'expired', 'canceled'],
  processing: ['approved', 'declined', 'failed', 'expired', 'canceled'],
  // `canceled` from `approved` is a void, possible only before any refund (see TransitionGuards).
  approved: ['partially_refunded', 'refunded', 'canceled'],
  partially_refunded: ['partially_refunded', 'refunded'],
  declined: [],
  failed: [],
  expired: [],
  canceled: [],
  refunded: [],
};

export interface TransitionGuards {
  /**
   * Whether any refund is recorded for the payment, whatever its status: a void is allowed only while
   * no refund exists (docs/states.md, "Payment transitions"), and a refund still in flight at the processor must not be voided
   * from under it.
   */
  hasRefunds: boolean;
  /**
   * What the approved refunds make of the payment (`paymentStatusAfterRefunds`). The refund statuses
   * are reachable only when they match it, so no notification can claim a refund the ledger does not
   * hold. Absent means no approved refund.
   */
  refundOutcome?: RefundedPaymentStatus | null;
  /** Whether a chargeback is recorded (`chargeback`): a charged-back payment is never voided. */
  chargedBack?: boolean;
}

export type TransitionRefusal =
  /** The payment already has this status: a repeated notification, nothing to do. */
  | 'no_change'
  /** The payment is in a final status, which never changes. */
  | 'final'
  /** Not in the table, e.g. a late `pending` after `approved`. */
  | 'not_allowed'
  /** A void after a refund was recorded. */
  | 'refunds_exist'
  /** A void after a chargeback was recorded. */
  | 'charged_back'
  /** A refund status that the approved refunds do not produce. */
  | 'refund_mismatch';

export type TransitionResult<S extends string> =
  | { ok: true; status: S; updatedAt: number }
  | { ok: false; reason: TransitionRefusal };

function refusal(from: PaymentStatus, to: PaymentStatus, guards: TransitionGuards): TransitionRefusal | null {
  const allowed = PAYMENT_TRANSITIONS[from];
  if (from === to && !allowed.includes(to)) return 'no_change';
  if (allowed.length === 0) return 'final';
  if (!allowed.includes(to)) return 'not_allowed';
  if (from === 'approved' && to === 'canceled' && guards.hasRefunds) return 'refunds_exist';
  if (from === 'approved' && to === 'canceled' && guards.chargedBack) return 'charged_back';
  if ((to === 'partially_refunded' || to === 'refunded') && to !== (guards.refundOutcome ?? null))
    return 'refund_mismatch';
  return null;
}

export function canTransition(from: PaymentStatus, to: PaymentStatus, guards: TransitionGuards): boolean {
  return refusal(from, to, guards) === null;
}

/**
 * Cancel from `created`, `pending`, `processing`, or `approved` before any refund (a void); never once
 * charged back (the money is already gone, and the processor settles the dispute, not a void).
 */
export function canCancel(status: PaymentStatus, hasRefunds: boolean, chargedBack = false): boolean {
  return canTransition(status, 'canceled', { hasRefunds, chargedBack });
}

/**
 * Refunds are accepted for `approved` and `partially_refunded` payments only, and never once charged
 * back: the payer's bank already took the money back, so a refund would pay the payer twice.
 */
export function canRefund(status: PaymentStatus, chargedBack = false): boolean {
  return !chargedBack && (status === 'approved' || status === 'partially_refunded');
}

/** Statuses a chargeback is recorded on as they are: the money had been collected. */
const CHARGEABLE: readonly PaymentStatus[] = ['approved', 'partially_refunded', 'refunded'];
/** Statuses a chargeback finds still open: the approval was missed, and the chargeback proves it. */
const OPEN: readonly PaymentStatus[] = ['created', 'pending', 'processing'];

/**
 * A chargeback (the payer's bank took a collected payment's money back) is not a status: the interface's
 * payment states are closed, and a processor keeps the payment collected while a dispute runs (Stripe's
 * PaymentIntent stays `succeeded`; Mercado Pago's order says `charged_back`). It is recorded once, as
 * `charged_back_at`, on a collected payment; an open payment becomes `approved` on the way. A payment
 * that never collected (declined, failed, expired, canceled) has nothing to take back: null, as for a
 * repeated chargeback.
 */
export function chargeback(
  current: { status: PaymentStatus; chargedBackAt: number | null; updatedAt: number },
  now: number,
): { status: PaymentStatus; chargedBackAt: number; updatedAt: number } | null {
  if (current.chargedBackAt !== null) return null;
  const status = OPEN.includes(current.status)
    ? 'approved'
    : CHARGEABLE.includes(current.status)
      ? current.status
      : null;
  if (status === null) return null;
  const updatedAt = nextUpdatedAt(current.updatedAt, now);
  return { status, chargedBackAt: updatedAt, updatedAt };
}

/**
 * Strictly increasing per record even when the clock stands still or steps back (two changes in the
 * same millisecond, or isolates with skewed clocks), because clients order updates by `updated_at`.
 */
export function nextUpdatedAt(previous: number, now: number): number {
  return Math.max(now, previous + 1);
}

export function applyTransition(
  current: { status: PaymentStatus; updatedAt: number },
  to: PaymentStatus,
  now: number,
  guards: TransitionGuards,
): TransitionResult<PaymentStatus> {
  const reason = refusal(current.status, to, guards);
  if (reason) return { ok: false, reason };
  return { ok: true, status: to, updatedAt: nextUpdatedAt(current.updatedAt, now) };
}

export const PAYMENT_EVENT_TYPES = [
  'payment.pending',
  'payment.approved',
  'payment.declined',
  'payment.failed',
  'payment.expired',
  'payment.canceled',
  'payment.refunded',
  /** Not a status: `charged_back_at` is set on a collected payment (see `chargeback`). */
  'payment.charged_back',
  /** Not a status: the payment stays `pending` with `action.type: check_terminal` (see `actionEventType`). */
  'payment.action_required',
  /** Not a payment status: an approved refund failed later (`REFUND_REVERSAL_EVENT_TYPE`, domain/reversals.ts). */
  'refund.failed',
  /**
   * Enters `approved`, but not a new collection: the refund that carried out a void failed later
   * (`VOID_REVERSAL_EVENT_TYPE`, domain/reversals.ts).
   */
  'payment.void_failed',
  /** Not payment statuses: a dispute of the payment opened, changed, or closed (`DISPUTE_EVENT_TYPES`, domain/disputes.ts). */
  'dispute.created',
  'dispute.updated',
  'dispute.closed',
] as const;

export type PaymentEventType = (typeof PAYMENT_EVENT_TYPES)[number];

const EVENT_TYPES: Readonly<Record<PaymentStatus, PaymentEventType | null>> = {
  // `created` and `processing` are internal steps with nothing for a merchant to act on.
  created: null,
  pending: 'payment.pending',
  processing: null,
  approved: 'payment.approved',
  declined: 'payment.declined',
  failed: 'payment.failed',
  expired: 'payment.expired',
  canceled: 'payment.canceled',
  // One event for both refund outcomes: the payload's status tells them apart.
  partially_refunded: 'payment.refunded',
  refunded: 'payment.refunded',
};

/** The webhook sent when a payment enters `status`, or null when that status sends none. */
export function eventTypeFor(status: PaymentStatus): PaymentEventType | null {
  return EVENT_TYPES[status];
}

/**
 * Actions a payment can wait on without changing status. `check_terminal`: the processor will not settle
 * the payment by itself (Mercado Pago Point's `action_required`); someone must check the terminal.
 */
export const REQUIRED_ACTIONS = ['check_terminal'] as const;
export type RequiredAction = (typeof REQUIRED_ACTIONS)[number];

/** The webhook sent when a payment starts waiting on `action`. */
export function actionEventType(action: RequiredAction): PaymentEventType {
  switch (action) {
    case 'check_terminal':
      return 'payment.action_required';
  }
}
