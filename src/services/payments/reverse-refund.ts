import type { RefundRow } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import { REFUND_REVERSAL_EVENT_TYPE, reverseRefund, type RefundNews } from '../../domain/reversals.ts';
import { NO_SETTLEMENT } from '../../domain/settlement.ts';
import { toRefundResource } from './resources.ts';
import { mutatePayment, refundUpdateIfAtVersion } from './store.ts';

/**
 * Applies the processor's news that an approved refund failed (`reverseRefund`): the refund, the payment's
 * recomputed status and the `refund.failed` event are one compare-and-set, so a reversal is written, and
 * announced, exactly once however often the news comes and whatever refund is reserved meanwhile. Returns
 * the refund as reversed, or null when the news reverses nothing (untrusted, not a failure, or already
 * applied). `reconciledAt` is written with the reversal when reconciliation found it.
 */
export async function reverseApprovedRefund(
  deps: Deps,
  refundId: string,
  paymentId: string,
  news: RefundNews,
  fields: Partial<Pick<RefundRow, 'reconciledAt'>> = {},
): Promise<RefundRow | null> {
  const { result } = await mutatePayment<RefundRow | null>(deps, paymentId, (payment, ledger) => {
    const current = ledger.find((r) => r.id === refundId);
    if (!current) throw new Error('refund vanished');
    const reversal = reverseRefund({
      payment: { status: payment.status, amount: payment.amountMinor, updatedAt: payment.updatedAt },
      refunds: ledger.map((r) => ({ id: r.id, status: r.status, amount: r.amountMinor })),
      refund: current,
      news,
      now: Date.now(),
    });
    if (!reversal.ok) return { none: null };
    // A reversed refund moved nothing in the end: its settlement goes with it.
    const next: RefundRow = { ...current, ...fields, ...reversal.refund, ...NO_SETTLEMENT };
    return {
      change: reversal.payment,
      companions: (readVersion) => [
        refundUpdateIfAtVersion(
          deps.d1,
          {
            status: next.status,
            failureReason: next.failureReason,
            updatedAt: next.updatedAt,
            reconciledAt: next.reconciledAt,
            ...NO_SETTLEMENT,
          },
          { refundId, paymentId, version: readVersion },
        ),
      ],
      event: { type: REFUND_REVERSAL_EVENT_TYPE, data: { refund: toRefundResource(next) } },
      result: next,
    };
  });
  return result;
}
