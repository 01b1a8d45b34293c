import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { VOID_AWAIT_MS, voidAwaited } from '../../src/domain/cancellation.ts';
import { DISPUTE_REASONS, DISPUTE_STATUSES, isDisputeClosed } from '../../src/domain/disputes.ts';
import {
  type Command,
  decide,
  type DisputeRecord,
  EXPIRY_GRACE_MS,
  type LedgerState,
  type PaymentRecord,
  type RefundRecord,
  refundableBalance,
  voidRefundFailed,
} from '../../src/domain/ledger/index.ts';
import { eventTypeFor, PAYMENT_STATUSES, type PaymentStatus } from '../../src/domain/payment-state.ts';
import { REFUND_STATUSES } from '../../src/domain/refund-state.ts';
import { canReversePayment } from '../../src/domain/reversals.ts';
import { openedPayment } from '../helpers/refund-model.ts';

/**
 * The ledger over random histories: a payment driven by every command the service sends it (processor news of every
 * status, refunds reserved, answered and reported on, void reversals, disputes opened, moved and closed, cancels,
 * expiries), each decided from the state the previous decisions left. After every step:
 * - the running totals are the refunds' sums, and refunded plus reserved plus charged back never exceeds the amount;
 * - a collected payment's status is the one its refunded total calls for;
 * - no path leaves `refunded`, `canceled`, `declined`, `failed` or `expired` but the documented reversals;
 * - every status change sends exactly one event about the payment (disputes' own events besides);
 * - at most one dispute is open, and it is the one the payment names; a closed dispute never changes again, but for
 *   a won one's reinstatement.
 */

const AMOUNT = 10_000;
/** A stored payment of `AMOUNT` in `status`: the ledger's new payment, once its processor answered. */
const payment = (status: PaymentStatus): PaymentRecord => ({
  ...openedPayment(AMOUNT),
  status,
  processorReference: 'ch_1',
  processorAttempts: 1,
  expiresAt: 50,
});

const ACCOUNT_STATUSES = [...PAYMENT_STATUSES.filter((s) => s !== 'created'), 'charged_back'] as const;
const refundIndex = fc.integer({ min: 0, max: 5 });
const disputeIndex = fc.integer({ min: 0, max: 2 });

const operation = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('news' as const), status: fc.constantFrom(...ACCOUNT_STATUSES) }),
  },
  {
    weight: 6,
    // Round shares of the amount too, so that refunds add up to all of it.
    arbitrary: fc.record({
      kind: fc.constant('reserve' as const),
      amount: fc.oneof(fc.constantFrom(AMOUNT / 4, AMOUNT / 2, AMOUNT), fc.integer({ min: 1, max: AMOUNT })),
    }),
  },
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('answer' as const),
      refund: refundIndex,
      status: fc.oneof(
        { weight: 3, arbitrary: fc.constant('approved' as const) },
        { weight: 3, arbitrary: fc.option(fc.constantFrom(...REFUND_STATUSES), { nil: null }) },
      ),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('refund_news' as const),
      refund: refundIndex,
      status: fc.oneof(fc.constantFrom('failed' as const, 'declined' as const), fc.constantFrom(...REFUND_STATUSES)),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('void_reversal' as const), trusted: fc.boolean() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('dispute' as const),
      dispute: disputeIndex,
      status: fc.constantFrom(...DISPUTE_STATUSES),
      amount: fc.integer({ min: 1, max: AMOUNT }),
      reinstated: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('claim' as const), key: fc.constantFrom('k1', 'k2') }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('cancel_answer' as const),
      key: fc.constantFrom('k1', 'k2'),
      status: fc.constantFrom(...ACCOUNT_STATUSES),
      requested: fc.boolean(),
      voidAsked: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('release' as const) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('expire' as const),
      withdrawal: fc.oneof(
        fc.constantFrom({ kind: 'withdrawn' as const }, { kind: 'requested' as const }, { kind: 'no_answer' as const }),
        fc.record({ kind: fc.constant('settled' as const), status: fc.constantFrom(...ACCOUNT_STATUSES) }),
      ),
    }),
  },
);
type Operation = typeof operation extends fc.Arbitrary<infer O> ? O : never;

/** Final statuses, and the only ways out of each: the reversals (docs/states.md). */
const FINAL: readonly PaymentStatus[] = ['refunded', 'canceled', 'declined', 'failed', 'expired'];

interface Model {
  payment: PaymentRecord;
  refunds: RefundRecord[];
  disputes: Map<string, DisputeRecord>;
  now: number;
}

