import { cancellationInProgress } from './cancellation.ts';
import { canCancel, canRefund, type PaymentStatus, type RequiredAction } from './payment-state.ts';
import { reserveRefund, type RefundLedgerEntry } from './refund-state.ts';

/**
 * What a merchant may do to a payment now, decided from the payment and its refund ledger. A refusal
 * carries its reason; services/payments/refusals.ts maps each reason to the error a client sees, so each
 * rule (a charged-back payment is never refunded or canceled, a payment at the terminal is settled
 * there...) is written once, here.
 */

export type Refusal =
  /** The payment awaits a check at the terminal: its outcome is settled there, not by the API. */
  | 'awaits_terminal_check'
  /** The payer's bank took the money back (`charged_back_at`). */
  | 'charged_back'
  /** A cancellation holds its claim on the payment. */
  | 'cancellation_in_progress'
  /** The status does not allow a cancel (docs/states.md, "Payment transitions"). */
  | 'not_cancelable'
  /** The status does not allow a refund: only `approved` and `partially_refunded` are refunded. */
  | 'not_refundable'
  /** The refund asks for more than approved and in-flight refunds leave. */
  | 'exceeds_balance';

export type Decision<Extra = object> = ({ ok: true } & Extra) | { ok: false; reason: Refusal; balance?: number };

export interface PaymentFacts {
  status: PaymentStatus;
  requiredAction: RequiredAction | null;
  chargedBackAt: number | null;
  cancelRequestedAt: number | null;
  /** When the processor accepted a cancel it completes later (the public `cancel_requested_at`). */
  cancelAcceptedAt: number | null;
  amountMinor: number;
}

/** Statuses a cancel the processor accepted may still complete from (docs/states.md, "Cancel at the terminal"). */
const OPEN_STATUSES: readonly PaymentStatus[] = ['created', 'pending', 'processing'];

/** Whether a cancel the processor accepted is still to complete: the payment is open and the cancel was requested. */
export const cancelAwaitingProcessor = (payment: Pick<PaymentFacts, 'status' | 'cancelAcceptedAt'>) =>
  payment.cancelAcceptedAt !== null && OPEN_STATUSES.includes(payment.status);

/**
 * A cancel: from `created`, `pending`, `processing`, or a void of an `approved` payment no refund was recorded for.
 * `alreadyRequested`: the processor accepted an earlier cancel that has not completed; nothing new is asked,
 * the payment is answered as it is (docs/states.md, "Cancel at the terminal").
 */
export function decideCancel(
  payment: PaymentFacts,
  hasRefunds: boolean,
  now: number,
): Decision<{ alreadyRequested: boolean }> {
  if (payment.status === 'pending' && payment.requiredAction === 'check_terminal') {
    return { ok: false, reason: 'awaits_terminal_check' };
  }
  if (payment.chargedBackAt !== null) return { ok: false, reason: 'charged_back' };
  if (cancelAwaitingProcessor(payment)) return { ok: true, alreadyRequested: true };
  if (cancellationInProgress(payment, now)) return { ok: false, reason: 'cancellation_in_progress' };
  if (!canCancel(payment.status, hasRefunds, false)) return { ok: false, reason: 'not_cancelable' };
  return { ok: true, alreadyRequested: false };
}

/**
 * A refund of `requested` minor units: only while no cancellation holds the payment, never once charged back,
 * only from `approved` and `partially_refunded`, and within the refundable balance (`balance` on refusal).
 */
export function decideRefund(
  payment: PaymentFacts,
  ledger: readonly RefundLedgerEntry[],
  requested: number,
  now: number,
): Decision<{ balanceAfter: number }> {
  if (cancellationInProgress(payment, now)) return { ok: false, reason: 'cancellation_in_progress' };
  if (payment.chargedBackAt !== null) return { ok: false, reason: 'charged_back' };
  if (!canRefund(payment.status, false)) return { ok: false, reason: 'not_refundable' };
  const fits = reserveRefund(payment.amountMinor, ledger, requested);
  if (!fits.ok) return { ok: false, reason: 'exceeds_balance', balance: fits.balance };
  return { ok: true, balanceAfter: fits.balanceAfter };
}
