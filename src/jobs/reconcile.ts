import { and, asc, eq, gte, inArray, isNull, lte, or, sql } from 'drizzle-orm';
import { CONNECTOR_VERSIONS } from '../connectors/registry.ts';
import { payments, refunds, type PaymentMethodRow } from '../db/schema/index.ts';
import type { Deps } from '../deps.ts';
import { IDEMPOTENCY_RETENTION_MS } from '../domain/idempotency.ts';
import { errorFields, log } from '../lib/log.ts';
import { notAway, ownersAway } from '../services/shards/directory.ts';
import type { ConnectorContext, ConnectorVersion, PaymentAction } from '../connectors/types.ts';
import { paymentMethodLoader } from '../services/payment-methods/store.ts';
import type { ReportedSettlement } from '../domain/ledger/index.ts';
import {
  callConnector,
  connectorFor,
  pickSettlement,
  processorLookup,
  readVoidRefund,
} from '../services/payments/processor.ts';
import { mutate } from '../services/payments/store.ts';

/** A payment or refund untouched this long while not final is asked about at the processor. */
export const RECONCILE_AFTER_MS = 10 * 60 * 1000;
/**
 * A payment waiting on a required action (`check_terminal`) will not settle by itself: it is asked about
 * this rarely, in case the action was taken and its notification lost, instead of on every run.
 */
export const RECONCILE_ACTION_REQUIRED_AFTER_MS = 6 * 60 * 60 * 1000;
/**
 * An approved refund is read again this long after it was last looked at, for as long as its connector
 * version's `refundReversalWindowMs` says it may still fail: a reversal whose notification was lost is found
 * within this delay. Rarer than `RECONCILE_AFTER_MS` because nearly every approved refund stays approved,
 * and Stripe's window is 30 days (about 120 reads of each refund at this pace).
 */
export const RECONCILE_APPROVED_REFUND_AFTER_MS = 6 * 60 * 60 * 1000;

/**
 * The longest reversal window of any connector version (`refundReversalWindowMs`), or none. The shard's query takes
 * approved refunds younger than it; each refund's own method decides in the run whether its processor documents a
 * late failure that long (the methods live in the control database, so the shard's SQL cannot join them).
 */
const LONGEST_REVERSAL_WINDOW_MS = Math.max(0, ...CONNECTOR_VERSIONS.map((v) => v.refundReversalWindowMs ?? 0));

const reversalWindowOf = (method: PaymentMethodRow | undefined) =>
  CONNECTOR_VERSIONS.find((v) => v.id === method?.connectorVersionId)?.refundReversalWindowMs;

/**
 * Nothing stays unknown forever: payments and refunds left `created`, `pending` or `processing` (a timeout,
 * a lost notification, a crash between the processor call and our write) are looked up at the processor
 * and its answer goes through the state machines. An operation the processor never saw and that can no
 * longer be retried with its idempotency key (older than the key's retention) fails, releasing any
 * refund reservation.
 */
