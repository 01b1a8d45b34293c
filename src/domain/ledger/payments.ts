import { applyTransition, nextUpdatedAt, type PaymentStatus } from '../payment-state.ts';
import { reverseVoid, VOID_REVERSAL_EVENT_TYPE } from '../reversals.ts';
import type { RefundStatus } from '../refund-state.ts';
import { NO_SETTLEMENT } from '../settlement.ts';
import {
  accountPatch,
  changed,
  type Decision,
  firstProcessorPaymentId,
  paymentChange,
  type ProcessorAccount,
  unchanged,
} from './change.ts';
import type { PaymentRecord } from './records.ts';

/** The processor's answer to the create, or the error it met: `applyOutcome` of create-payment. */
export interface CreateAnswered {
  type: 'create_answered';
  account: ProcessorAccount;
  processorReference: string | null;
  processorStatus: string;
  /** The QR to show (`display_qr`), and how long it stays payable. */
  qrData: string | null;
  qrTtlMs: number | null;
}

export interface CreateFailed {
  type: 'create_failed';
  /** The connector error's kind (connectors/types.ts `ConnectorErrorKind`). */
  error: string;
}

/**
 * News of the payment from its processor, trusted (a verified notification, or the service's own read: a
 * reconciliation, a terminal or settlement re-read, an expiry's withdrawal). `processorStatus` is written with a
 * change; `lookedAt` (the time the service read it), a first `processorReference` and a first `processorPaymentId` are
 * written whatever it says.
 */
export interface ProcessorNews {
  type: 'processor_news';
  account: ProcessorAccount;
  processorStatus?: string;
  lookedAt?: number;
  processorReference?: string | null;
}

/** When the processor cannot be reached to withdraw a QR, it is expired anyway this long after its TTL. */
export const EXPIRY_GRACE_MS = 60 * 60 * 1000;

/**
 * A pending QR past its time, and what the processor said when asked to withdraw it: withdrawn (or nothing could be
 * asked: its method is gone, and the processor's own expiry applies), accepted to be withdrawn later (Adyen's
 * `/cancels`: its news completes it), its own status instead (paid meanwhile), or no answer.
 */
export interface Expire {
  type: 'expire';
  withdrawal:
    | { kind: 'withdrawn' }
    | { kind: 'requested' }
    | { kind: 'settled'; status: PaymentAccountStatus }
    | { kind: 'no_answer' };
}
type PaymentAccountStatus = ProcessorAccount['status'];

/** The refund that carried out a void failed later: the payment is collected again (docs/states.md). */
export interface VoidReversal {
  type: 'void_reversal';
  evidence: VoidEvidence;
  lookedAt?: number;
}

/**
 * What says the void's refund failed: verified news naming that refund, or the service's own read of the payment's
 * void refund (`named`: the refund the news that prompted the read named, if any).
 */
export type VoidEvidence =
  | { kind: 'named'; refundReference: string }
  | { kind: 'read'; refundReference: string | null; status: RefundStatus; named?: string };

/** The service read the payment (or tried to) and found nothing to change; `onlyIf`: only while in that status. */
export interface MarkLooked {
  type: 'mark_looked';
  at: number;
  onlyIf?: PaymentStatus;
}

/** What a new payment is made of: the request's facts, validated by the use case. */
export type NewPayment = Pick<
  PaymentRecord,
  | 'id'
  | 'ownerId'
  | 'environment'
  | 'paymentMethodId'
  | 'apiKeyId'
  | 'referenceScope'
  | 'externalReference'
  | 'amountMinor'
  | 'currency'
  | 'description'
  | 'metadata'
  | 'keptConfiguration'
  | 'webhookUrl'
  | 'attemptKey'
  | 'attemptFingerprint'
>;

/**
 * A payment as it is recorded before its processor is asked: `created`, its processor's idempotency key its own id,
 * nothing refunded, reserved, disputed, claimed or scheduled. Its counters are `createdCounts` (counts.ts).
 */
export function openPayment(input: NewPayment, now: number): PaymentRecord {
  return {
    ...input,
    status: 'created',
    version: 1,
    amountRefunded: 0,
    amountReserved: 0,
    refundCount: 0,
    amountChargedBack: 0,
    openDisputeId: null,
    processorReference: null,
    processorPaymentId: null,
    processorIdempotencyKey: input.id,
    processorAttempts: 0,
    processorStatus: null,
    qrData: null,
    requiredAction: null,
    expiresAt: null,
    reconciledAt: null,
    chargedBackAt: null,
    ...NO_SETTLEMENT,
    voidedAt: null,
    voidRefundReference: null,
    cancelClaimedAt: null,
    cancelAttemptKey: null,
    cancelRequestedAt: null,
    atTerminal: false,
    terminalSeenAt: null,
    terminalChecks: 0,
    terminalCheckAt: null,
    disputeCheckAt: null,
    createdAt: now,
    updatedAt: now,
  };
}

export function createAnswered(p: PaymentRecord, c: CreateAnswered, now: number): Decision<null> {
  const account = accountPatch(p, c.account, now);
  // A reference or QR appearing without a status change (a timed-out QR payment, resumed) is still an update clients
  // see, so `updated_at` moves too.
  const visible = p.processorReference !== c.processorReference || p.qrData !== c.qrData;
  return changed(
    paymentChange(p, {
      processorReference: c.processorReference,
      ...firstProcessorPaymentId(p, c.account),
      processorStatus: c.processorStatus,
      processorAttempts: p.processorAttempts + 1,
      qrData: c.qrData,
      expiresAt: c.qrData !== null && c.qrTtlMs !== null ? now + c.qrTtlMs : null,
      ...(account ?? (visible ? { updatedAt: nextUpdatedAt(p.updatedAt, now) } : {})),
    }),
    null,
  );
}

