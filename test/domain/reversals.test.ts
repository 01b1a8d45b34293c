import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  applyTransition,
  canCancel,
  canRefund,
  chargeback,
  PAYMENT_STATUSES,
  PAYMENT_TRANSITIONS,
  type PaymentStatus,
} from '../../src/domain/payment-state.ts';
import {
  applyRefundTransition,
  canReverseRefund,
  REFUND_REVERSALS,
  REFUND_STATUSES,
  REFUND_TRANSITIONS,
  type RefundStatus,
} from '../../src/domain/refund-state.ts';
import {
  approvedRefundTotal,
  paymentStatusAfterRefunds,
  refundableBalance,
  reserveRefund,
  reservedRefundTotal,
  reverseRefund,
} from '../helpers/refund-model.ts';
import {
  canReversePayment,
  isRefundFailureReason,
  PAYMENT_REVERSALS,
  REFUND_FAILURE_REASONS,
  REFUND_REVERSAL_EVENT_TYPE,
  reverseVoid,
} from '../../src/domain/reversals.ts';

type Refund = { id: string; status: RefundStatus; amount: number; updatedAt: number };

const refundOf = (id: string, status: RefundStatus, amount: number, updatedAt = 10): Refund => ({
  id,
  status,
  amount,
  updatedAt,
});

function reverse(
  payment: { status: PaymentStatus; amount: number; updatedAt?: number },
  refunds: Refund[],
  id: string,
  news: Partial<Parameters<typeof reverseRefund>[0]['news']> = {},
  now = 1_000,
) {
  return reverseRefund({
    payment: { updatedAt: 100, ...payment },
    refunds,
    refund: refunds.find((r) => r.id === id)!,
    news: { status: 'failed', trusted: true, ...news },
    now,
  });
}

describe('the reversal tables', () => {
  it('a refund leaves approved for failed, and nothing else leaves a final refund status', () => {
    for (const from of REFUND_STATUSES)
      for (const to of REFUND_STATUSES) expect(canReverseRefund(from, to)).toBe(from === 'approved' && to === 'failed');
    // Apart from the settling table: the ordinary path can never take a reversal by accident.
    for (const from of REFUND_STATUSES)
      for (const to of REFUND_REVERSALS[from]) expect(REFUND_TRANSITIONS[from]).not.toContain(to);
  });

  it('reversals are the only ways out of refunded and canceled', () => {
    expect(PAYMENT_TRANSITIONS.refunded).toEqual([]);
    expect(PAYMENT_TRANSITIONS.canceled).toEqual([]);
    expect(PAYMENT_REVERSALS.refunded).toEqual(['partially_refunded', 'approved']);
    expect(PAYMENT_REVERSALS.canceled).toEqual(['approved']);
    for (const from of PAYMENT_STATUSES) {
      const reversible = ['canceled', 'partially_refunded', 'refunded'].includes(from);
      expect(PAYMENT_REVERSALS[from].length > 0).toBe(reversible);
    }
    expect(canReversePayment('refunded', 'approved')).toBe(true);
    expect(canReversePayment('approved', 'canceled')).toBe(false);
  });

  it('names the failure reasons of Stripe’s refunds, and nothing else', () => {
    expect([...REFUND_FAILURE_REASONS].sort()).toEqual(
      [
        'charge_for_pending_refund_disputed',
        'declined',
        'expired_or_canceled_card',
        'insufficient_funds',
        'lost_or_stolen_card',
        'merchant_request',
        'unknown',
      ].sort(),
    );
    expect(isRefundFailureReason('expired_or_canceled_card')).toBe(true);
    expect(isRefundFailureReason('card_declined')).toBe(false);
    expect(isRefundFailureReason(undefined)).toBe(false);
    expect(REFUND_REVERSAL_EVENT_TYPE).toBe('refund.failed');
  });

  it('no transition of the payment table leaves refunded or canceled, whatever the guards', () => {
    const guardSets = [undefined, null, 'partially_refunded', 'refunded'] as const;
    for (const from of ['refunded', 'canceled'] as const)
      for (const to of PAYMENT_STATUSES)
        for (const hasRefunds of [false, true])
          for (const chargedBack of [false, true])
            for (const refundOutcome of guardSets) {
              const result = applyTransition({ status: from, updatedAt: 1 }, to, 2, {
                hasRefunds,
                chargedBack,
                ...(refundOutcome !== undefined ? { refundOutcome } : {}),
              });
              expect(result.ok, `${from} -> ${to}`).toBe(false);
            }
  });
});

