import { createDb } from '../../db/client.ts';
import type { Env } from '../../env.ts';
import { applyTransition, canCancel } from '../../domain/payment-state.ts';
import { ApiError } from '../../lib/errors.ts';
import { usableMethod } from './create-payment.ts';
import type { OperationContext, OperationResult } from './operation.ts';
import { ownerScope } from './operation.ts';
import { callConnector, connectorApiError, connectorFor } from './processor.ts';
import { toPaymentResource } from './resources.ts';
import { findPayment, loadPaymentWithRefunds, mutatePayment } from './store.ts';

/**
 * Cancels a payment: from `created`, `pending` or `processing`, or a void of an `approved` payment no
 * refund was recorded for. The processor is asked first; our record changes only on its yes.
 */
export async function cancelPayment(env: Env, ctx: OperationContext, paymentId: string): Promise<OperationResult> {
  const db = createDb(env);
  const payment = await findPayment(db, ownerScope(ctx), paymentId);
  if (!payment) throw new ApiError('payment_not_found');
  const method = await usableMethod(db, ctx, payment.paymentMethodId, 'cancellations');
  const ledger = await loadPaymentWithRefunds(db, payment.id);
  if (!ledger || !canCancel(ledger.payment.status, ledger.refunds.length > 0)) {
    throw new ApiError('invalid_state_transition', `A ${ledger?.payment.status ?? payment.status} payment cannot be canceled.`, {
      details: { status: ledger?.payment.status ?? payment.status },
    });
  }
  await ctx.remember(payment.id);

  const current = ledger.payment;
  const { version, ctx: connectorCtx } = await connectorFor(env, method);
  const result = await callConnector(() =>
    version.adapter.cancelPayment(connectorCtx, {
      paymentId: current.id,
      processorReference: current.processorReference,
      processorIdempotencyKey: `${current.processorIdempotencyKey}:cancel`,
      amount: { minor: current.amountMinor, currency: current.currency },
      // canCancel admitted only created, pending, processing or approved; `approved` asks for a void.
      currentStatus: current.status === 'approved' || current.status === 'processing' ? current.status : 'pending',
    }),
  );
  if (!result.ok) throw connectorApiError(result.error);
  const outcome = result.value;

  const { payment: saved, result: moved } = await mutatePayment(env, payment.id, (latest, refunds) => {
    const move = applyTransition(latest, outcome.status, Date.now(), { hasRefunds: refunds.length > 0 });
    if (!move.ok) return { none: false };
    return { change: { status: move.status, updatedAt: move.updatedAt, processorStatus: outcome.processorStatus }, result: true };
  });
  if (!moved && saved.status !== 'canceled') {
    // Something else settled the payment while the processor was asked (e.g. a refund or a final notification).
    throw new ApiError('invalid_state_transition', `The payment became ${saved.status} while it was being canceled.`, { details: { status: saved.status } });
  }
  return { status: 200, body: { data: toPaymentResource(saved) } };
}
