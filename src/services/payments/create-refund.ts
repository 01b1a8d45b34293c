import type { PaymentMethodRow, PaymentRow, RefundRow } from '../../db/schema/index.ts';
import { ownerScopeOf } from '../../domain/caller.ts';
import type { LedgerState } from '../../domain/ledger/index.ts';
import { MoneyError, parseAmount } from '../../domain/money.ts';
import { invalidRequest, ServiceError } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import type { RefundOutcome } from '../../connectors/types.ts';
import { defineOperation, type Recorded } from '../operations/operation.ts';
import { usableMethod } from '../payment-methods/store.ts';
import type { CreateRefundBody } from './inputs.ts';
import { connectorApiError, connectorFor } from './processor.ts';
import { toRefundResource } from './resources.ts';
import { findPaymentWithAttempt, mutate } from './store.ts';

type Plan = { payment: PaymentRow; method: PaymentMethodRow } & (
  | { resumed: RefundRow }
  | { resumed?: undefined; amountMinor: number; reason: string | null }
);

interface Tracker {
  payment: PaymentRow;
  method: PaymentMethodRow;
  refund: RefundRow;
  /** The state as the reservation wrote it: the outcome's compare-and-set starts from it. */
  known?: LedgerState;
}

/**
 * Refunds part or all of a payment. The amount is reserved against the refundable balance (approved plus in-flight
 * refunds never exceed the payment: domain/ledger/refunds.ts) in the same compare-and-set that records the refund,
 * before the processor is asked; a declined or failed refund releases it.
 */
export const createRefund = defineOperation({
  name: 'create_refund',
  answers: 'created',

  async validate(deps, ctx, { paymentId, body }: { paymentId: string; body: CreateRefundBody }): Promise<Plan> {
    // The payment with this attempt's own refund, if an earlier try reserved it: two rows, whatever the history.
    const found = await findPaymentWithAttempt(
      deps,
      ownerScopeOf(ctx.caller, ctx.environment),
      paymentId,
      ctx.attempt.key,
    );
    if (!found) throw new ServiceError('payment_not_found');
    const { payment, attempt } = found;
    const method = await usableMethod(deps, ctx.caller, payment.paymentMethodId, 'refunds');
    // This attempt's own refund, reserved by an earlier try whose answer was never stored: go on with it.
    if (attempt) {
      if (attempt.attemptFingerprint !== ctx.attempt.fingerprint) throw new ServiceError('idempotency_key_reused');
      return { payment, method, resumed: attempt };
    }
    if (body.amount.currency !== payment.currency) {
      throw new ServiceError('unsupported_currency', `Refunds of this payment are in ${payment.currency}.`, {
        details: { currency: payment.currency },
      });
    }
    try {
      const amountMinor = parseAmount(body.amount.value, payment.currency);
      return { payment, method, amountMinor, reason: body.reason ?? null };
    } catch (error) {
      if (error instanceof MoneyError)
        throw invalidRequest('Invalid amount.', [{ field: 'amount.value', issue: error.message }]);
      throw error;
    }
  },

  async record(deps, ctx, plan): Promise<Recorded<RefundRow, Tracker>> {
    const { method } = plan;
    let tracker: Tracker;
    if (plan.resumed !== undefined) tracker = { payment: plan.payment, method, refund: plan.resumed };
    else {
      const { payment, outcome: refund } = await mutate(
        deps,
        plan.payment.id,
        {
          type: 'reserve_refund',
          refund: {
            id: newId('ref'),
            amountMinor: plan.amountMinor,
            reason: plan.reason,
            attemptKey: ctx.attempt.key,
            attemptFingerprint: ctx.attempt.fingerprint,
          },
        },
        { known: { payment: plan.payment } },
      );
      tracker = { payment, method, refund, known: { payment, refund } };
    }
    const { refund } = tracker;
    const awaitingProcessor =
      refund.processorReference === null && (refund.status === 'created' || refund.status === 'pending');
    return awaitingProcessor ? { pending: tracker } : { done: refund };
  },

  async callProcessor(deps, { payment, method, refund }): Promise<RefundOutcome> {
    if (payment.processorReference === null) {
      throw new ServiceError('invalid_state_transition', 'The payment has no processor reference to refund.');
    }
    const { version, ctx } = await connectorFor(deps, method, payment);
    return version.adapter.refundPayment(ctx, {
      refundId: refund.id,
      processorIdempotencyKey: refund.processorIdempotencyKey,
      attemptNumber: refund.processorAttempts + 1,
      paymentProcessorReference: payment.processorReference,
      ...(payment.processorPaymentId !== null ? { paymentProcessorPaymentId: payment.processorPaymentId } : {}),
      amount: { minor: refund.amountMinor, currency: refund.currency },
      ...(refund.reason ? { reason: refund.reason } : {}),
    });
  },

  async applyOutcome(deps, _ctx, { payment, refund, known }, call) {
    const processorAttempts = refund.processorAttempts + 1;
    const options = known ? { known } : {};
    if (call.ok) {
      const answer = call.value;
      const { outcome } = await mutate(
        deps,
        payment.id,
        {
          type: 'refund_answered',
          refundId: refund.id,
          status: answer.status,
          fields: {
            processorReference: answer.processorReference,
            processorStatus: answer.processorStatus,
            processorAttempts,
          },
          ...(answer.failureReason ? { failureReason: answer.failureReason } : {}),
          reported: answer,
        },
        options,
      );
      return outcome;
    }
    const error = call.error;
    const { outcome: saved } = await mutate(
      deps,
      payment.id,
      { type: 'refund_failed', refundId: refund.id, error: error.kind, processorAttempts },
      options,
    );
    // A decline is an outcome, answered as the refund; the others are errors (retryable or not).
    if (error.kind === 'declined') return saved;
    throw connectorApiError(error);
  },

  present: toRefundResource,
});
