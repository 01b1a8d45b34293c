import { cancellationInProgress, voidAwaited } from '../cancellation.ts';
import { canCancel, nextUpdatedAt } from '../payment-state.ts';
import {
  accountPatch,
  changed,
  type Decision,
  OPEN_STATUSES,
  paymentChange,
  type ProcessorAccount,
  refused,
  unchanged,
} from './change.ts';
import type { PaymentRecord } from './records.ts';

/**
 * A cancel, in three steps (services/payments/cancel-payment.ts): the claim, taken before the processor is asked (no
 * refund can be reserved meanwhile: a refund sent on a voided charge would fail or pay out twice); the processor's
 * answer; or the claim's release when the processor said no. Allowed from `created`, `pending`, `processing`, and as a
 * void of an `approved` payment no refund was ever recorded for (docs/states.md, "Payment transitions").
 */

export interface ClaimCancel {
  type: 'claim_cancel';
  /** The attempt (idempotency object) asking: a retry of the same attempt finds its own claim or outcome. */
  attemptKey: string;
}

export interface ReleaseCancel {
  type: 'release_cancel';
}

/** The processor's answer to the cancel: carried out (or the payment's status instead), or accepted for later. */
export interface CancelAnswered {
  type: 'cancel_answered';
  attemptKey: string;
  account: ProcessorAccount;
  processorStatus: string;
  /** The processor accepted the cancel and completes it later (a POS payment on the terminal). */
  requested: boolean;
  /** The processor was asked to void the payment (approved when claimed), not to stop one still open. */
  voidAsked: boolean;
}

/**
 * `claimed`: ask the processor; `resumed`: this attempt's claim still holds, ask again; `done`: the payment is the
 * answer as it is (this attempt canceled it, or a cancel the processor accepted is still to complete).
 */
export type ClaimOutcome = 'claimed' | 'resumed' | 'done';

/**
 * Whether a cancel the processor accepted is still to complete: the payment is open and the cancel was requested, or
 * it is approved and its void was requested less than a day ago (`voidAwaited`).
 */
export const cancelAwaitingProcessor = (p: Pick<PaymentRecord, 'status' | 'cancelRequestedAt'>, now: number) =>
  (p.cancelRequestedAt !== null && OPEN_STATUSES.includes(p.status)) || voidAwaited(p, now);

export function claimCancel(p: PaymentRecord, c: ClaimCancel, now: number): Decision<ClaimOutcome> {
  const own = p.cancelAttemptKey === c.attemptKey;
  if (own && (p.status === 'canceled' || cancelAwaitingProcessor(p, now))) return unchanged('done');
  if (own && cancellationInProgress(p, now)) return unchanged('resumed');
  // This attempt's cancel was accepted, then the payment resolved otherwise (the customer paid first): a retry is
  // never turned into a void.
  if (own && !OPEN_STATUSES.includes(p.status)) return refused('not_cancelable');
  if (p.status === 'pending' && p.requiredAction === 'check_terminal') return refused('awaits_terminal_check');
  if (p.chargedBackAt !== null) return refused('charged_back');
  if (p.openDisputeId !== null) return refused('payment_disputed');
  // Another attempt's cancel the processor accepted and has not completed: the same answer, nothing asked again.
  if (cancelAwaitingProcessor(p, now)) return unchanged('done');
  if (cancellationInProgress(p, now)) return refused('cancellation_in_progress');
  if (!canCancel(p.status, p.refundCount > 0)) return refused('not_cancelable');
  return changed({ payment: { cancelClaimedAt: now, cancelAttemptKey: c.attemptKey }, events: [] }, 'claimed');
}

export function releaseCancel(_p: PaymentRecord, _c: ReleaseCancel): Decision<null> {
  return changed({ payment: { cancelClaimedAt: null, cancelAttemptKey: null }, events: [] }, null);
}

/**
 * The answer goes through the same rules as the processor's notifications (a chargeback it reports instead is recorded
 * as one). `canceled`: done; `requested`: accepted for later (the public `cancel_requested_at`, answered 202);
 * `not_cancelable`: something else settled the payment meanwhile (a refund, a final notification, the customer paid).
 * A payment this attempt canceled, or whose cancel it had accepted, keeps the attempt's key: a retry after a crash
 * answers it instead of a 409.
 */
export function cancelAnswered(
  p: PaymentRecord,
  c: CancelAnswered,
  now: number,
): Decision<'canceled' | 'requested' | 'not_cancelable'> {
  const account = accountPatch(p, c.account, now);
  const status = account?.status ?? p.status;
  if (c.requested) {
    // Awaited: an open payment's cancel, or the void asked of an approved payment (one that was paid while its
    // terminal was asked to stop is not voided by that).
    const awaited = OPEN_STATUSES.includes(status) || (c.voidAsked && status === 'approved');
    const change = paymentChange(p, {
      ...account,
      processorStatus: c.processorStatus,
      cancelClaimedAt: null,
      cancelAttemptKey: c.attemptKey,
      ...(awaited && p.cancelRequestedAt === null
        ? { cancelRequestedAt: now, updatedAt: account?.updatedAt ?? nextUpdatedAt(p.updatedAt, now) }
        : {}),
    });
    return changed(change, status === 'canceled' ? 'canceled' : awaited ? 'requested' : 'not_cancelable');
  }
  // Nothing to change: canceled already (by another path), or the processor's status is behind ours.
  if (!account)
    return changed(
      { payment: { cancelClaimedAt: null, cancelAttemptKey: null }, events: [] },
      p.status === 'canceled' ? 'canceled' : 'not_cancelable',
    );
  const canceled = status === 'canceled';
  return changed(
    paymentChange(p, {
      ...account,
      processorStatus: c.processorStatus,
      cancelClaimedAt: null,
      cancelAttemptKey: canceled ? c.attemptKey : null,
    }),
    canceled ? 'canceled' : 'not_cancelable',
  );
}