function commandOf(model: Model, op: Operation): { command: Command; state: LedgerState } | null {
  const state: LedgerState = { payment: model.payment };
  switch (op.kind) {
    case 'news':
      return { command: { type: 'processor_news', account: { status: op.status } }, state };
    case 'reserve':
      return {
        command: {
          type: 'reserve_refund',
          refund: {
            id: `ref_${model.refunds.length}`,
            amountMinor: op.amount,
            reason: null,
            attemptKey: `a${model.refunds.length}`,
            attemptFingerprint: 'f',
          },
        },
        state,
      };
    case 'answer':
    case 'refund_news': {
      const refund = model.refunds[op.refund];
      if (!refund) return null;
      const command: Command =
        op.kind === 'answer'
          ? { type: 'refund_answered', refundId: refund.id, status: op.status, fields: {} }
          : { type: 'refund_news', refundId: refund.id, status: op.status };
      return { command, state: { ...state, refund } };
    }
    case 'void_reversal':
      // Trusted: the read of the void's own refund says it failed; otherwise a read that shows no failure.
      return {
        command: {
          type: 'void_reversal',
          evidence: {
            kind: 'read',
            refundReference: state.payment.voidRefundReference,
            status: op.trusted ? 'failed' : 'approved',
          },
        },
        state,
      };
    case 'dispute': {
      const processorDisputeId = `dp_${op.dispute}`;
      return {
        command: {
          type: 'dispute_news',
          newId: `dsp_${op.dispute}`,
          processorDisputeId,
          processorStatus: op.status,
          facts: {
            status: op.status,
            amount: { minor: op.amount, currency: 'USD' },
            reason: DISPUTE_REASONS[op.dispute]!,
            evidenceDueBy: null,
            fundsWithdrawnAt: op.status.startsWith('warning') ? null : 1,
            fundsReinstatedAt: op.reinstated ? 2 : null,
          },
        },
        state: { ...state, dispute: model.disputes.get(processorDisputeId) ?? null },
      };
    }
    case 'claim':
      return { command: { type: 'claim_cancel', attemptKey: op.key }, state };
    case 'cancel_answer':
      return {
        command: {
          type: 'cancel_answered',
          attemptKey: op.key,
          account: { status: op.status },
          processorStatus: op.status,
          requested: op.requested,
          voidAsked: op.voidAsked,
        },
        state,
      };
    case 'release':
      return { command: { type: 'release_cancel' }, state };
    case 'expire':
      return { command: { type: 'expire', withdrawal: op.withdrawal }, state };
  }
}

const sum = (refunds: RefundRecord[], statuses: readonly string[]) =>
  refunds.filter((r) => statuses.includes(r.status)).reduce((n, r) => n + r.amountMinor, 0);

