import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  PAYMENT_STATUSES,
  PAYMENT_TRANSITIONS,
  applyTransition,
  canCancel,
  canRefund,
  canTransition,
  chargeback,
  eventTypeFor,
  nextUpdatedAt,
  type PaymentStatus,
  type TransitionGuards,
} from '../../src/domain/payment-state.ts';
import {
  REFUND_STATUSES,
  applyRefundTransition,
  canRefundTransition,
  REFUND_TRANSITIONS,
  type RefundStatus,
} from '../../src/domain/refund-state.ts';
import {
  approvedRefundTotal,
  paymentStatusAfterRefunds,
  refundableBalance,
  reserveRefund,
  reservedRefundTotal,
} from '../helpers/refund-model.ts';

/** A status with no way out (as the table says). */
const isFinal = (status: PaymentStatus) => PAYMENT_TRANSITIONS[status].length === 0;
const isRefundFinal = (status: RefundStatus) => REFUND_TRANSITIONS[status].length === 0;

// docs/states.md ("Payment transitions"), written out independently of the module's table.
const EXPECTED: Record<PaymentStatus, PaymentStatus[]> = {
  created: ['pending', 'processing', 'approved', 'declined', 'failed', 'expired', 'canceled'],
  pending: ['processing', 'approved', 'declined', 'failed', 'expired', 'canceled'],
  processing: ['approved', 'declined', 'failed', 'expired', 'canceled'],
  approved: ['partially_refunded', 'refunded', 'canceled'],
  partially_refunded: ['partially_refunded', 'refunded'],
  declined: [],
  failed: [],
  expired: [],
  canceled: [],
  refunded: [],
};

const FINALS: PaymentStatus[] = ['declined', 'failed', 'expired', 'canceled', 'refunded'];

/** Guards that let through everything the table allows: no refund, unless `to` is a refund status. */
function permissive(to: PaymentStatus): TransitionGuards {
  return {
    hasRefunds: to === 'partially_refunded' || to === 'refunded',
    refundOutcome: to === 'partially_refunded' || to === 'refunded' ? to : null,
  };
}

describe('payment transition table', () => {
  it('is exactly the contract', () => {
    expect([...PAYMENT_STATUSES].sort()).toEqual(Object.keys(EXPECTED).sort());
    for (const status of PAYMENT_STATUSES)
      expect([...PAYMENT_TRANSITIONS[status]].sort()).toEqual([...EXPECTED[status]].sort());
  });

  const pairs = PAYMENT_STATUSES.flatMap((from) =>
    PAYMENT_STATUSES.map((to) => [from, to, EXPECTED[from].includes(to)] as const),
  );

  it.each(pairs)('%s -> %s allowed: %s', (from, to, allowed) => {
    expect(canTransition(from, to, permissive(to))).toBe(allowed);
    const result = applyTransition({ status: from, updatedAt: 1000 }, to, 2000, permissive(to));
    if (allowed) expect(result).toEqual({ ok: true, status: to, updatedAt: 2000 });
    else expect(result.ok).toBe(false);
  });

  it.each(FINALS)('%s is final and never changes', (status) => {
    expect(isFinal(status)).toBe(true);
    for (const to of PAYMENT_STATUSES) {
      const result = applyTransition({ status, updatedAt: 1 }, to, 2, permissive(to));
      expect(result).toEqual({ ok: false, reason: to === status ? 'no_change' : 'final' });
    }
  });

  it.each(['created', 'pending', 'processing', 'approved', 'partially_refunded'] as const)(
    '%s is not final',
    (status) => {
      expect(isFinal(status)).toBe(false);
    },
  );

  it('refuses a repeated status as a no-op, except another partial refund', () => {
    for (const status of PAYMENT_STATUSES) {
      const result = applyTransition({ status, updatedAt: 1 }, status, 2, permissive(status));
      if (status === 'partially_refunded') expect(result).toEqual({ ok: true, status, updatedAt: 2 });
      else expect(result).toEqual({ ok: false, reason: 'no_change' });
    }
  });

  it('never moves backwards', () => {
    expect(applyTransition({ status: 'approved', updatedAt: 1 }, 'pending', 2, permissive('pending'))).toEqual({
      ok: false,
      reason: 'not_allowed',
    });
    expect(applyTransition({ status: 'processing', updatedAt: 1 }, 'pending', 2, permissive('pending'))).toEqual({
      ok: false,
      reason: 'not_allowed',
    });
    expect(
      applyTransition({ status: 'partially_refunded', updatedAt: 1 }, 'approved', 2, permissive('approved')),
    ).toEqual({
      ok: false,
      reason: 'not_allowed',
    });
  });
});

