import { nextUpdatedAt } from './payment-state.ts';

/**
 * Disputes (chargebacks, and the inquiries that may precede them) as a state machine. A processor reports
 * a dispute as it runs; the service records what it learns and tells the merchant through one event per
 * change. docs/states.md ("Disputes") is the prose of this file; test/docs.test.ts compares the tables.
 *
 * The statuses are Stripe's seven (`Stripe.Dispute.Status`, stripe 16.12.0 types/Disputes.d.ts), the
 * richest model among our processors; other processors map into them (each connector's NOTES.md).
 */

export const DISPUTE_STATUSES = [
  'warning_needs_response',
  'warning_under_review',
  'warning_closed',
  'needs_response',
  'under_review',
  'won',
  'lost',
] as const;
export type DisputeStatus = (typeof DISPUTE_STATUSES)[number];

/**
 * Why the payer disputed, normalized: Stripe's `Dispute.reason` values (its API reference, "The Dispute
 * object"; docs.stripe.com/disputes/categories). A processor's reason outside this set is `general`,
 * Stripe's own word for an uncategorized dispute.
 */
export const DISPUTE_REASONS = [
  'bank_cannot_process',
  'check_returned',
  'credit_not_processed',
  'customer_initiated',
  'debit_not_authorized',
  'duplicate',
  'fraudulent',
  'general',
  'incorrect_account_details',
  'insufficient_funds',
  'product_not_received',
  'product_unacceptable',
  'subscription_canceled',
  'unrecognized',
] as const;
export type DisputeReason = (typeof DISPUTE_REASONS)[number];

export const isDisputeStatus = (value: unknown): value is DisputeStatus =>
  typeof value === 'string' && (DISPUTE_STATUSES as readonly string[]).includes(value);
export const isDisputeReason = (value: unknown): value is DisputeReason =>
  typeof value === 'string' && (DISPUTE_REASONS as readonly string[]).includes(value);

/**
 * Allowed status moves. News may skip steps (a notification lost, or the processor decided at once), so
 * each status may move to any later one; nothing moves back, so late or repeated news changes nothing.
 * - An inquiry (`warning_*`) may escalate to a chargeback ("an inquiry that escalated",
 *   docs.stripe.com/disputes/how-disputes-work), or close unescalated (`warning_closed`, "If an inquiry has
 *   been open for 120 days without escalation ... you can be confident the card network won't escalate it").
 * - A chargeback is answered (`under_review`) and decided `won` or `lost`; some are closed as lost at once
 *   (unchallengeable disputes, ibid.).
 * - `won`, `lost` and `warning_closed` are final: "This outcome is final for all parties" (ibid., "After the
 *   decision"); "Closing a dispute is irreversible" (API reference, "Close a dispute").
 */
export const DISPUTE_TRANSITIONS: Readonly<Record<DisputeStatus, readonly DisputeStatus[]>> = {
  warning_needs_response: ['warning_under_review', 'warning_closed', 'needs_response', 'under_review', 'won', 'lost'],
  warning_under_review: ['warning_closed', 'needs_response', 'under_review', 'won', 'lost'],
  warning_closed: [],
  needs_response: ['under_review', 'won', 'lost'],
  under_review: ['won', 'lost'],
  won: [],
  lost: [],
};

export const isDisputeClosed = (status: DisputeStatus) => DISPUTE_TRANSITIONS[status].length === 0;

export function canDisputeTransition(from: DisputeStatus, to: DisputeStatus): boolean {
  return DISPUTE_TRANSITIONS[from].includes(to);
}

export const DISPUTE_EVENT_TYPES = ['dispute.created', 'dispute.updated', 'dispute.closed'] as const;
export type DisputeEventType = (typeof DISPUTE_EVENT_TYPES)[number];