describe('reverseRefund', () => {
  it('the only refund of a refunded payment fails: the payment is approved again, the whole amount refundable', () => {
    const result = reverse({ status: 'refunded', amount: 100 }, [refundOf('a', 'approved', 100)], 'a', {
      failureReason: 'expired_or_canceled_card',
    });
    expect(result).toEqual({
      ok: true,
      refund: { status: 'failed', failureReason: 'expired_or_canceled_card', updatedAt: 1_000 },
      payment: { status: 'approved', updatedAt: 1_000 },
      refundableBalance: 100,
    });
  });

  it('one of two refunds of a refunded payment fails: partially refunded, its amount refundable again', () => {
    const refunds = [refundOf('a', 'approved', 60), refundOf('b', 'approved', 40)];
    const result = reverse({ status: 'refunded', amount: 100 }, refunds, 'b');
    expect(result).toMatchObject({ ok: true, payment: { status: 'partially_refunded' }, refundableBalance: 40 });
  });

  it('a partially refunded payment stays partially refunded while another refund stands, with a new updatedAt', () => {
    const refunds = [refundOf('a', 'approved', 30), refundOf('b', 'approved', 20), refundOf('c', 'pending', 10)];
    const result = reverse({ status: 'partially_refunded', amount: 100, updatedAt: 5_000 }, refunds, 'a', {}, 10);
    // The clock stood behind both records: updatedAt still moves strictly forward.
    expect(result).toEqual({
      ok: true,
      refund: { status: 'failed', failureReason: 'unknown', updatedAt: 11 },
      payment: { status: 'partially_refunded', updatedAt: 5_001 },
      refundableBalance: 70,
    });
  });

  it('a restored balance can be taken by a new refund, and not a minor unit more', () => {
    const refunds = [refundOf('a', 'approved', 70), refundOf('b', 'approved', 30)];
    const result = reverse({ status: 'refunded', amount: 100 }, refunds, 'a');
    expect(result.ok).toBe(true);
    const ledger = refunds.map((r) => (r.id === 'a' ? { ...r, status: 'failed' as const } : r));
    expect(reserveRefund(100, ledger, 70)).toEqual({ ok: true, balanceAfter: 0 });
    expect(reserveRefund(100, ledger, 71).ok).toBe(false);
  });

  it('a refund declined after approval (Stripe: failed with failure_reason declined) is reversed too', () => {
    const result = reverse({ status: 'refunded', amount: 100 }, [refundOf('a', 'approved', 100)], 'a', {
      status: 'declined',
      failureReason: 'declined',
    });
    expect(result).toMatchObject({ ok: true, refund: { status: 'failed', failureReason: 'declined' } });
  });

  it.each(REFUND_STATUSES)('untrusted news changes nothing (refund %s)', (status) => {
    const result = reverse({ status: 'refunded', amount: 100 }, [refundOf('a', status, 100)], 'a', { trusted: false });
    expect(result).toEqual({ ok: false, reason: 'untrusted' });
  });

  it.each(REFUND_STATUSES.filter((s) => s !== 'approved'))('a %s refund is not reversed', (status) => {
    const payment = { status: 'partially_refunded' as const, amount: 200 };
    const refunds = [refundOf('a', 'approved', 100), refundOf('b', status, 50)];
    expect(reverse(payment, refunds, 'b')).toEqual({ ok: false, reason: 'not_a_reversal' });
  });

  it.each(['created', 'pending', 'processing', 'approved'] as const)('news of %s is no reversal', (status) => {
    const result = reverse({ status: 'refunded', amount: 100 }, [refundOf('a', 'approved', 100)], 'a', { status });
    expect(result).toEqual({ ok: false, reason: 'not_a_reversal' });
  });

  it('refuses a broken ledger (an approved refund on a payment that says otherwise, or a refund not in it)', () => {
    expect(() => reverse({ status: 'approved', amount: 100 }, [refundOf('a', 'approved', 100)], 'a')).toThrow(
      RangeError,
    );
    expect(() =>
      reverseRefund({
        payment: { status: 'refunded', amount: 100, updatedAt: 1 },
        refunds: [refundOf('a', 'approved', 100)],
        refund: refundOf('z', 'approved', 100),
        news: { status: 'failed', trusted: true },
        now: 2,
      }),
    ).toThrow(RangeError);
  });
});