describe('cancel and void', () => {
  it.each<[PaymentStatus, boolean, boolean]>([
    ['created', false, true],
    ['pending', false, true],
    ['processing', false, true],
    ['approved', false, true],
    ['approved', true, false],
    ['partially_refunded', true, false],
    ['refunded', true, false],
    ['declined', false, false],
    ['failed', false, false],
    ['expired', false, false],
    ['canceled', false, false],
  ])('from %s with refunds %s: %s', (status, hasRefunds, allowed) => {
    expect(canCancel(status, hasRefunds)).toBe(allowed);
  });

  it('names why a void is refused', () => {
    expect(applyTransition({ status: 'approved', updatedAt: 1 }, 'canceled', 2, { hasRefunds: true })).toEqual({
      ok: false,
      reason: 'refunds_exist',
    });
    expect(applyTransition({ status: 'canceled', updatedAt: 1 }, 'canceled', 2, { hasRefunds: false })).toEqual({
      ok: false,
      reason: 'no_change',
    });
  });
});

describe('refund statuses of a payment', () => {
  it('are allowed from approved and partially_refunded only', () => {
    for (const status of PAYMENT_STATUSES)
      expect(canRefund(status)).toBe(status === 'approved' || status === 'partially_refunded');
  });

  it('must match what the approved refunds make of the payment', () => {
    const from = { status: 'approved' as const, updatedAt: 1 };
    expect(applyTransition(from, 'refunded', 2, { hasRefunds: false })).toEqual({
      ok: false,
      reason: 'refund_mismatch',
    });
    expect(applyTransition(from, 'refunded', 2, { hasRefunds: true, refundOutcome: 'partially_refunded' })).toEqual({
      ok: false,
      reason: 'refund_mismatch',
    });
    expect(applyTransition(from, 'partially_refunded', 2, { hasRefunds: true, refundOutcome: null })).toEqual({
      ok: false,
      reason: 'refund_mismatch',
    });
    expect(
      applyTransition(from, 'partially_refunded', 2, { hasRefunds: true, refundOutcome: 'partially_refunded' }).ok,
    ).toBe(true);
  });
});

describe('updatedAt', () => {
  it('is now when the clock moved forward', () => {
    expect(nextUpdatedAt(1000, 5000)).toBe(5000);
  });

  it('is one more than before when the clock stood still or stepped back', () => {
    expect(nextUpdatedAt(1000, 1000)).toBe(1001);
    expect(nextUpdatedAt(1000, 10)).toBe(1001);
    expect(applyTransition({ status: 'pending', updatedAt: 1000 }, 'approved', 999, { hasRefunds: false })).toEqual({
      ok: true,
      status: 'approved',
      updatedAt: 1001,
    });
  });
});

describe('eventTypeFor', () => {
  it.each<[PaymentStatus, string | null]>([
    ['created', null],
    ['pending', 'payment.pending'],
    ['processing', null],
    ['approved', 'payment.approved'],
    ['declined', 'payment.declined'],
    ['failed', 'payment.failed'],
    ['expired', 'payment.expired'],
    ['canceled', 'payment.canceled'],
    ['partially_refunded', 'payment.refunded'],
    ['refunded', 'payment.refunded'],
  ])('%s -> %s', (status, type) => {
    expect(eventTypeFor(status)).toBe(type);
  });
});

describe('chargeback', () => {
  const at = (status: PaymentStatus, chargedBackAt: number | null = null) => ({
    status,
    chargedBackAt,
    updatedAt: 1_000,
  });

  it.each<[PaymentStatus, PaymentStatus | null]>([
    // An open payment was approved without our hearing of it: the chargeback proves the collection.
    ['created', 'approved'],
    ['pending', 'approved'],
    ['processing', 'approved'],
    // Collected: the status stays (the interface's states are closed), the chargeback is a field.
    ['approved', 'approved'],
    ['partially_refunded', 'partially_refunded'],
    ['refunded', 'refunded'],
    // Never collected, or voided: nothing to take back.
    ['declined', null],
    ['failed', null],
    ['expired', null],
    ['canceled', null],
  ])('%s → %s', (status, expected) => {
    const result = chargeback(at(status), 500);
    if (expected === null) return expect(result).toBeNull();
    // updated_at moves on even when the clock stepped back, and charged_back_at is that moment.
    expect(result).toEqual({ status: expected, chargedBackAt: 1_001, updatedAt: 1_001 });
  });

  it('lets a refund in flight when the chargeback came settle as any approved refund does', () => {
    const charged = chargeback(at('approved'), 2_000)!;
    const settled = applyTransition(charged, 'refunded', 3_000, {
      hasRefunds: true,
      refundOutcome: 'refunded',
      chargedBack: true,
    });
    expect(settled).toEqual({ ok: true, status: 'refunded', updatedAt: 3_000 });
    // But no void after it.
    expect(applyTransition(charged, 'canceled', 3_000, { hasRefunds: false, chargedBack: true })).toEqual({
      ok: false,
      reason: 'charged_back',
    });
  });

  it('is recorded once: a repeated chargeback changes nothing', () => {
    expect(chargeback(at('approved', 900), 2_000)).toBeNull();
  });

  it('closes refunds and cancels', () => {
    expect(canRefund('approved', true)).toBe(false);
    expect(canRefund('partially_refunded', true)).toBe(false);
    expect(canRefund('approved', false)).toBe(true);
    expect(canCancel('approved', false, true)).toBe(false);
    expect(canCancel('approved', false, false)).toBe(true);
  });
});

