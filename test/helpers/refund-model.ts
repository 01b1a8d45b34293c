import {
  type Command,
  decide,
  openPayment,
  type PaymentRecord,
  type RefundRecord,
} from '../../src/domain/ledger/index.ts';
import { nextUpdatedAt, type PaymentStatus, type RefundedPaymentStatus } from '../../src/domain/payment-state.ts';
import { isReserving, type RefundStatus } from '../../src/domain/refund-state.ts';
import type { RefundFailureReason } from '../../src/domain/reversals.ts';
import { NO_SETTLEMENT } from '../../src/domain/settlement.ts';

/**
 * A payment's refunds as a plain list: the model the domain tests drive the state machines with, and that the
 * ledger's running totals (src/domain/ledger) must always agree with. The service keeps totals, never this list.
 */
export interface RefundLedgerEntry {
  status: RefundStatus;
  amount: number;
}

const sum = (refunds: readonly RefundLedgerEntry[], include: (status: RefundStatus) => boolean) =>
  refunds.reduce((total, r) => (include(r.status) ? total + r.amount : total), 0);

export const approvedRefundTotal = (refunds: readonly RefundLedgerEntry[]) => sum(refunds, (s) => s === 'approved');
export const reservedRefundTotal = (refunds: readonly RefundLedgerEntry[]) => sum(refunds, isReserving);

/** What a new refund may still take: the amount less approved and reserved refunds. */
export const refundableBalance = (amount: number, refunds: readonly RefundLedgerEntry[]) =>
  amount - approvedRefundTotal(refunds) - reservedRefundTotal(refunds);

export function reserveRefund(amount: number, refunds: readonly RefundLedgerEntry[], requested: number) {
  if (!Number.isSafeInteger(requested) || requested <= 0)
    throw new RangeError('Refund amount must be a positive integer');
  const balance = refundableBalance(amount, refunds);
  if (requested > balance) return { ok: false as const, reason: 'refund_exceeds_balance' as const, balance };
  return { ok: true as const, balanceAfter: balance - requested };
}

export function paymentStatusAfterRefunds(
  amount: number,
  refunds: readonly RefundLedgerEntry[],
): RefundedPaymentStatus | null {
  const approved = approvedRefundTotal(refunds);
  if (approved > amount) throw new RangeError('Approved refunds exceed the payment amount');
  if (approved === 0) return null;
  return approved === amount ? 'refunded' : 'partially_refunded';
}

/** A new payment of `amountMinor` as the ledger opens it (created, nothing asked of a processor yet). */
export function openedPayment(amountMinor: number): PaymentRecord {
  return openPayment(
    {
      id: 'pay_model',
      ownerId: 'usr_model',
      environment: 'test',
      paymentMethodId: 'pm_model',
      apiKeyId: null,
      referenceScope: 'scope',
      externalReference: 'model',
      amountMinor,
      currency: 'USD',
      description: null,
      metadata: null,
      keptConfiguration: null,
      webhookUrl: null,
      attemptKey: null,
      attemptFingerprint: null,
    },
    0,
  );
}

/** A payment record whose totals are the list's (the rest as any stored payment of `amount`). */
export function recordOf(
  payment: { status: PaymentStatus; amount: number; updatedAt: number },
  refunds: readonly RefundLedgerEntry[],
): PaymentRecord {
  return {
    ...openedPayment(payment.amount),
    status: payment.status,
    amountRefunded: approvedRefundTotal(refunds),
    amountReserved: reservedRefundTotal(refunds),
    refundCount: refunds.length,
    processorReference: 'model',
    processorAttempts: 1,
    updatedAt: payment.updatedAt,
  };
}

/**
 * A processor's news of one refund of the list, through the ledger (`refund_news`), told as the domain tests read it:
 * untrusted news (which the service never hands the ledger: it reads the processor instead) and anything but a
 * failure of an approved refund reverse nothing; a reversal says the refund's and the payment's new state and what a
 * new refund may take.
 */
export function reverseRefund(input: {
  payment: { status: PaymentStatus; amount: number; updatedAt: number };
  refunds: readonly (RefundLedgerEntry & { id: string })[];
  refund: { id: string; status: RefundStatus; updatedAt: number };
  news: { status: RefundStatus; trusted: boolean; failureReason?: RefundFailureReason | null };
  now: number;
}) {
  const { payment, refunds, refund, news, now } = input;
  if (!news.trusted) return { ok: false as const, reason: 'untrusted' as const };
  const failure = news.status === 'failed' || news.status === 'declined';
  if (!failure || refund.status !== 'approved') return { ok: false as const, reason: 'not_a_reversal' as const };
  const listed = refunds.find((r) => r.id === refund.id);
  if (!listed) throw new RangeError('The reversed refund is not in the ledger');
  const record: RefundRecord = {
    id: refund.id,
    paymentId: 'pay_model',
    ownerId: 'usr_model',
    amountMinor: listed.amount,
    currency: 'USD',
    status: refund.status,
    reason: null,
    failureReason: null,
    processorReference: null,
    processorIdempotencyKey: refund.id,
    processorAttempts: 1,
    processorStatus: null,
    reconciledAt: null,
    attemptKey: null,
    attemptFingerprint: null,
    ...NO_SETTLEMENT,
    createdAt: 0,
    updatedAt: refund.updatedAt,
  };
  const command: Command = {
    type: 'refund_news',
    refundId: refund.id,
    status: news.status,
    ...(news.failureReason !== undefined ? { failureReason: news.failureReason } : {}),
  };
  const decision = decide(
    { payment: { ...recordOf(payment, refunds), id: 'pay_model' }, refund: record },
    command,
    now,
  );
  if (decision.kind !== 'change' || !decision.change.refund || 'insert' in decision.change.refund)
    return { ok: false as const, reason: 'not_a_reversal' as const };
  const after = { ...recordOf(payment, refunds), ...decision.change.payment };
  const reversed = decision.change.refund.update;
  return {
    ok: true as const,
    refund: { status: 'failed' as const, failureReason: reversed.failureReason!, updatedAt: reversed.updatedAt },
    payment: { status: after.status, updatedAt: after.updatedAt ?? nextUpdatedAt(payment.updatedAt, now) },
    refundableBalance: after.amountMinor - after.amountRefunded - after.amountReserved,
  };
}
