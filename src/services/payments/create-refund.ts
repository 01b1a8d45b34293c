import { and, eq } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { refunds, type PaymentMethodRow, type PaymentRow, type RefundRow } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import { cancellationInProgress } from '../../domain/cancellation.ts';
import { formatAmount, MoneyError, parseAmount } from '../../domain/money.ts';
import { applyTransition, canRefund } from '../../domain/payment-state.ts';
import {
  applyRefundTransition,
  paymentStatusAfterRefunds,
  reserveRefund,
  type RefundStatus,
} from '../../domain/refund-state.ts';
import { ApiError, invalidRequest } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { toIso } from '../../lib/time.ts';
import { usableMethod } from './create-payment.ts';
import type { OperationContext, OperationResult } from './operation.ts';
import { ownerScope } from './operation.ts';
import { callConnector, connectorApiError, connectorFor } from './processor.ts';
import { toRefundResource } from './resources.ts';
import { insertRowIf } from '../../db/conditional-insert.ts';
import { findPaymentWithRefunds, mutatePayment, paymentAtVersion, type MutateOptions } from './store.ts';

export interface CreateRefundBody {
  amount: { value: string; currency: string };
  reason?: string;
}

/**
 * Refunds part or all of a payment. The amount is reserved against the refundable balance (approved
 * plus in-flight refunds never exceed the payment) in the same compare-and-set that records the refund,
 * before the processor is asked; a declined or failed refund releases it.
 */
export async function createRefund(
  deps: Deps,
  ctx: OperationContext,
  paymentId: string,
  body: CreateRefundBody,
): Promise<OperationResult> {
  // The ledger comes with the payment: the reservation's first compare-and-set decides from it.
  const found = await findPaymentWithRefunds(deps, ownerScope(ctx), paymentId);
  if (!found) throw new ApiError('payment_not_found');
  const { payment } = found;
  const method = await usableMethod(deps, ctx, payment.paymentMethodId, 'refunds');

  // This attempt's own refund, reserved by an earlier try whose answer was never stored: go on with it.
  // The ledger came with the payment, so finding it costs nothing.
  let refund: RefundRow | undefined = found.refunds.find((r) => r.attemptKey === ctx.attempt.key);
  if (refund && refund.attemptFingerprint !== ctx.attempt.fingerprint) throw new ApiError('idempotency_key_reused');
  let known: Known | undefined;
  if (!refund) ({ refund, known } = await reserve(deps, ctx, found, body));
  ctx.started();
  return callProcessor(deps, method, payment, refund, known);
}

/** A payment and its ledger as last written here: a compare-and-set may start from them (store.ts). */
type Known = NonNullable<MutateOptions['known']>;

async function reserve(
  deps: Deps,
  ctx: OperationContext,
  found: Known,
  body: CreateRefundBody,
): Promise<{ refund: RefundRow; known: Known }> {
  const { payment } = found;
  if (body.amount.currency !== payment.currency) {
    throw new ApiError('unsupported_currency', `Refunds of this payment are in ${payment.currency}.`, {
      details: { currency: payment.currency },
    });
  }
  let amountMinor: number;
  try {
    amountMinor = parseAmount(body.amount.value, payment.currency);
  } catch (error) {
    if (error instanceof MoneyError)
      throw invalidRequest('Invalid amount.', [{ field: 'amount.value', issue: error.message }]);
    throw error;
  }
  const id = newId('ref');
  let decidedLedger: RefundRow[] = [];
  const { payment: reserved, result } = await mutatePayment(
    deps,
    payment.id,
    (current, ledger) => {
      decidedLedger = ledger;
      if (cancellationInProgress(current, Date.now())) {
        throw new ApiError('invalid_state_transition', 'A cancellation of this payment is in progress.', {
          details: { status: current.status },
        });
      }
      // Refunds only from `approved` and `partially_refunded` (docs/states.md), so a `refunded` payment is a
      // wrong state (409). A refund racing the last one is decided against the reservation instead, while
      // that one is still in flight: 422 refund_exceeds_balance, with the balance it found.
      if (current.chargedBackAt !== null) {
        throw new ApiError(
          'invalid_state_transition',
          'The payment was charged back: the payer’s bank already took the money back.',
          {
            details: { status: current.status, charged_back_at: toIso(current.chargedBackAt) },
          },
        );
      }
      if (!canRefund(current.status)) {
        throw new ApiError('invalid_state_transition', `A ${current.status} payment cannot be refunded.`, {
          details: { status: current.status },
        });
      }
      const fits = reserveRefund(
        current.amountMinor,
        ledger.map((r) => ({ status: r.status, amount: r.amountMinor })),
        amountMinor,
      );
      if (!fits.ok) {
        // Amounts leave the service as decimal strings, never as minor units a client could misread.
        const balance = { value: formatAmount(fits.balance, current.currency), currency: current.currency };
        throw new ApiError('refund_exceeds_balance', undefined, { details: { refundable_balance: balance } });
      }
      const now = Date.now();
      const row: RefundRow = {
        id,
        paymentId: current.id,
        ownerId: current.ownerId,
        amountMinor,
        currency: current.currency,
        status: 'created',
        reason: body.reason ?? null,
        processorReference: null,
        processorIdempotencyKey: id,
        processorAttempts: 0,
        processorStatus: null,
        reconciledAt: null,
        attemptKey: ctx.attempt.key,
        attemptFingerprint: ctx.attempt.fingerprint,
        createdAt: now,
        updatedAt: now,
      };
      return {
        // Only the version moves: the reservation is the refund row itself, written in the same batch.
        change: {},
        companions: (readVersion) => [insertIfAtVersion(deps.db, row, readVersion)],
        result: row,
      };
    },
    { known: found },
  );
  // What this compare-and-set wrote: the settlement's first attempt starts from it.
  return { refund: result, known: { payment: reserved, refunds: [...decidedLedger, result] } };
}