// A payment with its refunds, driven by random operations exactly as the service would drive it: every
// change through the modules, each operation at a clock that may stand still or step back.
type Operation =
  | { kind: 'notify'; to: PaymentStatus; dt: number }
  | { kind: 'cancel'; dt: number }
  | { kind: 'refund'; amount: 'full' | number; dt: number }
  | { kind: 'settle'; index: number; to: RefundStatus; dt: number }
  | { kind: 'chargeback'; dt: number };

const dt = fc.integer({ min: -50, max: 1000 });
const operation: fc.Arbitrary<Operation> = fc.oneof(
  {
    weight: 16,
    arbitrary: fc.record({
      kind: fc.constant('notify' as const),
      // Mostly the processor's real outcomes, but any status may arrive late or out of order.
      to: fc.oneof(
        { weight: 2, arbitrary: fc.constant<PaymentStatus>('approved') },
        { weight: 1, arbitrary: fc.constantFrom<PaymentStatus>('pending', 'processing') },
        { weight: 2, arbitrary: fc.constantFrom(...PAYMENT_STATUSES) },
      ),
      dt,
    }),
  },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('cancel' as const), dt }) },
  // Rare, as in life: a chargeback closes the payment to refunds, so frequent ones would starve the rest.
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('chargeback' as const), dt }) },
  {
    weight: 16,
    arbitrary: fc.record({
      kind: fc.constant('refund' as const),
      amount: fc.oneof(
        fc.constant('full' as const),
        fc.integer({ min: 1, max: 600 }),
        fc.integer({ min: 1, max: 1_000_000 }),
      ),
      dt,
    }),
  },
  {
    weight: 20,
    arbitrary: fc.record({
      kind: fc.constant('settle' as const),
      index: fc.nat(),
      // Mostly the processor's real outcome, so that payments actually end refunded often enough to prove
      // something; any status may still arrive late or out of order.
      to: fc.oneof(
        { weight: 1, arbitrary: fc.constant<RefundStatus>('approved') },
        { weight: 1, arbitrary: fc.constantFrom(...REFUND_STATUSES) },
      ),
      dt,
    }),
  },
);

interface Model {
  amount: number;
  payment: { status: PaymentStatus; updatedAt: number; chargedBackAt: number | null };
  refunds: { status: RefundStatus; amount: number; updatedAt: number }[];
  clock: number;
}

const coverage = { refunded: 0, partiallyRefunded: 0, exceeded: 0, voided: 0, refundDeclined: 0, chargedBack: 0 };

function guardsOf(model: Model): TransitionGuards {
  return {
    hasRefunds: model.refunds.length > 0,
    refundOutcome: paymentStatusAfterRefunds(model.amount, model.refunds),
    chargedBack: model.payment.chargedBackAt !== null,
  };
}

