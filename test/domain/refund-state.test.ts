import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  REFUND_STATUSES,
  REFUND_TRANSITIONS,
  applyRefundTransition,
  canRefundTransition,
  isReserving,
  type RefundStatus,
} from '../../src/domain/refund-state.ts';
import {
  approvedRefundTotal,
  paymentStatusAfterRefunds,
  refundableBalance,
  reserveRefund,
  reservedRefundTotal,
  type RefundLedgerEntry,
} from '../helpers/refund-model.ts';

// docs/states.md ("Refund transitions"): `created` -> `pending`/`processing` -> `approved` | `declined` | `failed`.
/** A status with no way out (as the table says). */
const isRefundFinal = (status: RefundStatus) => REFUND_TRANSITIONS[status].length === 0;

const EXPECTED: Record<RefundStatus, RefundStatus[]> = {
  created: ['pending', 'processing', 'approved', 'declined', 'failed'],
  pending: ['processing', 'approved', 'declined', 'failed'],
  processing: ['approved', 'declined', 'failed'],
  approved: [],
  declined: [],
  failed: [],
};

describe('refund transition table', () => {
  it('is exactly the contract', () => {
    expect(REFUND_STATUSES).toEqual(Object.keys(EXPECTED));
    for (const status of REFUND_STATUSES)
      expect([...REFUND_TRANSITIONS[status]].sort()).toEqual([...EXPECTED[status]].sort());
  });

  const pairs = REFUND_STATUSES.flatMap((from) =>
    REFUND_STATUSES.map((to) => [from, to, EXPECTED[from].includes(to)] as const),
  );

  it.each(pairs)('%s -> %s allowed: %s', (from, to, allowed) => {
    expect(canRefundTransition(from, to)).toBe(allowed);
    const result = applyRefundTransition({ status: from, updatedAt: 500 }, to, 400);
    if (allowed) expect(result).toEqual({ ok: true, status: to, updatedAt: 501 });
    else
      expect(result).toEqual({
        ok: false,
        reason: from === to ? 'no_change' : isRefundFinal(from) ? 'final' : 'not_allowed',
      });
  });

  it.each(['approved', 'declined', 'failed'] as const)('%s is final and never changes', (status) => {
    expect(isRefundFinal(status)).toBe(true);
    expect(isReserving(status)).toBe(false);
    for (const to of REFUND_STATUSES) expect(applyRefundTransition({ status, updatedAt: 1 }, to, 2).ok).toBe(false);
  });

  it.each(['created', 'pending', 'processing'] as const)('%s is not final and reserves its amount', (status) => {
    expect(isRefundFinal(status)).toBe(false);
    expect(isReserving(status)).toBe(true);
  });
});

