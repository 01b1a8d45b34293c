import type { D1Handle } from '../../db/prepared.ts';
import type { PaymentMethodRow, PaymentRow, RefundRow } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import { ownerScopeOf } from '../../domain/caller.ts';
import { decideRefund } from '../../domain/decisions.ts';
import { MoneyError, parseAmount } from '../../domain/money.ts';
import { applyTransition } from '../../domain/payment-state.ts';
import { applyRefundTransition, paymentStatusAfterRefunds, type RefundStatus } from '../../domain/refund-state.ts';
import type { RefundFailureReason } from '../../domain/reversals.ts';
import { NO_SETTLEMENT, settlementChange } from '../../domain/settlement.ts';
import { invalidRequest, ServiceError } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import type { RefundOutcome } from '../../connectors/types.ts';
import { defineOperation, type Recorded } from '../operations/operation.ts';
import { usableMethod } from '../payment-methods/store.ts';
import { CreateRefundBody } from './inputs.ts';
import { connectorApiError, connectorFor } from './processor.ts';
import { refusalError } from './refusals.ts';
import { toRefundResource } from './resources.ts';
import {
  findPaymentWithRefunds,
  mutatePayment,
  refundIfAtVersion,
  refundUpdateIfAtVersion,
  type MutateOptions,
} from './store.ts';

/** A payment and its ledger as last written here: a compare-and-set may start from them (store.ts). */
type Known = NonNullable<MutateOptions['known']>;

type Plan = { found: Known; method: PaymentMethodRow } & (
  | { resumed: RefundRow }
  | { resumed?: undefined; amountMinor: number; reason: string | null }
);

interface Tracker {
  payment: PaymentRow;
  method: PaymentMethodRow;
  refund: RefundRow;
  known?: Known;
}

/**
 * Refunds part or all of a payment. The amount is reserved against the refundable balance (approved
 * plus in-flight refunds never exceed the payment) in the same compare-and-set that records the refund,
 * before the processor is asked; a declined or failed refund releases it.
 */
export const createRefund = defineOperation({
  name: 'create_refund',
  body: CreateRefundBody,
  answers: 'created',

  async validate(deps, ctx, { paymentId, body }: { paymentId: string; body: CreateRefundBody }): Promise<Plan> {
    // The ledger comes with the payment: the reservation's first compare-and-set decides from it.
    const found = await findPaymentWithRefunds(deps, ownerScopeOf(ctx.caller, ctx.environment), paymentId);
    if (!found) throw new ServiceError('payment_not_found');
    const { payment } = found;
    const method = await usableMethod(deps, ctx.caller, payment.paymentMethodId, 'refunds');
    // This attempt's own refund, reserved by an earlier try whose answer was never stored: go on with it.
    // The ledger came with the payment, so finding it costs nothing.
    const resumed = found.refunds.find((r) => r.attemptKey === ctx.attempt.key);
    if (resumed) {
      if (resumed.attemptFingerprint !== ctx.attempt.fingerprint) throw new ServiceError('idempotency_key_reused');
      return { found, method, resumed };
    }
    if (body.amount.currency !== payment.currency) {
      throw new ServiceError('unsupported_currency', `Refunds of this payment are in ${payment.currency}.`, {
        details: { currency: payment.currency },
      });
    }
    try {
      const amountMinor = parseAmount(body.amount.value, payment.currency);
      return { found, method, amountMinor, reason: body.reason ?? null };
    } catch (error) {
      if (error instanceof MoneyError)
        throw invalidRequest('Invalid amount.', [{ field: 'amount.value', issue: error.message }]);
      throw error;
    }
  },

  async record(deps, ctx, plan): Promise<Recorded<RefundRow, Tracker>> {
    const { found, method } = plan;
    const tracker: Tracker =
      plan.resumed !== undefined
        ? { payment: found.payment, method, refund: plan.resumed }
        : { method, ...(await reserve(deps, ctx.attempt, found, plan.amountMinor, plan.reason)) };
    const { refund } = tracker;
    const awaitingProcessor =
      refund.processorReference === null && (refund.status === 'created' || refund.status === 'pending');
    return awaitingProcessor ? { pending: tracker } : { done: refund };
  },

  async callProcessor(deps, { payment, method, refund }): Promise<RefundOutcome> {
    if (payment.processorReference === null) {
      throw new ServiceError('invalid_state_transition', 'The payment has no processor reference to refund.');
    }
    const { version, ctx } = await connectorFor(deps, method);
    return version.adapter.refundPayment(ctx, {
      refundId: refund.id,
      processorIdempotencyKey: refund.processorIdempotencyKey,
      attemptNumber: refund.processorAttempts + 1,
      paymentProcessorReference: payment.processorReference,
      amount: { minor: refund.amountMinor, currency: refund.currency },
      ...(refund.reason ? { reason: refund.reason } : {}),
    });
  },

  async applyOutcome(deps, _ctx, { payment, refund, known }, call) {
    const processorAttempts = refund.processorAttempts + 1;
    if (call.ok) {
      const { status, processorReference, processorStatus, failureReason } = call.value;
      const fields = { processorReference, processorStatus, processorAttempts, ...failureOf(status, failureReason) };
      return settleRefund(deps, refund.id, payment.id, status, fields, known, call.value);
    }
    const error = call.error;
    // Timeout: the processor may have refunded; the reservation holds while a retry or reconciliation asks.
    // Unavailable: nothing happened; the refund stays `created`, still reserved, for the retry.
    const target: RefundStatus | null =
      error.kind === 'timeout'
        ? 'pending'
        : error.kind === 'unavailable'
          ? null
          : error.kind === 'declined'
            ? 'declined'
            : 'failed';
    const fields = { processorStatus: error.kind, processorAttempts };
    const saved = await settleRefund(deps, refund.id, payment.id, target, fields, known);
    // A decline is an outcome, answered as the refund; the others are errors (retryable or not).
    if (error.kind === 'declined') return saved;
    throw connectorApiError(error);
  },

  present: toRefundResource,
});