export async function reconcile(
  deps: Deps,
  now: number,
  limit = 50,
): Promise<{ payments: number; refunds: number; approvedRefunds: number; voidedPayments: number }> {
  const { db } = deps;
  const away = await ownersAway(deps);
  const staleBefore = now - RECONCILE_AFTER_MS;
  const lastLook = (table: typeof payments | typeof refunds) =>
    sql`coalesce(${table.reconciledAt}, ${table.updatedAt})`;
  const stalePayments = await db
    .select()
    .from(payments)
    .where(
      and(
        inArray(payments.status, ['created', 'pending', 'processing']),
        eq(payments.environment, deps.environment),
        notAway(payments.ownerId, away),
        lte(lastLook(payments), staleBefore),
        or(isNull(payments.requiredAction), lte(lastLook(payments), now - RECONCILE_ACTION_REQUIRED_AFTER_MS)),
      ),
    )
    .limit(limit);
  const staleRefunds = await db
    .select({ refund: refunds, payment: payments })
    .from(refunds)
    .innerJoin(payments, eq(payments.id, refunds.paymentId))
    .where(
      and(
        inArray(refunds.status, ['created', 'pending', 'processing']),
        eq(payments.environment, deps.environment),
        notAway(payments.ownerId, away),
        lte(lastLook(refunds), staleBefore),
      ),
    )
    .limit(limit);
  const approvedRefunds =
    LONGEST_REVERSAL_WINDOW_MS > 0
      ? await db
          .select({ refund: refunds, payment: payments })
          .from(refunds)
          .innerJoin(payments, eq(payments.id, refunds.paymentId))
          .where(
            and(
              eq(refunds.status, 'approved'),
              eq(payments.environment, deps.environment),
              notAway(payments.ownerId, away),
              lte(lastLook(refunds), now - RECONCILE_APPROVED_REFUND_AFTER_MS),
              // An approved refund's `updated_at` is the moment of its approval: nothing moves it until a reversal.
              gte(refunds.updatedAt, now - LONGEST_REVERSAL_WINDOW_MS),
            ),
          )
          // Least recently looked at first, so a limit smaller than the window's refunds still reaches each in turn.
          .orderBy(asc(lastLook(refunds)))
          .limit(limit)
      : [];

  // Voided payments whose void's refund may still fail (the same window and pace as approved refunds): a void
  // reversed at the processor whose notification was lost is found so.
  const voidedPayments = LONGEST_REVERSAL_WINDOW_MS > 0 ? await voidedPaymentsDue(deps, now, limit, away) : [];

  const methodOf = paymentMethodLoader(deps);

  for (const payment of stalePayments) {
    await reconcilePayment(deps, payment, await methodOf(payment.paymentMethodId), now).catch(async (error) => {
      log('error', 'reconcile_payment_failed', { payment_id: payment.id, ...errorFields(error) });
      // Mark it looked at anyway, so one broken row cannot take every run's place in the limit.
      await mutate(deps, payment.id, { type: 'mark_looked', at: now }).catch(() => undefined);
    });
  }
  for (const { refund, payment } of staleRefunds) {
    await reconcileRefund(deps, refund, payment, await methodOf(payment.paymentMethodId), now).catch(async (error) => {
      log('error', 'reconcile_refund_failed', { refund_id: refund.id, ...errorFields(error) });
      await refundLooked(deps, refund, now).catch(() => undefined);
    });
  }
  for (const { refund, payment } of approvedRefunds) {
    const method = await methodOf(payment.paymentMethodId);
    const window = reversalWindowOf(method);
    if (window === undefined || refund.updatedAt < now - window) {
      // Its processor documents no failure this late (Mercado Pago: none at all): not looked at again before the
      // longest window has passed, when the query no longer takes it, so it never holds a place in the limit.
      await refundLooked(deps, refund, refund.updatedAt + LONGEST_REVERSAL_WINDOW_MS).catch(() => undefined);
      continue;
    }
    await rereadApprovedRefund(deps, refund, payment, method, now).catch(async (error) => {
      log('error', 'reconcile_approved_refund_failed', { refund_id: refund.id, ...errorFields(error) });
      await refundLooked(deps, refund, now).catch(() => undefined);
    });
  }
  for (const payment of voidedPayments) {
    await rereadVoidedPayment(deps, payment, await methodOf(payment.paymentMethodId), now).catch(async (error) => {
      log('error', 'reconcile_voided_payment_failed', { payment_id: payment.id, ...errorFields(error) });
      await markVoidLooked(deps, payment.id, now).catch(() => undefined);
    });
  }
  return {
    payments: stalePayments.length,
    refunds: staleRefunds.length,
    approvedRefunds: approvedRefunds.length,
    voidedPayments: voidedPayments.length,
  };
}

/**
 * The voided payments whose void's refund is due a read. A LIMIT caps the rows returned, not those read: the bound
 * on `updated_at` (implied by the one on `voided_at`: the void moves `updated_at` to its moment or later, and a
 * canceled payment's `updated_at` only grows) makes the read a range of `payments_status_idx`, EXPLAIN QUERY PLAN
 * `SEARCH payments USING INDEX payments_status_idx (status=? AND updated_at>?)`, the voids of the window, instead of
 * every payment ever canceled.
 */
export function voidedPaymentsDue(deps: Deps, now: number, limit: number, away: readonly string[] = []) {
  const lastLook = sql`coalesce(${payments.reconciledAt}, ${payments.updatedAt})`;
  const since = now - LONGEST_REVERSAL_WINDOW_MS;
  return deps.db
    .select()
    .from(payments)
    .where(
      and(
        eq(payments.status, 'canceled'),
        eq(payments.environment, deps.environment),
        notAway(payments.ownerId, away),
        gte(payments.updatedAt, since),
        gte(payments.voidedAt, since),
        lte(lastLook, now - RECONCILE_APPROVED_REFUND_AFTER_MS),
      ),
    )
    .orderBy(asc(lastLook))
    .limit(limit);
}

interface Verdict<S> {
  target: S | null;
  processorReference: string | null;
  processorPaymentId?: string;
  action?: PaymentAction;
  /** What the processor's answer said it kept (recorded as on every other path, `processorAccountChange`). */
  reported: ReportedSettlement;
}

/**
 * What the processor says of an operation, as a target status: its own answer; `failed` when it does not
 * know the operation and the operation can no longer be retried with its key (or nobody can ask any more,
 * the method's credentials being deleted); otherwise nothing, and we ask again later.
 */
async function askProcessor<S>(
  deps: Deps,
  method: PaymentMethodRow | undefined,
  payment: typeof payments.$inferSelect,
  createdAt: number,
  now: number,
  lookup: (
    version: ConnectorVersion,
    ctx: ConnectorContext,
  ) => Promise<
    {
      status: S;
      processorReference: string | null;
      processorPaymentId?: string;
      action?: PaymentAction;
    } & ReportedSettlement
  >,
): Promise<Verdict<S | 'failed'>> {
  const expired = createdAt <= now - IDEMPOTENCY_RETENTION_MS;
  if (!method || method.secretsCiphertext === null)
    return { target: expired ? 'failed' : null, processorReference: null, reported: {} };
  const { version, ctx } = await connectorFor(deps, method, payment);
  const read = await callConnector(() => lookup(version, ctx));
  if (read.ok)
    return {
      target: read.value.status,
      processorReference: read.value.processorReference,
      ...(read.value.processorPaymentId ? { processorPaymentId: read.value.processorPaymentId } : {}),
      ...(read.value.action ? { action: read.value.action } : {}),
      reported: pickSettlement(read.value),
    };
  return {
    target: read.error.kind === 'not_found' && expired ? 'failed' : null,
    processorReference: null,
    reported: {},
  };
}