/** What a processor says of a dispute, in our words; times in epoch milliseconds. */
export interface DisputeFacts {
  status: DisputeStatus;
  /** Integer minor units; usually the payment's amount, but a dispute may be partial. */
  amount: { minor: number; currency: string };
  reason: DisputeReason;
  /** When evidence is due; null when the processor gives no deadline (or allows no response). */
  evidenceDueBy: number | null;
  /** When the disputed funds left the merchant's balance; null while they have not (an inquiry). */
  fundsWithdrawnAt: number | null;
  /** When they came back (a won chargeback); null otherwise. */
  fundsReinstatedAt: number | null;
}

export interface DisputeState extends DisputeFacts {
  createdAt: number;
  updatedAt: number;
}

export type DisputeNewsResult =
  | {
      ok: true;
      dispute: DisputeState;
      /** In order: `dispute.created` for a dispute first heard of, then `dispute.closed` if it is closed. */
      events: DisputeEventType[];
      /**
       * The dispute became `lost` with this news: the payment's chargeback summary (`charged_back_at`,
       * `chargeback` in payment-state.ts) is recorded now. Only `lost` is final money taken back.
       */
      lost: boolean;
    }
  | { ok: false; reason: 'no_change' };

const sameAmount = (a: DisputeFacts['amount'], b: DisputeFacts['amount']) =>
  a.minor === b.minor && a.currency === b.currency;

/**
 * Applies a processor's news of a dispute to what is recorded (null: first heard of). A status move is taken only
 * when the table allows it; news whose status is behind the record (late, repeated, out of order) is stale, and of it
 * only the money facts are kept: funds withdrawn or reinstated are facts once they happened, so a time is recorded
 * once and never cleared. A closed dispute never changes again, with one exception: a won dispute's reinstatement,
 * which Stripe reports after the dispute closed (`charge.dispute.funds_reinstated`, "after a dispute is closed"); a
 * lost or unescalated one has nothing to reinstate.
 */
export function applyDisputeNews(current: DisputeState | null, news: DisputeFacts, now: number): DisputeNewsResult {
  if (current === null) {
    const events: DisputeEventType[] = ['dispute.created'];
    if (isDisputeClosed(news.status)) events.push('dispute.closed');
    return { ok: true, dispute: { ...news, createdAt: now, updatedAt: now }, events, lost: news.status === 'lost' };
  }
  if (isDisputeClosed(current.status)) {
    if (current.status !== 'won' || current.fundsReinstatedAt !== null || news.fundsReinstatedAt === null)
      return { ok: false, reason: 'no_change' };
    return {
      ok: true,
      dispute: {
        ...current,
        fundsReinstatedAt: news.fundsReinstatedAt,
        updatedAt: nextUpdatedAt(current.updatedAt, now),
      },
      events: ['dispute.updated'],
      lost: false,
    };
  }
  const moves = canDisputeTransition(current.status, news.status);
  const fresh = moves || news.status === current.status;
  const next: DisputeFacts = {
    status: moves ? news.status : current.status,
    amount: fresh ? news.amount : current.amount,
    reason: fresh ? news.reason : current.reason,
    evidenceDueBy: fresh ? news.evidenceDueBy : current.evidenceDueBy,
    fundsWithdrawnAt: current.fundsWithdrawnAt ?? news.fundsWithdrawnAt,
    fundsReinstatedAt: current.fundsReinstatedAt ?? news.fundsReinstatedAt,
  };
  const changed =
    next.status !== current.status ||
    !sameAmount(next.amount, current.amount) ||
    next.reason !== current.reason ||
    next.evidenceDueBy !== current.evidenceDueBy ||
    next.fundsWithdrawnAt !== current.fundsWithdrawnAt ||
    next.fundsReinstatedAt !== current.fundsReinstatedAt;
  if (!changed) return { ok: false, reason: 'no_change' };
  const closes = moves && isDisputeClosed(next.status);
  return {
    ok: true,
    dispute: { ...next, createdAt: current.createdAt, updatedAt: nextUpdatedAt(current.updatedAt, now) },
    events: [closes ? 'dispute.closed' : 'dispute.updated'],
    lost: moves && next.status === 'lost',
  };
}