/** Inserts the refund only inside the compare-and-set that reserved its amount. */
function insertIfAtVersion(db: Db, row: RefundRow, version: number) {
  return insertRowIf(db, refunds, row, paymentAtVersion(row.paymentId, version));
}

async function callProcessor(
  deps: Deps,
  method: PaymentMethodRow,
  payment: PaymentRow,
  refund: RefundRow,
  known?: Known,
): Promise<OperationResult> {
  const awaitingProcessor =
    refund.processorReference === null && (refund.status === 'created' || refund.status === 'pending');
  if (!awaitingProcessor) return { status: 201, body: { data: toRefundResource(refund) } };
  if (payment.processorReference === null)
    throw new ApiError('invalid_state_transition', 'The payment has no processor reference to refund.');

  const { version, ctx } = await connectorFor(deps, method);
  const attemptNumber = refund.processorAttempts + 1;
  const result = await callConnector(() =>
    version.adapter.refundPayment(ctx, {
      refundId: refund.id,
      processorIdempotencyKey: refund.processorIdempotencyKey,
      attemptNumber,
      paymentProcessorReference: payment.processorReference!,
      amount: { minor: refund.amountMinor, currency: refund.currency },
      ...(refund.reason ? { reason: refund.reason } : {}),
    }),
  );

  if (result.ok) {
    const saved = await settleRefund(
      deps,
      refund.id,
      payment.id,
      result.value.status,
      {
        processorReference: result.value.processorReference,
        processorStatus: result.value.processorStatus,
        processorAttempts: attemptNumber,
      },
      known,
    );
    return { status: 201, body: { data: toRefundResource(saved) } };
  }
  const error = result.error;
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
  const saved = await settleRefund(
    deps,
    refund.id,
    payment.id,
    target,
    { processorStatus: error.kind, processorAttempts: attemptNumber },
    known,
  );
  if (error.kind === 'declined') return { status: 201, body: { data: toRefundResource(saved) } };
  throw connectorApiError(error);
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
  fields: Partial<Pick<RefundRow, 'processorReference' | 'processorStatus' | 'processorAttempts' | 'reconciledAt'>>,
  known?: Known,
): Promise<RefundRow> {
  const { result } = await mutatePayment(
    deps,
    paymentId,
    (payment, ledger) => {
      const current = ledger.find((r) => r.id === refundId);
      if (!current) throw new Error('refund vanished');
      const now = Date.now();
      const move = to ? applyRefundTransition(current, to, now) : null;
      const next: RefundRow = {
        ...current,
        ...fields,
        ...(move?.ok ? { status: move.status, updatedAt: move.updatedAt } : {}),
      };
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
          deps.db
            .update(refunds)
            .set({
              status: next.status,
              updatedAt: next.updatedAt,
              processorReference: next.processorReference,
              processorStatus: next.processorStatus,
              processorAttempts: next.processorAttempts,
              reconciledAt: next.reconciledAt,
            })
            .where(and(eq(refunds.id, refundId), paymentAtVersion(paymentId, readVersion))),
        ],
        result: next,
      };
    },
    { known },
  );
  return result;
}
