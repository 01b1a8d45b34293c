import type { ConnectorContext, ConnectorVersion } from '../../connectors/types.ts';
import type { PaymentRow } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import { reverseVoid, VOID_REVERSAL_EVENT_TYPE } from '../../domain/reversals.ts';
import { callConnector, processorLookup } from './processor.ts';
import { mutatePayment, type PaymentChange } from './store.ts';

/**
 * Applies the processor's news that the refund which carried out a void failed (`reverseVoid`): the payment
 * is `approved` again, its void undated, and `payment.void_failed` is sent, in one compare-and-set, so the
 * reversal is written and announced exactly once however often the news comes. Returns whether it was
 * applied (false: untrusted news, a payment canceled before collection, or one already reversed).
 * `reconciledAt` is written with it when reconciliation found it.
 */
export async function reverseVoidedPayment(
  deps: Deps,
  paymentId: string,
  news: { trusted: boolean },
  fields: Partial<Pick<PaymentRow, 'reconciledAt'>> = {},
): Promise<boolean> {
  const { result } = await mutatePayment<boolean>(deps, paymentId, (payment) => {
    const change = voidReversalChange(payment, news, Date.now());
    if (!change) return { none: false };
    return { change: { ...change, ...fields }, event: { type: VOID_REVERSAL_EVENT_TYPE, data: {} }, result: true };
  });
  return result;
}

/**
 * What a void reversal changes of the stored payment, or null when there is none: `reverseVoid` with the
 * service's own record of the void (`voided_at`, set only by `approved` → `canceled` in `processorAccountChange`).
 */
export function voidReversalChange(payment: PaymentRow, news: { trusted: boolean }, now: number): PaymentChange | null {
  const reversal = reverseVoid({ payment, voided: payment.voidedAt !== null, news, now });
  return reversal.ok ? { ...reversal.payment, voidedAt: null, voidRefundReference: null } : null;
}

/**
 * The service's own read of the refund that carried out a payment's void (`getVoidRefund`, the newest void refund
 * of the payment): whether the processor now reports it failed (a `canceled` Stripe refund is a failure too), or
 * null when it cannot tell (its connector's voids are no refunds that can fail, or the read did not answer). The
 * refund read must be the void's: the one kept with it (`void_refund_reference`) and, when news named one
 * (`expected`), that one; another is no news of this void (false).
 */
export async function voidRefundFailed(
  version: ConnectorVersion,
  ctx: ConnectorContext,
  payment: PaymentRow,
  expected?: string,
): Promise<boolean | null> {
  const getVoidRefund = version.adapter.getVoidRefund;
  if (!getVoidRefund) return null;
  const read = await callConnector(() => getVoidRefund(ctx, processorLookup(payment)));
  if (!read.ok) return null;
  const reference = read.value.processorReference;
  for (const required of [payment.voidRefundReference, expected])
    if (required !== null && required !== undefined && reference !== required) return false;
  return read.value.status === 'failed' || read.value.status === 'declined';
}
