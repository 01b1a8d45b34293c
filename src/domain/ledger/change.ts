import { DISPUTABLE_STATUSES, firstDisputeCheck } from '../dispute-checks.ts';
import {
  actionEventType,
  applyTransition,
  chargeback,
  COLLECTED_STATUSES,
  eventTypeFor,
  nextUpdatedAt,
  type PaymentEventType,
  type PaymentStatus,
  type RequiredAction,
} from '../payment-state.ts';
import { type ProcessorSettlementNullReason, type SettlementFacts, settlementChange } from '../settlement.ts';
import { terminalWaitChange } from '../terminal-checks.ts';
import type { DisputeRecord, PaymentPatch, PaymentRecord, RefundRecord } from './records.ts';

/**
 * What the ledger decides: a change to commit, nothing, or a refusal. A change is everything one compare-and-set of
 * the payment writes (services/payments/store.ts `commit`): the payment's new fields, the refund and the dispute row it
 * inserts or updates, and the events it sends, in order. The store adds nothing of its own but the version and the
 * outbox rows of the events.
 */
export interface Change {
  payment: PaymentPatch;
  refund?: { insert: RefundRecord } | { update: RefundRecord };
  dispute?: { insert: DisputeRecord } | { update: DisputeRecord };
  events: LedgerEvent[];
}

/** An event of the change: its type, and what it is about besides the payment (its payload carries that row too). */
export interface LedgerEvent {
  type: PaymentEventType;
  about?: 'refund' | 'dispute';
}

export type Refusal =
  /** The payment awaits a check at the terminal: its outcome is settled there, not by the API. */
  | 'awaits_terminal_check'
  /** The payer's bank took the money back (`charged_back_at`). */
  | 'charged_back'
  /** A dispute of the payment is open: no refund or void until it closes (Stripe refuses them: `charge_disputed`). */
  | 'payment_disputed'
  /** A cancellation holds its claim on the payment. */
  | 'cancellation_in_progress'
  /** The status does not allow a cancel (docs/states.md, "Payment transitions"). */
  | 'not_cancelable'
  /** The status does not allow a refund: only `approved` and `partially_refunded` are refunded. */
  | 'not_refundable'
  /** The refund asks for more than approved and in-flight refunds leave. */
  | 'refund_exceeds_balance';

export type Decision<Outcome> =
  | { kind: 'change'; change: Change; outcome: Outcome }
  | { kind: 'none'; outcome: Outcome }
  | { kind: 'refused'; refusal: Refusal; balance?: number };

export const changed = <O>(change: Change, outcome: O): Decision<O> => ({ kind: 'change', change, outcome });
export const unchanged = <O>(outcome: O): Decision<O> => ({ kind: 'none', outcome });
export const refused = (refusal: Refusal, balance?: number): Decision<never> => ({
  kind: 'refused',
  refusal,
  ...(balance !== undefined ? { balance } : {}),
});

/** The statuses a payment is still open in (a cancel may complete, an action may be awaited). */
export const OPEN_STATUSES: readonly PaymentStatus[] = ['created', 'pending', 'processing'];

/**
 * A payment change with the consequences every change has, whoever decided it: a payment collected by it starts
 * being read for disputes (docs/dispute-checks.md); a cancel the processor had accepted is no longer awaited once the
 * payment resolved otherwise (`cancel_requested_at` cleared); and, unless the decision named its events, the event the
 * change itself calls for: `payment.action_required` when it starts waiting on an action, `payment.charged_back` for
 * a chargeback, or the new status's own event. Every status change sends exactly one event of its own or the events
 * its decision named (a refund reversal's `refund.failed`, a dispute's), never both.
 */
export function paymentChange(current: PaymentRecord, patch: PaymentPatch, named?: LedgerEvent[]): Change {
  let payment = patch;
  const status = patch.status ?? current.status;
  if (
    patch.status !== undefined &&
    DISPUTABLE_STATUSES.includes(patch.status) &&
    !DISPUTABLE_STATUSES.includes(current.status) &&
    current.disputeCheckAt === null &&
    patch.disputeCheckAt === undefined
  )
    payment = { ...payment, disputeCheckAt: firstDisputeCheck(patch.updatedAt ?? current.updatedAt) };
  // Resolved otherwise than by the cancel: the status moved on, to neither an open status nor `canceled`.
  if (
    current.cancelRequestedAt !== null &&
    status !== current.status &&
    !OPEN_STATUSES.includes(status) &&
    status !== 'canceled'
  )
    payment = { ...payment, cancelRequestedAt: null };
  const own: LedgerEvent[] = patch.requiredAction
    ? [{ type: actionEventType(patch.requiredAction) }]
    : patch.chargedBackAt
      ? [{ type: 'payment.charged_back' }]
      : patch.status !== undefined && eventTypeFor(patch.status) !== null
        ? [{ type: eventTypeFor(patch.status)! }]
        : [];
  return { payment, events: named ?? own };
}