/**
 * A timeout leaves the outcome unknown: the payment waits as `pending` for a retry or reconciliation. Unavailable means
 * the processor took nothing: it stays `created`. A rejected configuration fails it; a decline declines it.
 */
export function createFailed(p: PaymentRecord, c: CreateFailed, now: number): Decision<null> {
  const target: PaymentStatus | null =
    c.error === 'timeout'
      ? 'pending'
      : c.error === 'configuration_invalid'
        ? 'failed'
        : c.error === 'declined'
          ? 'declined'
          : null;
  const move = target ? applyTransition(p, target, now, { hasRefunds: false }) : null;
  return changed(
    paymentChange(p, {
      processorAttempts: p.processorAttempts + 1,
      processorStatus: c.error,
      ...(move?.ok ? { status: move.status, updatedAt: move.updatedAt } : {}),
    }),
    null,
  );
}

export function processorNews(p: PaymentRecord, c: ProcessorNews, now: number): Decision<'applied' | 'ignored'> {
  const account = accountPatch(p, c.account, now);
  const bookkeeping = {
    ...(c.lookedAt !== undefined ? { reconciledAt: c.lookedAt } : {}),
    ...(p.processorReference === null && c.processorReference ? { processorReference: c.processorReference } : {}),
    ...firstProcessorPaymentId(p, c.account),
  };
  if (!account && Object.keys(bookkeeping).length === 0) return unchanged('ignored');
  return changed(
    paymentChange(p, {
      ...bookkeeping,
      ...account,
      ...(account && c.processorStatus !== undefined ? { processorStatus: c.processorStatus } : {}),
    }),
    account ? 'applied' : 'ignored',
  );
}

/**
 * `expired` once withdrawn, or past `EXPIRY_GRACE_MS` without an answer (a processor that cannot be reached for an
 * hour withdrew nothing the buyer could still pay, as far as anyone can know); the processor's status when it says the
 * QR was settled otherwise. A withdrawal the processor accepted to carry out later leaves the payment `pending` with
 * `cancel_requested_at`, which takes it out of the due expiries: only the processor's news settles it, as `expired`
 * (`expiryWithdrawalAwaited`) or as paid first, because only the processor knows whether the buyer paid meanwhile.
 * True when the payment expired.
 */
export function expire(p: PaymentRecord, c: Expire, now: number): Decision<boolean> {
  if (p.expiresAt === null || p.expiresAt > now) return unchanged(false);
  const { withdrawal } = c;
  if (withdrawal.kind === 'requested') {
    // Paid while the processor was being asked (its news came first): no withdrawal is awaited of a collected payment.
    if (p.status !== 'pending' || p.cancelRequestedAt !== null) return unchanged(false);
    return changed(paymentChange(p, { cancelRequestedAt: now, updatedAt: nextUpdatedAt(p.updatedAt, now) }), false);
  }
  if (withdrawal.kind === 'no_answer' && now <= p.expiresAt + EXPIRY_GRACE_MS) return unchanged(false);
  const target = withdrawal.kind === 'settled' ? withdrawal.status : 'expired';
  const account = accountPatch(p, { status: target }, now);
  return account ? changed(paymentChange(p, account), account.status === 'expired') : unchanged(false);
}

/** A payment the service voided after collection: news of it is about its void's refund first. */
export const voidedAfterCollection = (p: Pick<PaymentRecord, 'status' | 'voidedAt'>) =>
  p.status === 'canceled' && p.voidedAt !== null;

/**
 * Whether the evidence shows this void's refund failed. It must be about the refund kept with the void
 * (`void_refund_reference`): a late retry about the refund of an earlier void, reversed already and followed by a new
 * cancel, says nothing of the current one; a read must also be of the refund the news named. A refund the processor
 * `canceled` has failed too (mapped to `failed` by its connector).
 */
export function voidRefundFailed(p: Pick<PaymentRecord, 'voidRefundReference'>, evidence: VoidEvidence): boolean {
  const kept = p.voidRefundReference;
  if (evidence.kind === 'named') return kept !== null && evidence.refundReference === kept;
  for (const required of [kept, evidence.named])
    if (required !== null && required !== undefined && evidence.refundReference !== required) return false;
  return evidence.status === 'failed' || evidence.status === 'declined';
}

/**
 * `reverseVoid` with the service's own record of the void (`voided_at`, set only by `approved` → `canceled`): the
 * payment is `approved` again, its void undated, and `payment.void_failed` is its one event.
 * `not_failed`: the evidence does not show the void failed; `reversed`: the payment is collected again
 * (`reverseVoid`); `ignored`: it failed, but the payment is no void of a collection to reverse (any more).
 */
export function voidReversal(
  p: PaymentRecord,
  c: VoidReversal,
  now: number,
): Decision<'reversed' | 'not_failed' | 'ignored'> {
  if (!voidRefundFailed(p, c.evidence)) return unchanged('not_failed');
  const reversal = reverseVoid({ payment: p, voided: p.voidedAt !== null, news: { trusted: true }, now });
  if (!reversal.ok) return unchanged('ignored');
  return changed(
    paymentChange(
      p,
      {
        ...reversal.payment,
        voidedAt: null,
        voidRefundReference: null,
        ...(c.lookedAt !== undefined ? { reconciledAt: c.lookedAt } : {}),
      },
      [{ type: VOID_REVERSAL_EVENT_TYPE }],
    ),
    'reversed',
  );
}

export function markLooked(p: PaymentRecord, c: MarkLooked): Decision<null> {
  if (c.onlyIf !== undefined && p.status !== c.onlyIf) return unchanged(null);
  return changed({ payment: { reconciledAt: c.at }, events: [] }, null);
}