describe('reverseVoid', () => {
  const canceled = { status: 'canceled' as const, updatedAt: 50 };

  it('a voided payment whose refund failed is collected again', () => {
    expect(reverseVoid({ payment: canceled, voided: true, news: { trusted: true }, now: 40 })).toEqual({
      ok: true,
      payment: { status: 'approved', updatedAt: 51 },
    });
  });

  it('not on untrusted news, not for a payment canceled before collection, not for another status', () => {
    expect(reverseVoid({ payment: canceled, voided: true, news: { trusted: false }, now: 60 })).toEqual({
      ok: false,
      reason: 'untrusted',
    });
    expect(reverseVoid({ payment: canceled, voided: false, news: { trusted: true }, now: 60 }).ok).toBe(false);
    for (const status of PAYMENT_STATUSES.filter((s) => s !== 'canceled'))
      expect(reverseVoid({ payment: { status, updatedAt: 1 }, voided: true, news: { trusted: true }, now: 2 }).ok).toBe(
        false,
      );
  });
});

// ---------------------------------------------------------------------------------------------------------
// A model of one payment driven by every operation the domain offers, reversals included.

const dt = fc.integer({ min: -5, max: 1_000 });
const operation = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({ kind: fc.constant('notify' as const), to: fc.constantFrom(...PAYMENT_STATUSES), dt }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('cancel' as const), dt }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('chargeback' as const), dt }) },
  {
    weight: 12,
    arbitrary: fc.record({
      kind: fc.constant('refund' as const),
      amount: fc.oneof(fc.constant('full' as const), fc.integer({ min: 1, max: 600 })),
      dt,
    }),
  },
  {
    weight: 12,
    arbitrary: fc.record({
      kind: fc.constant('settle' as const),
      index: fc.nat(),
      to: fc.constantFrom(...REFUND_STATUSES),
      dt,
    }),
  },
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant('reverse' as const),
      index: fc.nat(),
      trusted: fc.boolean(),
      status: fc.constantFrom(...REFUND_STATUSES),
      reason: fc.constantFrom(...REFUND_FAILURE_REASONS),
      dt,
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('reverse_void' as const), trusted: fc.boolean(), dt }) },
);
type Operation = typeof operation extends fc.Arbitrary<infer T> ? T : never;

interface Model {
  amount: number;
  payment: { status: PaymentStatus; updatedAt: number; chargedBackAt: number | null };
  refunds: Refund[];
  voided: boolean;
  clock: number;
}

const coverage = { reversedRefunded: 0, reversedPartially: 0, refusedUntrusted: 0, voidReversed: 0, reused: 0 };

function guardsOf(model: Model) {
  return {
    hasRefunds: model.refunds.length > 0,
    refundOutcome: paymentStatusAfterRefunds(model.amount, model.refunds),
    chargedBack: model.payment.chargedBackAt !== null,
  };
}

