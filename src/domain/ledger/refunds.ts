import { cancellationInProgress, voidAwaited } from '../cancellation.ts';
import { applyTransition, canRefund, nextUpdatedAt, type RefundedPaymentStatus } from '../payment-state.ts';
import { applyRefundTransition, isReserving, type RefundStatus } from '../refund-state.ts';
import { canReversePayment, REFUND_REVERSAL_EVENT_TYPE, type RefundFailureReason } from '../reversals.ts';
import {
  NO_SETTLEMENT,
  type ProcessorSettlementNullReason,
  type SettlementFacts,
  settlementChange,
} from '../settlement.ts';
import { changed, type Decision, paymentChange, refundableBalance, refused, unchanged } from './change.ts';
import type { PaymentPatch, PaymentRecord, RefundRecord } from './records.ts';

/**
 * Refunds against the payment's running totals: a refund reserves its amount when it is recorded (before the processor
 * is asked) until it is approved (then it is refunded) or declined or failed (then it is released), so whatever the
 * interleaving of refund requests, refunded plus reserved never exceeds the amount. Every decision reads the payment
 * row and the one refund it is about, never the payment's refund history.
 */

/** What the processor said it kept of a refund, when its answer said. */
export interface ReportedSettlement {
  settlement?: SettlementFacts | null;
  settlementNullReason?: ProcessorSettlementNullReason;
}

/** A new refund of `amountMinor`: recorded `created` with its amount reserved, or refused. */
export interface ReserveRefund {
  type: 'reserve_refund';
  refund: Pick<RefundRecord, 'id' | 'amountMinor' | 'reason' | 'attemptKey' | 'attemptFingerprint'>;
}

/**
 * The processor's answer about a refund, or the service's read of one left in flight: `status` is where the answer
 * moves it (null: nowhere, e.g. unavailable); the other fields are recorded whatever it says.
 */
export interface RefundAnswered {
  type: 'refund_answered';
  refundId: string;
  status: RefundStatus | null;
  fields: Partial<Pick<RefundRecord, 'processorReference' | 'processorStatus' | 'processorAttempts' | 'reconciledAt'>>;
  failureReason?: RefundFailureReason | null;
  reported?: ReportedSettlement;
}

/** The processor's call for a refund failed with a connector error (connectors/types.ts `ConnectorErrorKind`). */
export interface RefundFailed {
  type: 'refund_failed';
  refundId: string;
  error: string;
  processorAttempts: number;
}

/**
 * Trusted news of a refund (a verified notification, or the processor's answer to the service's read): an approved
 * refund reported failed is reversed; one still approved may report its settlement; any other moves only where the
 * state machine allows, and news it does not allow changes nothing.
 */
export interface RefundNews {
  type: 'refund_news';
  refundId: string;
  status: RefundStatus;
  failureReason?: RefundFailureReason | null;
  reported?: ReportedSettlement;
  lookedAt?: number;
}

export function reserveRefund(p: PaymentRecord, c: ReserveRefund, now: number): Decision<RefundRecord> {
  if (cancellationInProgress(p, now) || voidAwaited(p, now)) return refused('cancellation_in_progress');
  if (p.chargedBackAt !== null) return refused('charged_back');
  if (p.openDisputeId !== null) return refused('payment_disputed');
  if (!canRefund(p.status)) return refused('not_refundable');
  const { amountMinor } = c.refund;
  if (!Number.isSafeInteger(amountMinor) || amountMinor <= 0)
    throw new RangeError('Refund amount must be a positive integer');
  const balance = refundableBalance(p);
  if (amountMinor > balance) return refused('refund_exceeds_balance', balance);
  const refund: RefundRecord = {
    ...c.refund,
    paymentId: p.id,
    ownerId: p.ownerId,
    currency: p.currency,
    status: 'created',
    failureReason: null,
    processorReference: null,
    processorIdempotencyKey: c.refund.id,
    processorAttempts: 0,
    processorStatus: null,
    reconciledAt: null,
    ...NO_SETTLEMENT,
    createdAt: now,
    updatedAt: now,
  };
  // The payment's version moves, and its totals: nothing a client sees of the payment changes.
  return changed(
    {
      payment: { amountReserved: p.amountReserved + amountMinor, refundCount: p.refundCount + 1 },
      refund: { insert: refund },
      events: [],
    },
    refund,
  );
}

export function refundAnswered(
  p: PaymentRecord,
  refund: RefundRecord,
  c: RefundAnswered,
  now: number,
): Decision<RefundRecord> {
  const move = c.status ? applyRefundTransition(refund, c.status, now) : null;
  const moved: RefundRecord = {
    ...refund,
    ...c.fields,
    // A reason belongs to the failure it explains: only with the move into `failed` or `declined`.
    ...(move?.ok
      ? {
          status: move.status,
          updatedAt: move.updatedAt,
          failureReason:
            (move.status === 'failed' || move.status === 'declined') && c.failureReason ? c.failureReason : null,
        }
      : {}),
  };
  // Only money that moved has a settlement: an approved refund's.
  const next: RefundRecord =
    moved.status === 'approved' ? { ...moved, ...settlementChange(moved, c.reported ?? {}) } : moved;
  const patch = move?.ok ? settled(p, refund, next.status, now) : {};
  return changed({ ...paymentChange(p, patch), refund: { update: next } }, next);
}

