import { and, asc, eq, gte, inArray, isNull, lte, sql } from 'drizzle-orm';
import { payments, refunds, type PaymentMethodRow, type PaymentRow } from '../db/schema/index.ts';
import type { Deps } from '../deps.ts';
import { COLLECTED_STATUSES } from '../domain/payment-state.ts';
import { errorFields, log } from '../lib/log.ts';
import { notAway, ownersAway } from '../services/shards/directory.ts';
import { recordDisputeNews } from '../services/disputes/record-dispute-news.ts';
import { paymentMethodLoader } from '../services/payment-methods/store.ts';
import { callConnector, connectorFor, processorLookup } from '../services/payments/processor.ts';
import { mutate } from '../services/payments/store.ts';
import { rereadApprovedRefund } from './reconcile.ts';

/**
 * Settlements pending at the processor, read again (docs/states.md, "Settlement"): a payment collected (or a
 * refund approved) whose processor had not booked the money yet when it was last read (Stripe: the charge's
 * `balance_transaction` still null) records `settlement_null_reason: pending_at_processor`, and nothing else
 * would ask again. Each run reads, per shard, those not looked at for `SETTLEMENT_CHECK_AFTER_MS`, least
 * recently looked at first, at most `SETTLEMENT_CHECKS_PER_RUN` payments and as many refunds
 * (`SETTLEMENT_CHECKS_PER_OWNER_PER_RUN` of each per owner), and records the
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
/**
 * Payments (and, apart, refunds) of one owner read per run at most: an owner's processor account is shared by its
 * payments. A Stripe read of a payment is 1 to 3 requests (the PaymentIntent, its disputes when it has a charge),
 * of a refund 1, so one owner's 10 reads stay within Stripe's 25 read requests per second in test mode even if made
 * within one second; the other owners' rows are not kept waiting behind one owner's backlog.
 */
export const SETTLEMENT_CHECKS_PER_OWNER_PER_RUN = 5;

export interface SettlementCheckRun {
  payments: number;
  refunds: number;
}

/**
 * The payments and refunds due a settlement read: pending at the processor, younger than the age reads stop at,
 * not looked at for the cadence; least recently looked at first, at most `limit` of each and
 * `SETTLEMENT_CHECKS_PER_OWNER_PER_RUN` of each owner (ranked in SQL, so one owner's backlog cannot fill the run).
 * A LIMIT caps the rows returned, not those read: the bound on `updated_at` (implied by the one on `created_at`,
 * as `updated_at >= created_at`) is what makes the read a range of `payments_status_idx` (`refunds_status_idx`),
 * EXPLAIN QUERY PLAN: `SEARCH payments USING INDEX payments_status_idx (status=? AND updated_at>?)`, instead of
 * every collected payment ever made.
 */
export function dueSettlementReads(
  deps: Deps,
  now: number,
  limit = SETTLEMENT_CHECKS_PER_RUN,
  away: readonly string[] = [],
) {
  const { db } = deps;
  const since = now - SETTLEMENT_CHECK_MAX_AGE_MS;
  const due = (table: typeof payments | typeof refunds) => {
    const lastLook = sql<number>`coalesce(${table.reconciledAt}, ${table.updatedAt})`;
    const where = and(
      eq(table.settlementNullReason, 'pending_at_processor'),
      isNull(table.settlementFeeMinor),
      gte(table.updatedAt, since),
      gte(table.createdAt, since),
      lte(lastLook, now - SETTLEMENT_CHECK_AFTER_MS),
      notAway(table.ownerId, away),
    );
    const rank = sql<number>`row_number() over (partition by ${table.ownerId} order by ${lastLook}, ${table.id})`;
    return { where, lastLook, rank };
  };
  const p = due(payments);
  const rankedPayments = db.$with('ranked_payments').as(
    db
      .select({ id: payments.id, look: sql<number>`${p.lastLook}`.as('look'), nth: p.rank.as('nth') })
      .from(payments)
      .where(
        and(inArray(payments.status, [...COLLECTED_STATUSES]), eq(payments.environment, deps.environment), p.where),
      ),
  );
  const r = due(refunds);
  const rankedRefunds = db.$with('ranked_refunds').as(
    db
      .select({ id: refunds.id, look: sql<number>`${r.lastLook}`.as('look'), nth: r.rank.as('nth') })
      .from(refunds)
      .innerJoin(payments, eq(payments.id, refunds.paymentId))
      .where(and(eq(refunds.status, 'approved'), eq(payments.environment, deps.environment), r.where)),
  );
  return {
    payments: db
      .with(rankedPayments)
      .select({ payment: payments })
      .from(rankedPayments)
      .innerJoin(payments, eq(payments.id, rankedPayments.id))
      .where(lte(rankedPayments.nth, SETTLEMENT_CHECKS_PER_OWNER_PER_RUN))
      .orderBy(asc(rankedPayments.look), asc(rankedPayments.id))
      .limit(limit),
    refunds: db
      .with(rankedRefunds)
      .select({ refund: refunds, payment: payments })
      .from(rankedRefunds)
      .innerJoin(refunds, eq(refunds.id, rankedRefunds.id))
      .innerJoin(payments, eq(payments.id, refunds.paymentId))
      .where(lte(rankedRefunds.nth, SETTLEMENT_CHECKS_PER_OWNER_PER_RUN))
      .orderBy(asc(rankedRefunds.look), asc(rankedRefunds.id))
      .limit(limit),
  };
}

export async function runSettlementChecks(
  deps: Deps,
  now: number,
  limit = SETTLEMENT_CHECKS_PER_RUN,
): Promise<SettlementCheckRun> {
  const reads = dueSettlementReads(deps, now, limit, await ownersAway(deps));
  const duePayments = (await reads.payments).map((row) => row.payment);
  const dueRefunds = await reads.refunds;

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
        await mutate(deps, payment.id, { type: 'refund_looked', refundId: refund.id, at: now }).catch(() => undefined);
      },
    );
  }
  return { payments: duePayments.length, refunds: dueRefunds.length };
}

/**
 * Reads the payment at its processor and applies the answer as any read of it: first the disputes it reports, as
 * trusted news (`recordDisputeNews`, as the notification path does: a lost one is then the chargeback with its
 * dispute and `dispute.*` events), then `processorAccountChange` (the settlement first reported, and whatever else
 * the processor now says), marking it looked at either way.
 */
async function rereadPayment(deps: Deps, payment: PaymentRow, method: PaymentMethodRow | undefined, now: number) {
  if (!method || method.secretsCiphertext === null) return markLooked(deps, payment.id, now);
  const { version, ctx } = await connectorFor(deps, method, payment);
  const read = await callConnector(() => version.adapter.getPayment(ctx, processorLookup(payment)));
  if (read.ok) for (const dispute of read.value.disputes ?? []) await recordDisputeNews(deps, payment.id, dispute);
  await mutate(
    deps,
    payment.id,
    read.ok ? { type: 'processor_news', account: read.value, lookedAt: now } : { type: 'mark_looked', at: now },
    { now },
  );
}

const markLooked = (deps: Deps, paymentId: string, at: number) => mutate(deps, paymentId, { type: 'mark_looked', at });