describe('the ledger over random histories', () => {
  it('keeps the totals, the money bound, the final statuses, one event per status change and one open dispute', () => {
    const seen = { refunded: 0, reversed: 0, voidReversed: 0, chargedBack: 0, refusedDisputed: 0, secondDispute: 0 };
    fc.assert(
      fc.property(
        fc.constantFrom<PaymentStatus>('created', 'pending', 'approved', 'approved', 'approved'),
        fc.array(operation, { minLength: 1, maxLength: 60 }),
        (start, operations) => {
          const model: Model = { payment: payment(start), refunds: [], disputes: new Map(), now: 100 };
          for (const op of operations) {
            model.now += 1_000;
            const built = commandOf(model, op);
            if (!built) continue;
            const before = model.payment;
            const decision = decide(built.state, built.command, model.now);
            if (decision.kind === 'refused') {
              if (decision.refusal === 'payment_disputed') seen.refusedDisputed++;
              continue;
            }
            if (decision.kind === 'none') {
              if (op.kind === 'dispute' && !model.disputes.has(`dp_${op.dispute}`) && before.openDisputeId !== null)
                seen.secondDispute++;
              continue;
            }
            const { change } = decision;
            model.payment = { ...before, ...change.payment, version: before.version + 1 };
            if (change.refund) {
              const row = 'insert' in change.refund ? change.refund.insert : change.refund.update;
              const at = model.refunds.findIndex((r) => r.id === row.id);
              if (at === -1) model.refunds.push(row);
              else model.refunds[at] = row;
            }
            const previousDispute = change.dispute
              ? model.disputes.get(
                  ('insert' in change.dispute ? change.dispute.insert : change.dispute.update).processorDisputeId,
                )
              : undefined;
            if (change.dispute) {
              const row = 'insert' in change.dispute ? change.dispute.insert : change.dispute.update;
              model.disputes.set(row.processorDisputeId, row);
            }
            const after = model.payment;

            // No refund is reserved while a void the processor accepted is awaited (it would pay out twice).
            if (change.refund && 'insert' in change.refund) expect(voidAwaited(before, model.now)).toBe(false);

            // The running totals are the refunds' sums; the money bound holds.
            expect(after.amountRefunded).toBe(sum(model.refunds, ['approved']));
            expect(after.amountReserved).toBe(sum(model.refunds, ['created', 'pending', 'processing']));
            expect(after.refundCount).toBe(model.refunds.length);
            expect(after.amountRefunded + after.amountReserved + after.amountChargedBack).toBeLessThanOrEqual(AMOUNT);
            expect(refundableBalance(after)).toBeGreaterThanOrEqual(0);

            // A collected payment's status is the one its refunded total calls for.
            if (['approved', 'partially_refunded', 'refunded'].includes(after.status)) {
              const expected =
                after.amountRefunded === 0
                  ? 'approved'
                  : after.amountRefunded === AMOUNT
                    ? 'refunded'
                    : 'partially_refunded';
              expect(after.status).toBe(expected);
            }

            // Out of a final status only by a reversal on trusted news.
            if (FINAL.includes(before.status) && after.status !== before.status) {
              expect(canReversePayment(before.status, after.status), `${before.status} -> ${after.status}`).toBe(true);
              if (before.status === 'canceled') {
                expect(op).toMatchObject({ kind: 'void_reversal', trusted: true });
                seen.voidReversed++;
              } else {
                expect(op.kind).toBe('refund_news');
              }
            }

            // Exactly one event about the payment for every status change (none into the internal steps `created` and
            // `processing`, which have nothing for a merchant to act on).
            const paymentEvents = change.events.filter((e) => !e.type.startsWith('dispute.'));
            if (after.status !== before.status)
              expect(paymentEvents, `${before.status} -> ${after.status}`).toHaveLength(
                eventTypeFor(after.status) === null ? 0 : 1,
              );
            if (after.status === 'refunded' && before.status !== 'refunded') seen.refunded++;
            if (change.events.some((e) => e.type === 'refund.failed')) seen.reversed++;
            if (after.chargedBackAt !== null && before.chargedBackAt === null) {
              seen.chargedBack++;
              expect(change.events.map((e) => e.type)).toContain('payment.charged_back');
            }

            // One open dispute, named by the payment; closed ones frozen (a won one's reinstatement aside).
            const open = [...model.disputes.values()].filter((d) => !isDisputeClosed(d.status));
            expect(open.length).toBeLessThanOrEqual(1);
            expect(after.openDisputeId).toBe(open[0]?.id ?? null);
            if (previousDispute && isDisputeClosed(previousDispute.status)) {
              const now = model.disputes.get(previousDispute.processorDisputeId)!;
              expect(previousDispute.status).toBe('won');
              expect(now).toEqual({
                ...previousDispute,
                fundsReinstatedAt: now.fundsReinstatedAt,
                updatedAt: now.updatedAt,
              });
              expect(previousDispute.fundsReinstatedAt).toBeNull();
            }
          }
        },
      ),
      { numRuns: 3_000, seed: 20261127 },
    );
    for (const [corner, count] of Object.entries(seen)) expect(count, corner).toBeGreaterThan(0);
  });
});

const stateOf = (payment: PaymentRecord): LedgerState => ({ payment });
/** The ledger's decision on `p`, and `p` as its commit leaves it. */
const apply = (p: PaymentRecord, command: Command, now: number) => {
  const decision = decide(stateOf(p), command, now);
  if (decision.kind !== 'change') return { p, decision };
  return { p: { ...p, ...decision.change.payment, version: p.version + 1 }, decision };
};
/** Trusted news of the payment's status from its processor. */
const news = (status: PaymentStatus): Command => ({
  type: 'processor_news',
  account: { status },
  processorStatus: status,
});

