import type { ClaimOutcome } from './cancels.ts';
import {
  cancelAnswered,
  claimCancel,
  releaseCancel,
  type CancelAnswered,
  type ClaimCancel,
  type ReleaseCancel,
} from './cancels.ts';
import type { Decision } from './change.ts';
import {
  claimDisputeCheck,
  claimTerminalCheck,
  deferDisputeCheck,
  rescheduleDisputeCheck,
  type ClaimDisputeCheck,
  type ClaimTerminalCheck,
  type DeferDisputeCheck,
  type RescheduleDisputeCheck,
} from './checks.ts';
import { disputeNews, type DisputeNews } from './disputes.ts';
import {
  createAnswered,
  createFailed,
  expire,
  markLooked,
  processorNews,
  voidReversal,
  type CreateAnswered,
  type CreateFailed,
  type Expire,
  type MarkLooked,
  type ProcessorNews,
  type VoidReversal,
} from './payments.ts';
import type { DisputeRecord, PaymentRecord, RefundRecord } from './records.ts';
import {
  refundAnswered,
  refundFailed,
  refundLooked,
  refundNews,
  reserveRefund,
  type RefundAnswered,
  type RefundFailed,
  type RefundLooked,
  type RefundNews,
  type ReserveRefund,
} from './refunds.ts';

/**
 * The payment ledger: every rule of a payment, its refunds and its disputes, as one pure function. It takes the
 * payment's state (the row, with its running totals, and the one refund or dispute a command is about) and a command
 * (an operation's request or outcome, processor news, an expiry, a scheduled read), and returns the change to commit
 * (the payment's new fields, the refund and dispute rows, the events), nothing, or a refusal with its reason.
 * services/payments/store.ts `mutate` loads, asks, and commits the change in one compare-and-set; nothing else
 * decides a payment's status, balance or events (docs/architecture.md says how that is checked).
 */

export type Command =
  | CreateAnswered
  | CreateFailed
  | ProcessorNews
  | Expire
  | VoidReversal
  | MarkLooked
  | ClaimCancel
  | ReleaseCancel
  | CancelAnswered
  | ReserveRefund
  | RefundAnswered
  | RefundFailed
  | RefundNews
  | RefundLooked
  | DisputeNews
  | ClaimTerminalCheck
  | ClaimDisputeCheck
  | DeferDisputeCheck
  | RescheduleDisputeCheck;

/** What each command's decision tells its caller besides the change. */
export interface Outcomes {
  create_answered: null;
  create_failed: null;
  processor_news: 'applied' | 'ignored';
  expire: boolean;
  void_reversal: 'reversed' | 'not_failed' | 'ignored';
  mark_looked: null;
  claim_cancel: ClaimOutcome;
  release_cancel: null;
  cancel_answered: 'canceled' | 'requested' | 'not_cancelable';
  reserve_refund: RefundRecord;
  refund_answered: RefundRecord;
  refund_failed: RefundRecord;
  refund_news: 'applied' | 'ignored';
  refund_looked: null;
  dispute_news: DisputeRecord | null;
  claim_terminal_check: boolean;
  claim_dispute_check: number | null;
  defer_dispute_check: null;
  reschedule_dispute_check: null;
}

export type OutcomeOf<C extends Command> = Outcomes[C['type']];

/** The payment and what the command is about: the refund it names, the dispute the processor's id names (or none). */
export interface LedgerState {
  payment: PaymentRecord;
  refund?: RefundRecord;
  dispute?: DisputeRecord | null;
}

/** What a command needs loaded besides the payment (the store reads it in the same round trip). */
export function needs(command: Command): { refundId?: string; processorDisputeId?: string } {
  switch (command.type) {
    case 'refund_answered':
    case 'refund_failed':
    case 'refund_news':
    case 'refund_looked':
      return { refundId: command.refundId };
    case 'dispute_news':
      return { processorDisputeId: command.processorDisputeId };
    default:
      return {};
  }
}

export function decide<C extends Command>(state: LedgerState, command: C, now: number): Decision<OutcomeOf<C>> {
  return decideAny(state, command, now) as Decision<OutcomeOf<C>>;
}

function decideAny(state: LedgerState, c: Command, now: number): Decision<Outcomes[Command['type']]> {
  const p = state.payment;
  switch (c.type) {
    case 'create_answered':
      return createAnswered(p, c, now);
    case 'create_failed':
      return createFailed(p, c, now);
    case 'processor_news':
      return processorNews(p, c, now);
    case 'expire':
      return expire(p, c, now);
    case 'void_reversal':
      return voidReversal(p, c, now);
    case 'mark_looked':
      return markLooked(p, c);
    case 'claim_cancel':
      return claimCancel(p, c, now);
    case 'release_cancel':
      return releaseCancel(p, c);
    case 'cancel_answered':
      return cancelAnswered(p, c, now);
    case 'reserve_refund':
      return reserveRefund(p, c, now);
    case 'refund_answered':
      return refundAnswered(p, refundOf(state, c.refundId), c, now);
    case 'refund_failed':
      return refundFailed(p, refundOf(state, c.refundId), c, now);
    case 'refund_news':
      return refundNews(p, refundOf(state, c.refundId), c, now);
    case 'refund_looked':
      return refundLooked(refundOf(state, c.refundId), c);
    case 'dispute_news':
      return disputeNews(p, state.dispute ?? null, c, now);
    case 'claim_terminal_check':
      return claimTerminalCheck(p, now);
    case 'claim_dispute_check':
      return claimDisputeCheck(p, c, now);
    case 'defer_dispute_check':
      return deferDisputeCheck(p, now);
    case 'reschedule_dispute_check':
      return rescheduleDisputeCheck(p, c, now);
  }
}

function refundOf(state: LedgerState, id: string): RefundRecord {
  if (state.refund?.id !== id || state.refund.paymentId !== state.payment.id)
    throw new Error(`The refund ${id} of payment ${state.payment.id} was not loaded`);
  return state.refund;
}

export type { Change, Decision, LedgerEvent, ProcessorAccount, Refusal } from './change.ts';
export { refundableBalance } from './change.ts';
export { cancelAwaitingProcessor } from './cancels.ts';
export { newDisputeOf } from './disputes.ts';
export {
  EXPIRY_GRACE_MS,
  type Expire,
  type NewPayment,
  openPayment,
  type VoidEvidence,
  voidedAfterCollection,
  voidRefundFailed,
} from './payments.ts';
export type { ReportedSettlement } from './refunds.ts';
export type { DisputeRecord, PaymentPatch, PaymentRecord, RefundRecord } from './records.ts';
