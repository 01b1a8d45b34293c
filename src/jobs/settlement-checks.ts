import { and, asc, eq, gte, inArray, isNull, lte, sql } from 'drizzle-orm';
import { payments, refunds, type PaymentMethodRow, type PaymentRow } from '../db/schema/index.ts';
import type { Deps } from '../deps.ts';
import { COLLECTED_STATUSES } from '../domain/payment-state.ts';
import { errorFields, log } from '../lib/log.ts';
import { settleRefund } from '../services/payments/create-refund.ts';
import { paymentMethodLoader } from '../services/payment-methods/store.ts';
import { callConnector, connectorFor, processorLookup } from '../services/payments/processor.ts';
import { mutatePayment, processorAccountChange } from '../services/payments/store.ts';
import { rereadApprovedRefund } from './reconcile.ts';

/**
 * Settlements pending at the processor, read again (docs/states.md, "Settlement"): a payment collected (or a
 * refund approved) whose processor had not booked the money yet when it was last read (Stripe: the charge's
 * `balance_transaction` still null) records `settlement_null_reason: pending_at_processor`, and nothing else
 * would ask again. Each run reads, per shard, those not looked at for `SETTLEMENT_CHECK_AFTER_MS`, least
 * recently looked at first, at most `SETTLEMENT_CHECKS_PER_RUN` payments and as many refunds, and records the
 * settlement once the processor reports it. After `SETTLEMENT_CHECK_MAX_AGE_MS` from the payment's (refund's)
 * creation it gives up: the reason stays `pending_at_processor`, and the row is not read again.
 */

/** How long after the last look a pending settlement is read again: at most 24 reads a day of each row. */
export const SETTLEMENT_CHECK_AFTER_MS = 60 * 60 * 1000;
/**
 * Reads stop this long after the payment (refund) was created. Stripe books a card charge when it succeeds; for
 * debit methods it booked "only ... when a payment succeeds ... typically a few days after a payment is created"
 * (https://support.stripe.com/questions/changes-to-balance-transaction-behavior-for-debit-payment-methods), so
 * a week outlasts the slowest booking it describes; 168 reads of a row at most.
 */
export const SETTLEMENT_CHECK_MAX_AGE_MS = 7 * 24 * 60 * 60 * 1000;
/** Payments (and, apart, refunds) read per run and shard at most; the rest wait for the next run. */
export const SETTLEMENT_CHECKS_PER_RUN = 50;

export interface SettlementCheckRun {
  payments: number;
  refunds: number;
}

export async function runSettlementChecks(
  deps: Deps,
  now: number,
  limit = SETTLEMENT_CHECKS_PER_RUN,
): Promise<SettlementCheckRun> {
  const { db } = deps;
  // Pending at the processor, younger than the age reads stop at, and not looked at for the cadence.
  const due = (table: typeof payments | typeof refunds) => {
    const lastLook = sql`coalesce(${table.reconciledAt}, ${table.updatedAt})`;
    const where = and(
      eq(table.settlementNullReason, 'pending_at_processor'),
      isNull(table.settlementFeeMinor),
      gte(table.createdAt, now - SETTLEMENT_CHECK_MAX_AGE_MS),
      lte(lastLook, now - SETTLEMENT_CHECK_AFTER_MS),
    );
    return { where, order: asc(lastLook) };
  };
  const paymentsDue = due(payments);
  const duePayments = await db
    .select()
    .from(payments)
    .where(
      and(
        inArray(payments.status, [...COLLECTED_STATUSES]),
        eq(payments.environment, deps.environment),
        paymentsDue.where,
      ),
    )
    .orderBy(paymentsDue.order)
    .limit(limit);
  const refundsDue = due(refunds);
  const dueRefunds = await db
    .select({ refund: refunds, payment: payments })
    .from(refunds)
    .innerJoin(payments, eq(payments.id, refunds.paymentId))
    .where(and(eq(refunds.status, 'approved'), eq(payments.environment, deps.environment), refundsDue.where))
    .orderBy(refundsDue.order)
    .limit(limit);

  const methodOf = paymentMethodLoader(deps);
  for (const payment of duePayments) {
    await rereadPayment(deps, payment, await methodOf(payment.paymentMethodId), now).catch(async (error) => {
      log('error', 'settlement_check_failed', { payment_id: payment.id, ...errorFields(error) });
      // Marked looked at anyway, so one broken row cannot take every run's place in the limit.
      await markLooked(deps, payment.id, now).catch(() => undefined);
    });
  }
  for (const { refund, payment } of dueRefunds) {
    // The same read as reconciliation's of an approved refund: it may also find the refund failed since.
    await rereadApprovedRefund(deps, refund, payment, await methodOf(payment.paymentMethodId), now).catch(
      async (error) => {
        log('error', 'settlement_check_failed', { refund_id: refund.id, ...errorFields(error) });
        await settleRefund(deps, refund.id, payment.id, null, { reconciledAt: now }).catch(() => undefined);
      },
    );
  }
  return { payments: duePayments.length, refunds: dueRefunds.length };
}

/**
 * Reads the payment at its processor and applies the answer as any read of it (`processorAccountChange`: the
 * settlement first reported, and whatever else the processor now says), marking it looked at either way.
 */
async function rereadPayment(deps: Deps, payment: PaymentRow, method: PaymentMethodRow | undefined, now: number) {
  if (!method || method.secretsCiphertext === null) return markLooked(deps, payment.id, now);
  const { version, ctx } = await connectorFor(deps, method);
  const read = await callConnector(() => version.adapter.getPayment(ctx, processorLookup(payment)));
  await mutatePayment(deps, payment.id, (current, ledger) => {
    const change = read.ok ? processorAccountChange(current, read.value, now, { hasRefunds: ledger.length > 0 }) : null;
    return { change: { ...change, reconciledAt: now }, result: null };
  });
}

const markLooked = (deps: Deps, paymentId: string, at: number) =>
  mutatePayment(deps, paymentId, () => ({ change: { reconciledAt: at }, result: null }));