describe('a void the processor carries out later (Adyen /reversals)', () => {
  const NOW = 1_000_000;
  const answer = (voidAsked: boolean, status: PaymentStatus): Command => ({
    type: 'cancel_answered',
    attemptKey: 'k1',
    account: { status },
    processorStatus: 'received',
    requested: true,
    voidAsked,
  });
  const reserve = (p: PaymentRecord, now: number) =>
    decide(
      stateOf(p),
      {
        type: 'reserve_refund',
        refund: { id: 're_1', amountMinor: 100, reason: null, attemptKey: 'r1', attemptFingerprint: 'f1' },
      },
      now,
    );

  it('is recorded as requested (202), holds off refunds for a day, and the news cancels the payment', () => {
    const claimed = apply(payment('approved'), { type: 'claim_cancel', attemptKey: 'k1' }, NOW).p;
    const { p: requested, decision } = apply(claimed, answer(true, 'approved'), NOW);
    expect(decision).toMatchObject({ kind: 'change', outcome: 'requested' });
    expect(requested.cancelRequestedAt).toBe(NOW);
    expect(requested.cancelClaimedAt).toBeNull();
    // The claim is gone, the void is awaited: a refund is refused, and a second cancel answers the same without asking.
    expect(reserve(requested, NOW + 60_000)).toMatchObject({ kind: 'refused', refusal: 'cancellation_in_progress' });
    expect(decide(stateOf(requested), { type: 'claim_cancel', attemptKey: 'k2' }, NOW + 60_000)).toMatchObject({
      outcome: 'done',
    });
    // News that changes no status keeps the request; the news of the void cancels the payment and keeps its date.
    expect(apply(requested, news('approved'), NOW + 1).p.cancelRequestedAt).toBe(NOW);
    const voided = apply(requested, news('canceled'), NOW + 2).p;
    expect(voided).toMatchObject({ status: 'canceled', cancelRequestedAt: NOW });
    // Never reported within a day: refunds and cancels are possible again.
    expect(reserve(requested, NOW + VOID_AWAIT_MS).kind).toBe('change');
    expect(decide(stateOf(requested), { type: 'claim_cancel', attemptKey: 'k2' }, NOW + VOID_AWAIT_MS)).toMatchObject({
      outcome: 'claimed',
    });
  });

  it('a terminal asked to stop a payment the customer paid meanwhile is not a void: not_cancelable, nothing awaited', () => {
    const claimed = apply(payment('pending'), { type: 'claim_cancel', attemptKey: 'k1' }, NOW).p;
    const paid = { ...claimed, status: 'approved' as const };
    const { p, decision } = apply(paid, answer(false, 'approved'), NOW);
    expect(decision).toMatchObject({ kind: 'change', outcome: 'not_cancelable' });
    expect(p.cancelRequestedAt).toBeNull();
    expect(reserve(p, NOW).kind).toBe('change');
  });
});

describe('a QR withdrawal the processor carries out later (Adyen /cancels at the expiry)', () => {
  const EXPIRES = 50;
  const pendingQr = (): PaymentRecord => ({ ...payment('pending'), qrData: 'qr', expiresAt: EXPIRES });
  const requested = (now: number) => apply(pendingQr(), { type: 'expire', withdrawal: { kind: 'requested' } }, now).p;

  it('waits pending with cancel_requested_at, past the grace too, where a processor not reached is expired', () => {
    const waiting = requested(EXPIRES + 1);
    expect(waiting).toMatchObject({ status: 'pending', cancelRequestedAt: EXPIRES + 1 });
    const late = EXPIRES + EXPIRY_GRACE_MS + 1;
    expect(decide({ payment: waiting }, { type: 'expire', withdrawal: { kind: 'requested' } }, late).kind).toBe('none');
    expect(apply(pendingQr(), { type: 'expire', withdrawal: { kind: 'no_answer' } }, late).p.status).toBe('expired');
  });

  it('is not recorded on a payment its news approved while the processor was being asked', () => {
    const paid = { ...pendingQr(), status: 'approved' as const };
    expect(decide({ payment: paid }, { type: 'expire', withdrawal: { kind: 'requested' } }, EXPIRES + 1).kind).toBe(
      'none',
    );
  });

  it('its completion is the expiry (payment.expired); a payment first is applied; a client’s own cancel stays a cancel', () => {
    const waiting = requested(EXPIRES + 1);
    const completed = decide({ payment: waiting }, news('canceled'), EXPIRES + 10 * EXPIRY_GRACE_MS);
    expect(completed).toMatchObject({
      kind: 'change',
      change: { payment: { status: 'expired' }, events: [{ type: 'payment.expired' }] },
    });
    expect(apply(waiting, news('approved'), EXPIRES + 10 * EXPIRY_GRACE_MS).p).toMatchObject({
      status: 'approved',
      cancelRequestedAt: null,
    });
    const clients = { ...waiting, cancelAttemptKey: 'k1' };
    expect(apply(clients, news('canceled'), EXPIRES + 2).p.status).toBe('canceled');
  });
});