/** Applies one operation as the service would; returns whether it was a trusted reversal that applied. */
function step(model: Model, op: Operation): boolean {
  const now = (model.clock += op.dt);
  switch (op.kind) {
    case 'notify':
    case 'cancel': {
      const to = op.kind === 'cancel' ? 'canceled' : op.to;
      if (
        op.kind === 'cancel' &&
        !canCancel(model.payment.status, model.refunds.length > 0, model.payment.chargedBackAt !== null)
      )
        return false;
      const wasApproved = model.payment.status === 'approved';
      const result = applyTransition(model.payment, to, now, guardsOf(model));
      if (!result.ok) return false;
      if (to === 'canceled') model.voided = wasApproved;
      model.payment = { ...model.payment, status: result.status, updatedAt: result.updatedAt };
      return false;
    }
    case 'chargeback': {
      const result = chargeback(model.payment, now);
      if (result) model.payment = result;
      return false;
    }
    case 'refund': {
      if (!canRefund(model.payment.status, model.payment.chargedBackAt !== null)) return false;
      const balance = refundableBalance(model.amount, model.refunds);
      const requested = op.amount === 'full' ? balance : op.amount;
      if (requested <= 0) return false;
      const reserved = reserveRefund(model.amount, model.refunds, requested);
      if (reserved.ok) {
        if (model.refunds.some((r) => r.status === 'failed')) coverage.reused++;
        model.refunds.push({ id: `r${model.refunds.length}`, status: 'created', amount: requested, updatedAt: now });
      }
      return false;
    }
    case 'settle': {
      if (model.refunds.length === 0) return false;
      const index = op.index % model.refunds.length;
      const refund = model.refunds[index]!;
      const result = applyRefundTransition(refund, op.to, now);
      if (!result.ok) return false;
      model.refunds[index] = { ...refund, status: result.status, updatedAt: result.updatedAt };
      if (result.status !== 'approved') return false;
      const outcome = paymentStatusAfterRefunds(model.amount, model.refunds)!;
      const moved = applyTransition(model.payment, outcome, now, guardsOf(model));
      expect(moved.ok).toBe(true);
      if (moved.ok) model.payment = { ...model.payment, status: moved.status, updatedAt: moved.updatedAt };
      return false;
    }
    case 'reverse': {
      if (model.refunds.length === 0) return false;
      const index = op.index % model.refunds.length;
      const refund = model.refunds[index]!;
      const result = reverseRefund({
        payment: { ...model.payment, amount: model.amount },
        refunds: model.refunds,
        refund,
        news: { status: op.status, trusted: op.trusted, failureReason: op.reason },
        now,
      });
      if (!op.trusted) {
        expect(result).toEqual({ ok: false, reason: 'untrusted' });
        coverage.refusedUntrusted++;
      }
      if (!result.ok) return false;
      if (model.payment.status === 'refunded') coverage.reversedRefunded++;
      else coverage.reversedPartially++;
      model.refunds[index] = { ...refund, status: 'failed', updatedAt: result.refund.updatedAt };
      model.payment = { ...model.payment, ...result.payment };
      expect(result.refundableBalance).toBe(refundableBalance(model.amount, model.refunds));
      return true;
    }
    case 'reverse_void': {
      const result = reverseVoid({ payment: model.payment, voided: model.voided, news: { trusted: op.trusted }, now });
      if (!result.ok) return false;
      coverage.voidReversed++;
      model.voided = false;
      model.payment = { ...model.payment, ...result.payment };
      return true;
    }
  }
}

describe('reversal properties', () => {
  it('no path but a trusted reversal leaves refunded or canceled; approved plus reserved never exceeds the amount', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000 }),
        fc.array(operation, { minLength: 1, maxLength: 80 }),
        (amount, operations) => {
          const model: Model = {
            amount,
            payment: { status: 'approved', updatedAt: 0, chargedBackAt: null },
            refunds: [],
            voided: false,
            clock: 0,
          };
          for (const op of operations) {
            const before = { status: model.payment.status, updatedAt: model.payment.updatedAt };
            const reversal = step(model, op);
            const after = model.payment;
            if ((before.status === 'refunded' || before.status === 'canceled') && after.status !== before.status) {
              expect(reversal, `${before.status} -> ${after.status} by ${op.kind}`).toBe(true);
              expect(canReversePayment(before.status, after.status)).toBe(true);
            }
            if (after.updatedAt !== before.updatedAt) expect(after.updatedAt).toBeGreaterThan(before.updatedAt);
            const approved = approvedRefundTotal(model.refunds);
            expect(approved + reservedRefundTotal(model.refunds)).toBeLessThanOrEqual(amount);
            if (after.status !== 'canceled') {
              expect(after.status === 'refunded').toBe(approved === amount);
              expect(after.status === 'partially_refunded').toBe(approved > 0 && approved < amount);
            }
          }
        },
      ),
      // A fixed seed: the coverage check below must not depend on the draw (an unlucky one once missed a partial
      // reversal); a seed that stops reaching a corner fails here, and the property itself holds for every draw.
      { numRuns: 1000, seed: 20261124 },
    );
    for (const [corner, count] of Object.entries(coverage)) expect(count, corner).toBeGreaterThan(0);
  });
});