async function reconcilePayment(
  deps: Deps,
  payment: typeof payments.$inferSelect,
  method: PaymentMethodRow | undefined,
  now: number,
) {
  const { target, processorReference, processorPaymentId, action, reported } = await askProcessor(
    deps,
    method,
    payment,
    payment.createdAt,
    now,
    (version, ctx) => version.adapter.getPayment(ctx, processorLookup(payment)),
  );
  await mutate(
    deps,
    payment.id,
    target
      ? {
          type: 'processor_news',
          account: {
            status: target,
            ...(action ? { action } : {}),
            ...(processorPaymentId ? { processorPaymentId } : {}),
            ...reported,
          },
          lookedAt: now,
          processorReference,
        }
      : { type: 'mark_looked', at: now },
    { now },
  );
}

async function reconcileRefund(
  deps: Deps,
  refund: typeof refunds.$inferSelect,
  payment: typeof payments.$inferSelect,
  method: PaymentMethodRow | undefined,
  now: number,
) {
  const { target, processorReference, reported } = await askProcessor(
    deps,
    method,
    payment,
    refund.createdAt,
    now,
    (version, ctx) => version.adapter.getRefund(ctx, processorLookup(payment, refund)),
  );
  await mutate(
    deps,
    payment.id,
    {
      type: 'refund_answered',
      refundId: refund.id,
      status: target,
      fields: {
        reconciledAt: now,
        ...(refund.processorReference === null && processorReference ? { processorReference } : {}),
      },
      reported,
    },
    { now },
  );
}

/** The refund was looked at (or cannot be): not due again before `at`. */
const refundLooked = (deps: Deps, refund: typeof refunds.$inferSelect, at: number) =>
  mutate(deps, refund.paymentId, { type: 'refund_looked', refundId: refund.id, at });

/**
 * Asks the processor about an approved refund: its answer is trusted news, so a refund it now reports failed
 * is reversed (`reverseApprovedRefund`), and a settlement it reports for the first time is recorded. Whatever it
 * says, the refund is marked looked at.
 */
export async function rereadApprovedRefund(
  deps: Deps,
  refund: typeof refunds.$inferSelect,
  payment: typeof payments.$inferSelect,
  method: PaymentMethodRow | undefined,
  now: number,
) {
  if (method && method.secretsCiphertext !== null && refund.processorReference !== null) {
    const { version, ctx } = await connectorFor(deps, method, payment);
    const read = await callConnector(() => version.adapter.getRefund(ctx, processorLookup(payment, refund)));
    if (read.ok) {
      // Trusted news: the ledger reverses a refund now reported failed, or books a settlement first reported.
      await mutate(
        deps,
        payment.id,
        {
          type: 'refund_news',
          refundId: refund.id,
          status: read.value.status,
          failureReason: read.value.failureReason ?? null,
          reported: pickSettlement(read.value),
          lookedAt: now,
        },
        { now },
      );
      return;
    }
  }
  await refundLooked(deps, refund, now);
}

/**
 * Asks the processor about the refund that carried out a payment's void (`getVoidRefund`), while its connector
 * version says such a refund may still fail: one it reports failed makes the payment collected again
 * (`reverseVoidedPayment`). A void whose connector has nothing to read (its voids are no refunds that can fail,
 * or the method's credentials are gone) is not looked at again before the longest window has passed.
 */
async function rereadVoidedPayment(
  deps: Deps,
  payment: typeof payments.$inferSelect,
  method: PaymentMethodRow | undefined,
  now: number,
) {
  const window = reversalWindowOf(method);
  const voidedAt = payment.voidedAt ?? 0;
  if (method && method.secretsCiphertext !== null && window !== undefined && voidedAt >= now - window) {
    const { version, ctx } = await connectorFor(deps, method, payment);
    if (version.adapter.getVoidRefund) {
      const evidence = await readVoidRefund(version, ctx, payment);
      if (evidence) {
        const { outcome } = await mutate(deps, payment.id, { type: 'void_reversal', evidence, lookedAt: now });
        if (outcome === 'reversed') return;
      }
      return markVoidLooked(deps, payment.id, now);
    }
  }
  await markVoidLooked(deps, payment.id, voidedAt + LONGEST_REVERSAL_WINDOW_MS);
}

/** Marks a voided payment looked at (`reconciledAt`), unless it is no longer canceled. */
const markVoidLooked = (deps: Deps, paymentId: string, at: number) =>
  mutate(deps, paymentId, { type: 'mark_looked', at, onlyIf: 'canceled' });
