import type { Deps } from '../../deps.ts';
import { cancellationInProgress } from '../../domain/cancellation.ts';
import { canCancel } from '../../domain/payment-state.ts';
import { ApiError } from '../../lib/errors.ts';
import { toIso } from '../../lib/time.ts';
import { usableMethod } from './create-payment.ts';
import type { OperationContext, OperationResult } from './operation.ts';
import { ownerScope } from './operation.ts';
import { callConnector, connectorApiError, connectorFor } from './processor.ts';
import { toPaymentResource } from './resources.ts';
import { findPayment, mutatePayment, processorAccountChange } from './store.ts';

/**
 * Cancels a payment: from `created`, `pending` or `processing`, or a void of an `approved` payment no
 * refund was recorded for. The processor is asked first; our record changes only on its yes.
 */
export async function cancelPayment(deps: Deps, ctx: OperationContext, paymentId: string): Promise<OperationResult> {
  const payment = await findPayment(deps, ownerScope(ctx), paymentId);
  if (!payment) throw new ApiError('payment_not_found');
  const method = await usableMethod(deps, ctx, payment.paymentMethodId, 'cancellations');
  // Claim the payment for the cancellation before asking the processor: from then on no refund can be
  // reserved (a refund sent to the processor on a voided charge would fail or, worse, pay out twice).
  const { payment: current, result: step } = await mutatePayment<'claimed' | 'resumed' | 'done'>(
    deps,
    payment.id,
    (latest, refunds) => {
      const now = Date.now();
      // This attempt's own cancellation, from an earlier try whose answer was never stored: the payment it
      // canceled is the answer; a claim it still holds, it goes on with.
      if (latest.cancelAttemptKey === ctx.attempt.key && latest.status === 'canceled') return { none: 'done' };
      if (cancellationInProgress(latest, now) && latest.cancelAttemptKey === ctx.attempt.key)
        return { none: 'resumed' };
      if (latest.status === 'pending' && latest.requiredAction === 'check_terminal') {
        // The processor will neither settle nor cancel it: only someone at the terminal can. Asking it to
        // cancel would fail every time, so it is not asked.
        throw new ApiError(
          'invalid_state_transition',
          'The payment awaits a check at the terminal: its outcome is settled there, not by a cancel.',
          {
            details: { status: latest.status, action: latest.requiredAction },
          },
        );
      }
      if (latest.chargedBackAt !== null) {
        throw new ApiError(
          'invalid_state_transition',
          'The payment was charged back: the payer’s bank took the money back, nothing is left to cancel.',
          {
            details: { status: latest.status, charged_back_at: toIso(latest.chargedBackAt) },
          },
        );
      }
      if (!canCancel(latest.status, refunds.length > 0) || cancellationInProgress(latest, now)) {
        throw new ApiError(
          'invalid_state_transition',
          `A ${latest.status} payment cannot be canceled${cancellationInProgress(latest, now) ? ' while another cancellation is in progress' : ''}.`,
          {
            details: { status: latest.status },
          },
        );
      }
      return { change: { cancelRequestedAt: now, cancelAttemptKey: ctx.attempt.key }, result: 'claimed' };
    },
  );
  ctx.started();
  if (step === 'done') return { status: 200, body: { data: toPaymentResource(current) } };

  const { version, ctx: connectorCtx } = await connectorFor(deps, method);
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
  if (!result.ok) {
    // The processor said no (or nothing): release the claim so refunds are possible again.
    await mutatePayment(deps, payment.id, () => ({
      change: { cancelRequestedAt: null, cancelAttemptKey: null },
      result: null,
    }));
    throw connectorApiError(result.error);
  }
  const outcome = result.value;

  const { payment: saved } = await mutatePayment(deps, payment.id, (latest, refunds) => {
    // The processor's answer goes through the same rules as its notifications (a chargeback it reports
    // instead of the cancel is recorded as one).
    const change = processorAccountChange(latest, { status: outcome.status }, Date.now(), {
      hasRefunds: refunds.length > 0,
    });
    if (!change) return { change: { cancelRequestedAt: null, cancelAttemptKey: null }, result: null };
    // A payment this attempt canceled keeps its key: a retry after a crash answers it instead of a 409.
    const canceled = change.status === 'canceled';
    return {
      change: {
        ...change,
        processorStatus: outcome.processorStatus,
        cancelRequestedAt: null,
        cancelAttemptKey: canceled ? ctx.attempt.key : null,
      },
      result: null,
    };
  });
  if (saved.status !== 'canceled') {
    // Something else settled the payment while the processor was asked (e.g. a refund or a final notification).
    throw new ApiError('invalid_state_transition', `The payment became ${saved.status} while it was being canceled.`, {
      details: { status: saved.status },
    });
  }
  return { status: 200, body: { data: toPaymentResource(saved) } };
}