/** What a processor says of a payment: its status in our words, an action it waits on, and what it kept of the money. */
export interface ProcessorAccount {
  status: PaymentStatus | 'charged_back';
  action?: { type: 'none' | 'display_qr' | 'check_terminal' | 'at_terminal' };
  /** The refund that carried out a void, when the processor named it. */
  voidRefundReference?: string;
  /** The processor's own id of the payment (`PaymentOutcome.processorPaymentId`), when the answer holds it. */
  processorPaymentId?: string;
  /** Absent: the answer did not say; null: it reported none (with its reason). */
  settlement?: SettlementFacts | null;
  settlementNullReason?: ProcessorSettlementNullReason;
}

/**
 * What the processor's account of a payment changes, through the state machine: a new status, and/or the action it
 * starts waiting on (`check_terminal` while `pending`, which moves `updated_at` and is announced once), or a
 * chargeback (`charged_back_at`, once; the rest of the payment is booked as charged back). The one place a payment's
 * settlement is recorded, on every path that hears the processor: the first settlement it reports while the payment
 * is collected. A void (`approved` → `canceled`) is dated (`voided_at`), with the refund that carried it out when the
 * processor named it. Null when nothing changes.
 */
export function accountPatch(current: PaymentRecord, account: ProcessorAccount, now: number): PaymentPatch | null {
  if (account.status === 'charged_back') {
    const back = chargeback(current, now);
    const status = back?.status ?? current.status;
    const settlement = COLLECTED_STATUSES.includes(status) ? settlementChange(current, account) : null;
    if (!back && !settlement) return null;
    return {
      ...(back
        ? { ...back, amountChargedBack: current.amountChargedBack + refundableBalance(current) }
        : { updatedAt: nextUpdatedAt(current.updatedAt, now) }),
      ...settlement,
    };
  }
  // The expiry's own withdrawal, completed: the processor calls it a cancel (Adyen's CANCELLATION); the QR expired.
  const target = account.status === 'canceled' && expiryWithdrawalAwaited(current) ? 'expired' : account.status;
  const move = applyTransition(current, target, now, {
    hasRefunds: current.refundCount > 0,
    chargedBack: current.chargedBackAt !== null,
  });
  const status = move.ok ? move.status : current.status;
  const required: RequiredAction | null =
    status === 'pending' && account.action?.type === 'check_terminal' ? 'check_terminal' : null;
  const newAction = required !== null && current.requiredAction !== required;
  // Whether it waits at its terminal (shown as `at_terminal`, read again on the terminal schedule).
  const terminal = terminalWaitChange(
    current,
    { status, ...(account.action ? { action: account.action.type } : {}) },
    now,
  );
  // Only collected money has a settlement.
  const settlement = COLLECTED_STATUSES.includes(status) ? settlementChange(current, account) : null;
  if (!move.ok && !newAction && !terminal && !settlement) return null;
  const voided = move.ok && current.status === 'approved' && move.status === 'canceled';
  return {
    ...(move.ok
      ? { status: move.status, updatedAt: move.updatedAt }
      : { updatedAt: nextUpdatedAt(current.updatedAt, now) }),
    ...(newAction ? { requiredAction: required } : {}),
    ...terminal,
    ...settlement,
    ...(voided ? { voidedAt: now, voidRefundReference: account.voidRefundReference ?? null } : {}),
  };
}

/**
 * The expiry job asked the processor to withdraw this QR and it accepted to do so later (`expire`'s `requested`): a
 * pending QR past its expiry whose cancel no client asked for (a client's cancel keeps its attempt's key).
 */
export const expiryWithdrawalAwaited = (
  p: Pick<PaymentRecord, 'status' | 'expiresAt' | 'cancelRequestedAt' | 'cancelAttemptKey'>,
): boolean =>
  p.status === 'pending' &&
  p.expiresAt !== null &&
  p.cancelRequestedAt !== null &&
  p.cancelRequestedAt >= p.expiresAt &&
  p.cancelAttemptKey === null;

/** The processor's own id of the payment, kept from the first answer or news that holds it; never replaced. */
export const firstProcessorPaymentId = (current: PaymentRecord, account: ProcessorAccount): PaymentPatch =>
  current.processorPaymentId === null && account.processorPaymentId
    ? { processorPaymentId: account.processorPaymentId }
    : {};

/**
 * What is left of the payment for a refund or a chargeback: the amount less approved and in-flight refunds and what
 * was charged back. Refunded, reserved and charged back together never exceed the amount (test/domain/ledger.test.ts).
 * A "full refund" is exactly this amount.
 */
export const refundableBalance = (p: PaymentRecord) =>
  Math.max(0, p.amountMinor - p.amountRefunded - p.amountReserved - p.amountChargedBack);