function step(model: Model, op: Operation): void {
  const now = (model.clock += op.dt);
  switch (op.kind) {
    case 'notify':
    case 'cancel': {
      const to = op.kind === 'cancel' ? 'canceled' : op.to;
      // The service refuses a cancel of a charged-back payment before the state machine is asked.
      if (
        op.kind === 'cancel' &&
        !canCancel(model.payment.status, model.refunds.length > 0, model.payment.chargedBackAt !== null)
      )
        return;
      const result = applyTransition(model.payment, to, now, guardsOf(model));
      if (op.kind === 'cancel') expect(result.ok).toBe(true);
      if (result.ok) {
        if (to === 'canceled' && model.payment.status === 'approved') coverage.voided++;
        model.payment = { ...model.payment, status: result.status, updatedAt: result.updatedAt };
      }
      return;
    }
    case 'chargeback': {
      const result = chargeback(model.payment, now);
      if (result) {
        coverage.chargedBack++;
        model.payment = result;
      }
      return;
    }
    case 'refund': {
      if (!canRefund(model.payment.status, model.payment.chargedBackAt !== null)) return;
      const balance = refundableBalance(model.amount, model.refunds);
      const requested = op.amount === 'full' ? balance : op.amount;
      if (requested <= 0) return;
      const reserved = reserveRefund(model.amount, model.refunds, requested);
      expect(reserved.ok).toBe(requested <= balance);
      if (reserved.ok) model.refunds.push({ status: 'created', amount: requested, updatedAt: now });
      else coverage.exceeded++;
      return;
    }
    case 'settle': {
      if (model.refunds.length === 0) return;
      const index = op.index % model.refunds.length;
      const refund = model.refunds[index]!;
      const result = applyRefundTransition(refund, op.to, now);
      expect(result.ok).toBe(canRefundTransition(refund.status, op.to));
      if (!result.ok) return;
      model.refunds[index] = { ...refund, status: result.status, updatedAt: result.updatedAt };
      if (result.status === 'declined' || result.status === 'failed') coverage.refundDeclined++;
      if (result.status !== 'approved') return;
      const outcome = paymentStatusAfterRefunds(model.amount, model.refunds);
      expect(outcome).not.toBeNull();
      const moved = applyTransition(model.payment, outcome!, now, guardsOf(model));
      // A settled refund must always be expressible on the payment it was reserved against, even when a
      // chargeback came while it was in flight (the chargeback is no status, so nothing stands in the way).
      expect(moved.ok).toBe(true);
      if (moved.ok) model.payment = { ...model.payment, status: moved.status, updatedAt: moved.updatedAt };
      if (moved.ok && moved.status === 'refunded') coverage.refunded++;
      if (moved.ok && moved.status === 'partially_refunded') coverage.partiallyRefunded++;
      return;
    }
  }
}

function checkInvariants(before: Model, after: Model): void {
  const { payment } = after;
  // A final status never changes; only a chargeback may still be recorded on it (a refunded payment).
  if (isFinal(before.payment.status)) {
    expect(payment.status).toBe(before.payment.status);
    if (payment.chargedBackAt === before.payment.chargedBackAt) expect(payment).toEqual(before.payment);
  }
  if (payment.status !== before.payment.status || payment.updatedAt !== before.payment.updatedAt) {
    expect(payment.updatedAt).toBeGreaterThan(before.payment.updatedAt);
  }
  // A repeatable step (another partial refund) still counts as a change and moves updatedAt on.
  const approvedBefore = approvedRefundTotal(before.refunds);
  const approvedAfter = approvedRefundTotal(after.refunds);
  if (approvedAfter !== approvedBefore) expect(payment.updatedAt).toBeGreaterThan(before.payment.updatedAt);

  expect(approvedAfter + reservedRefundTotal(after.refunds)).toBeLessThanOrEqual(after.amount);
  expect(refundableBalance(after.amount, after.refunds)).toBeGreaterThanOrEqual(0);
  expect(payment.status === 'refunded').toBe(approvedAfter === after.amount);
  expect(payment.status === 'partially_refunded').toBe(approvedAfter > 0 && approvedAfter < after.amount);

  after.refunds.forEach((refund, i) => {
    const previous = before.refunds[i];
    if (!previous) {
      expect(refund.status).toBe('created');
      return;
    }
    expect(refund.amount).toBe(previous.amount);
    if (isRefundFinal(previous.status)) expect(refund).toEqual(previous);
    else if (refund.status !== previous.status) expect(refund.updatedAt).toBeGreaterThan(previous.updatedAt);
  });
  // Refunds exist only for payments that were approved, which nothing but a refund leaves.
  if (after.refunds.length > 0) expect(['approved', 'partially_refunded', 'refunded']).toContain(payment.status);
  // A chargeback is recorded once, never undone, and only on a collected payment; no refund is reserved
  // after it.
  if (before.payment.chargedBackAt !== null) {
    expect(payment.chargedBackAt).toBe(before.payment.chargedBackAt);
    expect(after.refunds.length).toBe(before.refunds.length);
  }
  if (payment.chargedBackAt !== null) expect(['approved', 'partially_refunded', 'refunded']).toContain(payment.status);
}

describe('state machine properties', () => {
  it('no sequence of operations and notifications breaks the invariants', () => {
    const clone = (model: Model): Model => ({
      ...model,
      payment: { ...model.payment },
      refunds: model.refunds.map((refund) => ({ ...refund })),
    });
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.integer({ min: 0, max: 2_000_000_000_000 }),
        fc.array(operation, { minLength: 1, maxLength: 80 }),
        (amount, start, operations) => {
          let model: Model = {
            amount,
            payment: { status: 'created', updatedAt: start, chargedBackAt: null },
            refunds: [],
            clock: start,
          };
          for (const op of operations) {
            const before = clone(model);
            step(model, op);
            checkInvariants(before, model);
            model = clone(model);
          }
        },
      ),
      { numRuns: 1000 },
    );
    // The generators must actually reach the interesting corners, or the property proves little.
    for (const [corner, count] of Object.entries(coverage)) expect(count, corner).toBeGreaterThan(0);
  });
});
