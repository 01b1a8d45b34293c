import type { PaymentMethodRow, PaymentRow } from '../../db/schema/index.ts';
import { ownerScopeOf } from '../../domain/caller.ts';
import { ServiceError } from '../../lib/errors.ts';
import type { PaymentOutcome } from '../../connectors/types.ts';
import { defineOperation, type Recorded } from '../operations/operation.ts';
import { usableMethod } from '../payment-methods/store.ts';
import { connectorApiError, connectorFor } from './processor.ts';
import { refusalError } from './refusals.ts';
import { toPaymentResource } from './resources.ts';
import { findPayment, mutate } from './store.ts';

interface Tracker {
  payment: PaymentRow;
  method: PaymentMethodRow;
}

/**
 * Cancels a payment: from `created`, `pending` or `processing`, or a void of an `approved` payment no refund was
 * recorded for (domain/ledger/cancels.ts). The processor is asked first; our record changes only on its yes. A yes that
 * completes later (`cancellation: 'requested'`, a POS payment on the terminal) is recorded as `cancel_requested_at`
 * and answered 202 with the payment as it still is; the processor's notification or the service's read completes it
 * (docs/states.md, "Cancel at the terminal").
 */
export const cancelPayment = defineOperation({
  name: 'cancel_payment',
  answers: 'updated',

  async validate(deps, ctx, { paymentId }: { paymentId: string }): Promise<Tracker> {
    const payment = await findPayment(deps, ownerScopeOf(ctx.caller, ctx.environment), paymentId);
    if (!payment) throw new ServiceError('payment_not_found');
    const method = await usableMethod(deps, ctx.caller, payment.paymentMethodId, 'cancellations');
    return { payment, method };
  },

  // Claims the payment for the cancellation before the processor is asked: from then on no refund can be
  // reserved (a refund sent to the processor on a voided charge would fail or, worse, pay out twice).
  async record(deps, ctx, { payment, method }): Promise<Recorded<PaymentRow, Tracker>> {
    const { payment: current, outcome } = await mutate(deps, payment.id, {
      type: 'claim_cancel',
      attemptKey: ctx.attempt.key,
    });
    return outcome === 'done' ? { done: current } : { pending: { payment: current, method } };
  },

  async callProcessor(deps, { payment, method }): Promise<PaymentOutcome> {
    const { version, ctx } = await connectorFor(deps, method, payment);
    return version.adapter.cancelPayment(ctx, {
      paymentId: payment.id,
      processorReference: payment.processorReference,
      ...(payment.processorPaymentId !== null ? { processorPaymentId: payment.processorPaymentId } : {}),
      processorIdempotencyKey: `${payment.processorIdempotencyKey}:cancel`,
      amount: { minor: payment.amountMinor, currency: payment.currency },
      // The claim admitted only created, pending, processing or approved; `approved` asks for a void.
      currentStatus: payment.status === 'approved' || payment.status === 'processing' ? payment.status : 'pending',
    });
  },

  async applyOutcome(deps, ctx, { payment }, call) {
    if (!call.ok) {
      // The processor said no (or nothing): release the claim so refunds are possible again.
      await mutate(deps, payment.id, { type: 'release_cancel' });
      throw connectorApiError(call.error);
    }
    const outcome = call.value;
    const { payment: saved, outcome: result } = await mutate(deps, payment.id, {
      type: 'cancel_answered',
      attemptKey: ctx.attempt.key,
      account: outcome,
      processorStatus: outcome.processorStatus,
      requested: outcome.cancellation === 'requested',
      voidAsked: payment.status === 'approved',
    });
    // Something else settled the payment while the processor was asked (a refund, a final notification, the
    // customer paid first).
    if (result === 'not_cancelable') throw refusalError('not_cancelable', saved);
    return saved;
  },

  present: (payment) => toPaymentResource(payment),
  // A cancel the processor accepted but has not completed: the payment is still open.
  accepted: (payment) => payment.status !== 'canceled',
});