describe('balance', () => {
  const refunds: RefundLedgerEntry[] = [
    { status: 'approved', amount: 300 },
    { status: 'pending', amount: 200 },
    { status: 'created', amount: 50 },
    { status: 'processing', amount: 25 },
    { status: 'declined', amount: 400 },
    { status: 'failed', amount: 400 },
  ];

  it('subtracts approved and reserved refunds, not declined or failed ones', () => {
    expect(approvedRefundTotal(refunds)).toBe(300);
    expect(reservedRefundTotal(refunds)).toBe(275);
    expect(refundableBalance(1000, refunds)).toBe(425);
    expect(refundableBalance(1000, [])).toBe(1000);
  });

  it('reserves up to the balance and not a minor unit more', () => {
    expect(reserveRefund(1000, refunds, 425)).toEqual({ ok: true, balanceAfter: 0 });
    expect(reserveRefund(1000, refunds, 1)).toEqual({ ok: true, balanceAfter: 424 });
    expect(reserveRefund(1000, refunds, 426)).toEqual({ ok: false, reason: 'refund_exceeds_balance', balance: 425 });
    expect(reserveRefund(1000, [{ status: 'approved', amount: 1000 }], 1)).toEqual({
      ok: false,
      reason: 'refund_exceeds_balance',
      balance: 0,
    });
  });

  it('a declined or failed refund releases its reservation', () => {
    expect(reserveRefund(100, [{ status: 'pending', amount: 100 }], 1).ok).toBe(false);
    expect(reserveRefund(100, [{ status: 'declined', amount: 100 }], 100).ok).toBe(true);
    expect(reserveRefund(100, [{ status: 'failed', amount: 100 }], 100).ok).toBe(true);
  });

  it.each([0, -1, 1.5, Number.NaN])('throws for a requested amount of %d (a caller bug)', (requested) => {
    expect(() => reserveRefund(100, [], requested)).toThrow(RangeError);
  });

  it.each<[RefundLedgerEntry[], string | null]>([
    [[], null],
    [[{ status: 'pending', amount: 100 }], null],
    [[{ status: 'declined', amount: 100 }], null],
    [[{ status: 'approved', amount: 1 }], 'partially_refunded'],
    [
      [
        { status: 'approved', amount: 99 },
        { status: 'pending', amount: 1 },
      ],
      'partially_refunded',
    ],
    [[{ status: 'approved', amount: 100 }], 'refunded'],
    [
      [
        { status: 'approved', amount: 60 },
        { status: 'approved', amount: 40 },
        { status: 'failed', amount: 5 },
      ],
      'refunded',
    ],
  ])('payment of 100 with %j is %s', (ledger, status) => {
    expect(paymentStatusAfterRefunds(100, ledger)).toBe(status);
  });

  it('refuses to describe a ledger whose approved refunds exceed the amount', () => {
    expect(() => paymentStatusAfterRefunds(100, [{ status: 'approved', amount: 101 }])).toThrow(RangeError);
  });
});

describe('refund properties', () => {
  // Requests arrive one after another (serialized per payment) while earlier ones settle in any order:
  // whatever the interleaving, the processor is never asked for more than the balance.
  it('approved plus reserved never exceeds the amount, and a full refund empties the balance', () => {
    const event = fc.oneof(
      fc.record({
        kind: fc.constant('request' as const),
        amount: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 5000 })),
      }),
      fc.record({ kind: fc.constant('settle' as const), index: fc.nat(), to: fc.constantFrom(...REFUND_STATUSES) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000 }), fc.array(event, { maxLength: 100 }), (amount, events) => {
        const ledger: (RefundLedgerEntry & { updatedAt: number })[] = [];
        let clock = 0;
        for (const e of events) {
          clock += 1;
          if (e.kind === 'request') {
            const balance = refundableBalance(amount, ledger);
            // Amount 0 stands for "full refund": the whole refundable balance.
            const requested = e.amount === 0 ? balance : e.amount;
            if (requested <= 0) continue;
            const result = reserveRefund(amount, ledger, requested);
            expect(result.ok).toBe(requested <= balance);
            if (result.ok) {
              ledger.push({ status: 'created', amount: requested, updatedAt: clock });
              expect(result.balanceAfter).toBe(refundableBalance(amount, ledger));
              if (e.amount === 0) expect(result.balanceAfter).toBe(0);
            }
          } else if (ledger.length > 0) {
            const refund = ledger[e.index % ledger.length]!;
            const result = applyRefundTransition(refund, e.to, clock);
            if (isRefundFinal(refund.status)) expect(result.ok).toBe(false);
            if (result.ok) {
              expect(result.updatedAt).toBeGreaterThan(refund.updatedAt);
              refund.status = result.status;
              refund.updatedAt = result.updatedAt;
            }
          }
          expect(approvedRefundTotal(ledger) + reservedRefundTotal(ledger)).toBeLessThanOrEqual(amount);
          const status = paymentStatusAfterRefunds(amount, ledger);
          expect(status === 'refunded').toBe(approvedRefundTotal(ledger) === amount);
        }
      }),
      { numRuns: 1000 },
    );
  });
});