describe('a chargeback in another currency than the payment’s', () => {
  it('books what is left of the payment, not the dispute’s minor units of another currency', () => {
    const lost = (currency: string, minor: number): Command => ({
      type: 'dispute_news',
      newId: 'dsp_1',
      processorDisputeId: 'dp_1',
      processorStatus: 'lost',
      facts: {
        status: 'lost',
        amount: { minor, currency },
        reason: 'fraudulent',
        evidenceDueBy: null,
        fundsWithdrawnAt: 1,
        fundsReinstatedAt: null,
      },
    });
    const refunded = { ...payment('partially_refunded'), amountRefunded: 2_500 };
    const inYen = decide({ payment: refunded, dispute: null }, lost('JPY', 1_000), 1_000);
    expect(inYen).toMatchObject({ kind: 'change', change: { payment: { amountChargedBack: AMOUNT - 2_500 } } });
    // In the payment's own currency: what the dispute took, at most what is left.
    const inDollars = decide({ payment: refunded, dispute: null }, lost('USD', 1_000), 1_000);
    expect(inDollars).toMatchObject({ kind: 'change', change: { payment: { amountChargedBack: 1_000 } } });
  });
});

describe('whether a void failed (voidRefundFailed)', () => {
  const kept = { voidRefundReference: 're_kept' };
  it('believes news only about the refund kept with the void, and a read only of that refund (and of the one named)', () => {
    expect(voidRefundFailed(kept, { kind: 'named', refundReference: 're_kept' })).toBe(true);
    expect(voidRefundFailed(kept, { kind: 'named', refundReference: 're_earlier' })).toBe(false);
    expect(voidRefundFailed({ voidRefundReference: null }, { kind: 'named', refundReference: 're_kept' })).toBe(false);
    expect(voidRefundFailed(kept, { kind: 'read', refundReference: 're_kept', status: 'failed' })).toBe(true);
    expect(voidRefundFailed(kept, { kind: 'read', refundReference: 're_kept', status: 'declined' })).toBe(true);
    expect(voidRefundFailed(kept, { kind: 'read', refundReference: 're_kept', status: 'approved' })).toBe(false);
    expect(voidRefundFailed(kept, { kind: 'read', refundReference: 're_other', status: 'failed' })).toBe(false);
    expect(
      voidRefundFailed(kept, { kind: 'read', refundReference: 're_kept', status: 'failed', named: 're_other' }),
    ).toBe(false);
    expect(
      voidRefundFailed({ voidRefundReference: null }, { kind: 'read', refundReference: 're_x', status: 'failed' }),
    ).toBe(true);
  });
});

describe('the processor’s own id of a payment (`processorPaymentId`)', () => {
  it('is kept from the first answer or news that holds it, whatever the status does, and never replaced', () => {
    const waiting = { ...payment('pending'), processorReference: 'pay_1' };
    const answered = decide(
      { payment: { ...payment('created'), processorReference: null } },
      {
        type: 'create_answered',
        account: { status: 'pending', action: { type: 'at_terminal' } },
        processorReference: 'pay_1',
        processorStatus: 'sent',
        qrData: null,
        qrTtlMs: null,
      },
      1_000,
    );
    expect(answered.kind === 'change' && answered.change.payment.processorPaymentId).toBeUndefined();
    // News that changes no status still records it (an approval already recorded by a read that did not say it).
    const approved = { ...waiting, status: 'approved' as const };
    const told = decide(
      { payment: approved },
      { type: 'processor_news', account: { status: 'approved', processorPaymentId: 'PSP1' } },
      2_000,
    );
    expect(told).toMatchObject({
      kind: 'change',
      outcome: 'ignored',
      change: { payment: { processorPaymentId: 'PSP1' } },
    });
    const again = decide(
      { payment: { ...approved, processorPaymentId: 'PSP1' } },
      { type: 'processor_news', account: { status: 'approved', processorPaymentId: 'PSP2' } },
      3_000,
    );
    expect(again.kind).toBe('none');
    const first = decide(
      { payment: { ...payment('created'), processorReference: null } },
      {
        type: 'create_answered',
        account: { status: 'approved', processorPaymentId: 'PSP3' },
        processorReference: 'pay_1',
        processorStatus: 'Success',
        qrData: null,
        qrTtlMs: null,
      },
      4_000,
    );
    expect(first).toMatchObject({
      kind: 'change',
      change: { payment: { processorPaymentId: 'PSP3', status: 'approved' } },
    });
  });
});