/** Records the refund as `created` with its amount reserved, in the compare-and-set decided by `decideRefund`. */
async function reserve(
  deps: Deps,
  attempt: { key: string; fingerprint: string },
  found: Known,
  amountMinor: number,
  reason: string | null,
): Promise<{ payment: PaymentRow; refund: RefundRow; known: Known }> {
  const id = newId('ref');
  let decidedLedger: RefundRow[] = [];
  const { payment: reserved, result } = await mutatePayment(
    deps,
    found.payment.id,
    (current, ledger) => {
      decidedLedger = ledger;
      const entries = ledger.map((r) => ({ status: r.status, amount: r.amountMinor }));
      const decision = decideRefund(current, entries, amountMinor, Date.now());
      if (!decision.ok) throw refusalError(decision.reason, current, decision.balance);
      const now = Date.now();
      const row: RefundRow = {
        id,
        paymentId: current.id,
        ownerId: current.ownerId,
        amountMinor,
        currency: current.currency,
        status: 'created',
        reason,
        failureReason: null,
        processorReference: null,
        processorIdempotencyKey: id,
        processorAttempts: 0,
        processorStatus: null,
        reconciledAt: null,
        ...NO_SETTLEMENT,
        attemptKey: attempt.key,
        attemptFingerprint: attempt.fingerprint,
        createdAt: now,
        updatedAt: now,
      };
      return {
        // Only the version moves: the reservation is the refund row itself, written in the same batch.
        change: {},
        companions: (readVersion) => [insertIfAtVersion(deps.d1, row, readVersion)],
        result: row,
      };
    },
    { known: found },
  );
  // What this compare-and-set wrote: the settlement's first attempt starts from it.
  return { payment: reserved, refund: result, known: { payment: reserved, refunds: [...decidedLedger, result] } };
}

/** Inserts the refund only inside the compare-and-set that reserved its amount. */
function insertIfAtVersion(d1: D1Handle, row: RefundRow, version: number) {
  return refundIfAtVersion.bind(d1, row, { paymentId: row.paymentId, version });
}

/**
 * Moves a refund (and, when approved, its payment) through the state machines in one compare-and-set:
 * the payment's refund status follows from the ledger including this refund.
 */
export async function settleRefund(
  deps: Deps,
  refundId: string,
  paymentId: string,
  to: RefundStatus | null,
  fields: Partial<
    Pick<RefundRow, 'processorReference' | 'processorStatus' | 'processorAttempts' | 'reconciledAt' | 'failureReason'>
  >,
  known?: Known,
  /** What the processor said it kept of the refund, when its answer said (`settlementChange`). */
  reported: Pick<RefundOutcome, 'settlement' | 'settlementNullReason'> = {},
): Promise<RefundRow> {
  const { result } = await mutatePayment(
    deps,
    paymentId,
    (payment, ledger) => {
      const current = ledger.find((r) => r.id === refundId);
      if (!current) throw new Error('refund vanished');
      const now = Date.now();
      const move = to ? applyRefundTransition(current, to, now) : null;
      const { failureReason, ...rest } = fields;
      const moved: RefundRow = {
        ...current,
        ...rest,
        // A reason belongs to the failure it explains: only with the move into `failed` or `declined`.
        ...(move?.ok ? { status: move.status, updatedAt: move.updatedAt, failureReason: failureReason ?? null } : {}),
      };
      // Only money that moved has a settlement: an approved refund's.
      const next: RefundRow = moved.status === 'approved' ? { ...moved, ...settlementChange(moved, reported) } : moved;
      const nextLedger = ledger
        .map((r) => (r.id === refundId ? next : r))
        .map((r) => ({ status: r.status, amount: r.amountMinor }));
      const outcome = paymentStatusAfterRefunds(payment.amountMinor, nextLedger);
      const paymentMove =
        outcome && next.status === 'approved' && current.status !== 'approved'
          ? applyTransition(payment, outcome, now, { hasRefunds: true, refundOutcome: outcome })
          : null;
      return {
        change: paymentMove?.ok ? { status: paymentMove.status, updatedAt: paymentMove.updatedAt } : {},
        companions: (readVersion) => [
          refundUpdateIfAtVersion(
            deps.d1,
            {
              status: next.status,
              updatedAt: next.updatedAt,
              processorReference: next.processorReference,
              processorStatus: next.processorStatus,
              processorAttempts: next.processorAttempts,
              reconciledAt: next.reconciledAt,
              failureReason: next.failureReason,
              settlementFeeMinor: next.settlementFeeMinor,
              settlementNetMinor: next.settlementNetMinor,
              settlementCurrency: next.settlementCurrency,
              settlementAvailableOn: next.settlementAvailableOn,
              settlementNullReason: next.settlementNullReason,
            },
            { refundId, paymentId, version: readVersion },
          ),
        ],
        result: next,
      };
    },
    { known },
  );
  return result;
}

/** The processor's reason, kept only for a refund that failed or was declined. */
export function failureOf(
  status: RefundStatus,
  reason: RefundFailureReason | undefined,
): Pick<RefundRow, 'failureReason'> | Record<string, never> {
  return (status === 'failed' || status === 'declined') && reason ? { failureReason: reason } : {};
}
