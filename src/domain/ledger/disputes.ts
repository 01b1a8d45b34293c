import { OPEN_DISPUTE_CHECK_GAP_MS } from '../dispute-checks.ts';
import { applyDisputeNews, type DisputeFacts, type DisputeState, isDisputeClosed } from '../disputes.ts';
import { chargeback, COLLECTED_STATUSES, nextUpdatedAt } from '../payment-state.ts';
import { changed, type Decision, type LedgerEvent, paymentChange, refundableBalance, unchanged } from './change.ts';
import type { DisputeRecord, PaymentPatch, PaymentRecord } from './records.ts';

/**
 * Trusted news of one of the payment's disputes (a verified notification, or the processor's answer to the service's
 * read), keyed by the processor's dispute id. The store loads the payment with the dispute it names.
 */
export interface DisputeNews {
  type: 'dispute_news';
  /** The id the service gives a dispute first heard of. */
  newId: string;
  processorDisputeId: string;
  processorStatus: string;
  facts: DisputeFacts;
}

/**
 * Applies the news through `applyDisputeNews`: the dispute row, its events (`dispute.created`, `.updated`, `.closed`,
 * with the dispute and the payment) and, when the dispute is lost, the chargeback (`charged_back_at` and the rest of
 * the payment booked as charged back, with `payment.charged_back`). A payment that never collected has nothing to
 * dispute; one voided after collection had, and its disputes are recorded (without a chargeback: the void returned
 * the money already). At most one dispute is open per payment (Stripe allows one dispute per charge): news of another
 * while one is open changes nothing. An open dispute is read again until it closes (docs/dispute-checks.md). Returns
 * the dispute as recorded, or null when nothing changed.
 */
/**
 * Whether news of a new dispute of the payment is recorded: its money was collected (a payment voided after
 * collection included), and no other dispute of it is open (one at a time, as Stripe allows one per charge).
 */
export function newDisputeOf(
  p: Pick<PaymentRecord, 'status' | 'voidedAt' | 'openDisputeId'>,
): 'accepted' | 'not_collected' | 'one_open' {
  if (!(COLLECTED_STATUSES.includes(p.status) || (p.status === 'canceled' && p.voidedAt !== null)))
    return 'not_collected';
  return p.openDisputeId === null ? 'accepted' : 'one_open';
}

export function disputeNews(
  p: PaymentRecord,
  current: DisputeRecord | null,
  c: DisputeNews,
  now: number,
): Decision<DisputeRecord | null> {
  if (current === null && newDisputeOf(p) !== 'accepted') return unchanged(null);
  const applied = applyDisputeNews(current ? stateOf(current) : null, c.facts, now);
  if (!applied.ok) return unchanged(null);
  const { dispute } = applied;
  const next: DisputeRecord = {
    id: current?.id ?? c.newId,
    paymentId: p.id,
    ownerId: p.ownerId,
    environment: p.environment,
    processorDisputeId: c.processorDisputeId,
    status: dispute.status,
    amountMinor: dispute.amount.minor,
    currency: dispute.amount.currency,
    reason: dispute.reason,
    evidenceDueBy: dispute.evidenceDueBy,
    fundsWithdrawnAt: dispute.fundsWithdrawnAt,
    fundsReinstatedAt: dispute.fundsReinstatedAt,
    // A closed dispute keeps its processor's last word too (only a won one's reinstatement is taken after it closed).
    processorStatus: current && isDisputeClosed(current.status) ? current.processorStatus : c.processorStatus,
    createdAt: dispute.createdAt,
    updatedAt: dispute.updatedAt,
  };
  const closed = isDisputeClosed(next.status);
  // A lost dispute is the chargeback: recorded once (`chargeback` is null when it already is, or the payment was
  // voided), booking what the dispute took back, no more than is left of the payment.
  const charged = applied.lost ? chargeback(p, now) : null;
  // In the payment's currency, what the dispute took, at most what is left; in another (the processor's settlement
  // currency) its minor units are not the payment's: what is left.
  const left = refundableBalance(p);
  const taken = next.currency === p.currency ? Math.min(next.amountMinor, left) : left;
  const booked = charged ? { ...charged, amountChargedBack: p.amountChargedBack + taken } : null;
  const openCheck = now + OPEN_DISPUTE_CHECK_GAP_MS;
  const patch: PaymentPatch = {
    ...(booked ?? { updatedAt: nextUpdatedAt(p.updatedAt, now) }),
    openDisputeId: closed ? (p.openDisputeId === next.id ? null : p.openDisputeId) : next.id,
    ...(!closed && (p.disputeCheckAt === null || p.disputeCheckAt > openCheck) ? { disputeCheckAt: openCheck } : {}),
  };
  const events: LedgerEvent[] = applied.events.map((type) => ({ type, about: 'dispute' }));
  if (booked) events.push({ type: 'payment.charged_back' });
  return changed({ ...paymentChange(p, patch, events), dispute: current ? { update: next } : { insert: next } }, next);
}

const stateOf = (row: DisputeRecord): DisputeState => ({
  status: row.status,
  amount: { minor: row.amountMinor, currency: row.currency },
  reason: row.reason,
  evidenceDueBy: row.evidenceDueBy,
  fundsWithdrawnAt: row.fundsWithdrawnAt,
  fundsReinstatedAt: row.fundsReinstatedAt,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt,
});