/** The payment's totals (and status, for an approval) once `refund` moved from its reserving status to `to`. */
function settled(p: PaymentRecord, refund: RefundRecord, to: RefundStatus, now: number): PaymentPatch {
  if (!isReserving(refund.status) || isReserving(to)) return {};
  const amountReserved = p.amountReserved - refund.amountMinor;
  if (to !== 'approved') return { amountReserved };
  const amountRefunded = p.amountRefunded + refund.amountMinor;
  const outcome = statusAfterRefunds(p.amountMinor, amountRefunded);
  const move = outcome ? applyTransition(p, outcome, now, { hasRefunds: true, refundOutcome: outcome }) : null;
  return {
    amountReserved,
    amountRefunded,
    ...(move?.ok ? { status: move.status, updatedAt: move.updatedAt } : {}),
  };
}

/**
 * The payment status refunded money calls for: `refunded` when it is the whole amount, `partially_refunded` when
 * some, null when none. More than the amount means the reservation rule was bypassed: it throws rather than hide it.
 */
export function statusAfterRefunds(amount: number, refunded: number): RefundedPaymentStatus | null {
  if (refunded > amount) throw new RangeError('Approved refunds exceed the payment amount');
  if (refunded === 0) return null;
  return refunded === amount ? 'refunded' : 'partially_refunded';
}

/** The outcome: whether the news changed the refund (`applied`) or not. */
export function refundNews(
  p: PaymentRecord,
  refund: RefundRecord,
  c: RefundNews,
  now: number,
): Decision<'applied' | 'ignored'> {
  const looked = c.lookedAt !== undefined ? { reconciledAt: c.lookedAt } : {};
  if (refund.status === 'approved') {
    if (c.status === 'failed' || c.status === 'declined') return reverseRefund(p, refund, c, now);
    const settlement = c.status === 'approved' ? settlementChange(refund, c.reported ?? {}) : null;
    if (!settlement && c.lookedAt === undefined) return unchanged('ignored');
    return changed(
      { payment: {}, refund: { update: { ...refund, ...settlement, ...looked } }, events: [] },
      settlement ? 'applied' : 'ignored',
    );
  }
  const move = applyRefundTransition(refund, c.status, now);
  if (!move.ok) {
    if (c.lookedAt === undefined) return unchanged('ignored');
    return changed({ payment: {}, refund: { update: { ...refund, ...looked } }, events: [] }, 'ignored');
  }
  const decided = refundAnswered(
    p,
    refund,
    {
      type: 'refund_answered',
      refundId: refund.id,
      status: c.status,
      fields: looked,
      ...(c.failureReason !== undefined ? { failureReason: c.failureReason } : {}),
      ...(c.reported ? { reported: c.reported } : {}),
    },
    now,
  );
  return decided.kind === 'change' ? changed(decided.change, 'applied') : unchanged('ignored');
}

/**
 * An approved refund the processor reports failed (or declined: Stripe's `failure_reason: declined` comes on a
 * `failed` refund) becomes `failed`, its amount leaves the refunded total, and the payment's status is recomputed from
 * what stays refunded: `refunded` becomes `partially_refunded`, or `approved` when nothing is. Its settlement goes
 * (nothing moved in the end), and `refund.failed` is the change's one event (docs/states.md, "Refund reversals").
 */
function reverseRefund(
  p: PaymentRecord,
  refund: RefundRecord,
  c: RefundNews,
  now: number,
): Decision<'applied' | 'ignored'> {
  const amountRefunded = p.amountRefunded - refund.amountMinor;
  if (amountRefunded < 0) throw new RangeError('A reversed refund was never counted as refunded');
  const status = statusAfterRefunds(p.amountMinor, amountRefunded) ?? 'approved';
  // An approved refund exists only on a (partially) refunded payment; anything else is a broken ledger.
  if (!canReversePayment(p.status, status))
    throw new RangeError(`A payment in ${p.status} cannot hold an approved refund`);
  const reversed: RefundRecord = {
    ...refund,
    status: 'failed',
    failureReason: c.failureReason ?? 'unknown',
    updatedAt: nextUpdatedAt(refund.updatedAt, now),
    ...NO_SETTLEMENT,
    ...(c.lookedAt !== undefined ? { reconciledAt: c.lookedAt } : {}),
  };
  return changed(
    {
      ...paymentChange(p, { status, updatedAt: nextUpdatedAt(p.updatedAt, now), amountRefunded }, [
        { type: REFUND_REVERSAL_EVENT_TYPE, about: 'refund' },
      ]),
      refund: { update: reversed },
    },
    'applied',
  );
}

/** The service looked at the refund (or could not): it is not due again before `at`. */
export interface RefundLooked {
  type: 'refund_looked';
  refundId: string;
  at: number;
}

export function refundLooked(refund: RefundRecord, c: RefundLooked): Decision<null> {
  return changed({ payment: {}, refund: { update: { ...refund, reconciledAt: c.at } }, events: [] }, null);
}

/**
 * Where a failed call leaves the refund. Timeout: the processor may have refunded, so it is `pending` and its
 * reservation holds while a retry or reconciliation asks. Unavailable: nothing happened; it stays `created`, still
 * reserved, for the retry. A decline is `declined`; anything else `failed`.
 */
export function refundFailed(
  p: PaymentRecord,
  refund: RefundRecord,
  c: RefundFailed,
  now: number,
): Decision<RefundRecord> {
  const status =
    c.error === 'timeout'
      ? 'pending'
      : c.error === 'unavailable'
        ? null
        : c.error === 'declined'
          ? 'declined'
          : 'failed';
  return refundAnswered(
    p,
    refund,
    {
      type: 'refund_answered',
      refundId: c.refundId,
      status,
      fields: { processorStatus: c.error, processorAttempts: c.processorAttempts },
    },
    now,
  );
}
