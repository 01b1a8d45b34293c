import type { PaymentMethodRow, PaymentRow } from '../../db/schema/index.ts';
import { ownerScopeOf } from '../../domain/caller.ts';
import { cancellationInProgress } from '../../domain/cancellation.ts';
import { cancelAwaitingProcessor, decideCancel } from '../../domain/decisions.ts';
import { nextUpdatedAt } from '../../domain/payment-state.ts';
import type { Deps } from '../../deps.ts';
import { ServiceError } from '../../lib/errors.ts';
import type { PaymentOutcome } from '../../connectors/types.ts';
import { defineOperation, type Recorded } from '../operations/operation.ts';
import { usableMethod } from '../payment-methods/store.ts';
import { connectorApiError, connectorFor } from './processor.ts';
import { refusalError } from './refusals.ts';
import { toPaymentResource } from './resources.ts';
import { findPayment, mutatePayment, processorAccountChange } from './store.ts';

interface Tracker {
  payment: PaymentRow;
  method: PaymentMethodRow;
}

/**
 * Cancels a payment: from `created`, `pending` or `processing`, or a void of an `approved` payment no
 * refund was recorded for (domain/decisions.ts). The processor is asked first; our record changes only on
 * its yes. A yes that completes later (`cancellation: 'requested'`, a POS payment on the terminal) is
 * recorded as `cancel_accepted_at` and answered 202 with the payment as it still is; the processor's
 * notification or the service's read completes it (docs/states.md, "Cancel at the terminal").
 */
export const cancelPayment = defineOperation({
  name: 'cancel_payment',
  body: null,
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
    const { payment: current, result: step } = await mutatePayment<'claimed' | 'resumed' | 'done'>(
      deps,
      payment.id,
      (latest, refunds) => {
        const now = Date.now();
        const own = latest.cancelAttemptKey === ctx.attempt.key;
        // This attempt's own cancellation, from an earlier try whose answer was never stored: the payment it
        // canceled (or whose cancel the processor accepted) is the answer; a claim it still holds, it goes on with.
        if (own && (latest.status === 'canceled' || cancelAwaitingProcessor(latest))) return { none: 'done' };
        if (cancellationInProgress(latest, now) && own) return { none: 'resumed' };
        // Its cancel was accepted, then the customer paid first: never turned into a void by a retry.
        if (own && latest.cancelAcceptedAt !== null) throw refusalError('not_cancelable', latest);
        const decision = decideCancel(latest, refunds.length > 0, now);
        if (!decision.ok) throw refusalError(decision.reason, latest);
        // Another key's cancel the processor accepted and has not completed: the same answer, nothing asked again.
        if (decision.alreadyRequested) return { none: 'done' };
        return { change: { cancelRequestedAt: now, cancelAttemptKey: ctx.attempt.key }, result: 'claimed' };
      },
    );
    return step === 'done' ? { done: current } : { pending: { payment: current, method } };
  },

  async callProcessor(deps, { payment, method }): Promise<PaymentOutcome> {
    const { version, ctx } = await connectorFor(deps, method);
    return version.adapter.cancelPayment(ctx, {
      paymentId: payment.id,
      processorReference: payment.processorReference,
      processorIdempotencyKey: `${payment.processorIdempotencyKey}:cancel`,
      amount: { minor: payment.amountMinor, currency: payment.currency },
      // decideCancel admitted only created, pending, processing or approved; `approved` asks for a void.
      currentStatus: payment.status === 'approved' || payment.status === 'processing' ? payment.status : 'pending',
    });
  },

  async applyOutcome(deps, ctx, { payment }, call) {
    if (!call.ok) {
      // The processor said no (or nothing): release the claim so refunds are possible again.
      await mutatePayment(deps, payment.id, () => ({
        change: { cancelRequestedAt: null, cancelAttemptKey: null },
        result: null,
      }));
      throw connectorApiError(call.error);
    }
    const outcome = call.value;
    if (outcome.cancellation === 'requested') return cancelRequested(deps, ctx.attempt.key, payment.id, outcome);
    const { payment: saved } = await mutatePayment(deps, payment.id, (latest, refunds) => {
      // The processor's answer goes through the same rules as its notifications (a chargeback it reports
      // instead of the cancel is recorded as one).
      const told = {
        status: outcome.status,
        ...(outcome.voidRefundReference ? { voidRefundReference: outcome.voidRefundReference } : {}),
      };
      const change = processorAccountChange(latest, told, Date.now(), {
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
    // Something else settled the payment while the processor was asked (e.g. a refund or a final notification).
    if (saved.status !== 'canceled') throw refusalError('not_cancelable', saved);
    return saved;
  },

  present: (payment) => toPaymentResource(payment),
  // A cancel the processor accepted but has not completed: the payment is still open.
  accepted: (payment) => payment.status !== 'canceled',
});

/**
 * The processor accepted the cancel and completes it later: the claim is released (the payment stays as it
 * is, and is not refundable while open anyway), `cancel_accepted_at` is set and the attempt's key kept on the
 * row, so a retry answers the same. The processor's account of the payment goes through the usual rules
 * (it may report the payment settled meanwhile). Answered only while the payment is still open; canceled
 * already is a plain success, anything else (the customer paid first) the usual refusal.
 */
async function cancelRequested(deps: Deps, attemptKey: string, paymentId: string, outcome: PaymentOutcome) {
  const { payment: saved } = await mutatePayment(deps, paymentId, (latest, refunds) => {
    const now = Date.now();
    const account = processorAccountChange(latest, outcome, now, { hasRefunds: refunds.length > 0 });
    const open = cancelAwaitingProcessor({ status: account?.status ?? latest.status, cancelAcceptedAt: now });
    return {
      change: {
        ...account,
        processorStatus: outcome.processorStatus,
        cancelRequestedAt: null,
        cancelAttemptKey: attemptKey,
        ...(open && latest.cancelAcceptedAt === null
          ? { cancelAcceptedAt: now, updatedAt: account?.updatedAt ?? nextUpdatedAt(latest.updatedAt, now) }
          : {}),
      },
      result: null,
    };
  });
  if (saved.status !== 'canceled' && !cancelAwaitingProcessor(saved)) throw refusalError('not_cancelable', saved);
  return saved;
}
