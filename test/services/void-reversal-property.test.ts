import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ProcessorPaymentStatus } from '../../src/connectors/types.ts';
import type { PaymentRow } from '../../src/db/schema/index.ts';
import { PAYMENT_STATUSES, type PaymentStatus } from '../../src/domain/payment-state.ts';
import { canReversePayment } from '../../src/domain/reversals.ts';
import { NO_SETTLEMENT } from '../../src/domain/settlement.ts';
import { decide, type Command } from '../../src/domain/ledger/index.ts';
import { loadPayment } from '../../src/services/payments/store.ts';
import { paymentBody, setupMerchant } from '../helpers/merchant.ts';
import { depsOfOwner } from '../helpers/shards.ts';

/**
 * The ledger's side of the rule "no path but a trusted reversal leaves `canceled`" (test/domain/reversals.test.ts
 * holds the domain's tables to it): a stored payment driven by every account a processor can give (the ledger's
 * `processor_news`: creates, notifications, reads, cancels all take that path) and by void reversals, believed or not
 * (`void_reversal`). The model keeps its own record of whether the payment was collected when it was canceled, apart
 * from the row's `voided_at`.
 */

/** Every status a processor can report (ours but `created` and the refund statuses), and a chargeback. */
const ACCOUNTS: ProcessorPaymentStatus[] = [
  ...PAYMENT_STATUSES.filter(
    (s): s is Exclude<PaymentStatus, 'created' | 'partially_refunded' | 'refunded'> =>
      !['created', 'partially_refunded', 'refunded'].includes(s),
  ),
  'charged_back',
];

const operation = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('account' as const), status: fc.constantFrom(...ACCOUNTS) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('reverse_void' as const), trusted: fc.boolean() }) },
);

describe('a stored payment leaves canceled only by a trusted reversal of a void it recorded', () => {
  it('whatever the processor reports, and whatever reversal news comes, believed or not', async () => {
    // A stored row as the service writes it, made through the API; each run starts it afresh in some status.
    const m = await setupMerchant();
    const made = await m.pay(paymentBody(m.pos.id, '10.00'));
    const stored = (await loadPayment(await depsOfOwner(m.session.user.id), made.body.data.id))!;
    const rowOf = (status: PaymentStatus): PaymentRow => ({ ...stored, status, ...NO_SETTLEMENT, updatedAt: 0 });
    const coverage = { reopened: 0, refusedUntrusted: 0, refusedNeverCollected: 0, voided: 0, canceledBefore: 0 };
    fc.assert(
      fc.property(
        fc.constantFrom<PaymentStatus>('created', 'pending', 'processing', 'approved'),
        fc.array(operation, { minLength: 1, maxLength: 40 }),
        (start, operations) => {
          let row = rowOf(start);
          let now = 1;
          // The model's own memory: was the money collected when the payment was canceled?
          let collectedWhenCanceled = false;
          for (const op of operations) {
            now += 7;
            const before = row;
            const command: Command =
              op.kind === 'account'
                ? { type: 'processor_news', account: { status: op.status } }
                : // Trusted: the void's own refund read failed; otherwise evidence that shows no failure.
                  {
                    type: 'void_reversal',
                    evidence: {
                      kind: 'read',
                      refundReference: row.voidRefundReference,
                      status: op.trusted ? 'failed' : 'approved',
                    },
                  };
            const decision = decide({ payment: row }, command, now);
            if (decision.kind === 'change') row = { ...row, ...decision.change.payment };
            if (before.status !== 'canceled' && row.status === 'canceled') {
              collectedWhenCanceled = before.status === 'approved';
              if (collectedWhenCanceled) coverage.voided++;
              else coverage.canceledBefore++;
            }
            if (before.status === 'canceled' && row.status !== 'canceled') {
              expect(op, `canceled -> ${row.status}`).toMatchObject({ kind: 'reverse_void', trusted: true });
              expect(collectedWhenCanceled).toBe(true);
              expect(canReversePayment('canceled', row.status)).toBe(true);
              expect(row.voidedAt).toBeNull();
              coverage.reopened++;
            }
            if (before.status === 'canceled' && op.kind === 'reverse_void' && row.status === 'canceled') {
              if (!op.trusted) coverage.refusedUntrusted++;
              else if (!collectedWhenCanceled) coverage.refusedNeverCollected++;
            }
            // The row remembers a void exactly while it stands.
            expect(row.voidedAt !== null).toBe(row.status === 'canceled' && collectedWhenCanceled);
            if (row.updatedAt !== before.updatedAt) expect(row.updatedAt).toBeGreaterThan(before.updatedAt);
          }
        },
      ),
      { numRuns: 500, seed: 20261124 },
    );
    for (const [corner, count] of Object.entries(coverage)) expect(count, corner).toBeGreaterThan(0);
  });
});
