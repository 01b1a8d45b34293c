import { and, asc, eq, inArray, lte } from 'drizzle-orm';
import type { ProcessorDispute } from '../connectors/types.ts';
import { disputes, payments, type PaymentMethodRow, type PaymentRow } from '../db/schema/index.ts';
import type { Deps } from '../deps.ts';
import { DISPUTABLE_STATUSES, nextDisputeCheck, withinDisputeWindow } from '../domain/dispute-checks.ts';
import { DISPUTE_STATUSES, isDisputeClosed } from '../domain/disputes.ts';
import { errorFields, log } from '../lib/log.ts';
import { recordDisputeNews } from '../services/disputes/record-dispute-news.ts';
import { loadPaymentMethod } from '../services/payment-methods/store.ts';
import { callConnector, connectorFor, processorLookup } from '../services/payments/processor.ts';
import { mutatePayment } from '../services/payments/store.ts';

/**
 * The dispute re-reads (docs/dispute-checks.md): each run reads from its processor the disputes of the collected
 * payments whose read is due (`dispute_check_at`), so a dispute opened, moved or decided while its notification
 * was lost is found. The schedule (`nextDisputeCheck`) is advanced before asking, so two runs never read one
 * payment for one slot. What the processor answers is trusted news and takes the path of a verified dispute
 * notification (`recordDisputeNews`): the domain decides, each change is written and announced once, and an
 * answer that says nothing new changes nothing. Runs from the cron trigger, once a minute.
 */

/** Payments read per run and shard at most; the rest stay due and wait for the next run (oldest slot first). */
export const DISPUTE_CHECKS_PER_RUN = 20;
/**
 * Payments read per owner and run at most: an owner's processor account is shared by its payments. A read is
 * one Stripe request (the payment's disputes listed; an open dispute past the window read by id), and one
 * Mercado Pago request plus one per chargeback the order lists, so one owner's reads stay well within Stripe's
 * 25 read requests per second in test mode even if a run made them within one second.
 */
export const DISPUTE_CHECKS_PER_OWNER_PER_RUN = 5;

export interface DisputeCheckRun {
  /** Payments whose disputes were read from their processor. */
  read: number;
  /** Disputes recorded or changed by those reads (each with its events). */
  changed: number;
}

const OPEN_DISPUTE_STATUSES = DISPUTE_STATUSES.filter((s) => !isDisputeClosed(s));

export async function runDisputeChecks(deps: Deps, now: number): Promise<DisputeCheckRun> {
  const due = await deps.db
    .select()
    .from(payments)
    .where(and(lte(payments.disputeCheckAt, now), eq(payments.environment, deps.environment)))
    .orderBy(asc(payments.disputeCheckAt))
    .limit(DISPUTE_CHECKS_PER_RUN * 4);
  const perOwner = new Map<string, number>();
  const methods = new Map<string, PaymentMethodRow | undefined>();
  const run: DisputeCheckRun = { read: 0, changed: 0 };
  for (const payment of due) {
    if (run.read >= DISPUTE_CHECKS_PER_RUN) break;
    const taken = perOwner.get(payment.ownerId) ?? 0;
    if (taken >= DISPUTE_CHECKS_PER_OWNER_PER_RUN) continue;
    try {
      if (!methods.has(payment.paymentMethodId))
        methods.set(payment.paymentMethodId, await loadPaymentMethod(deps, payment.paymentMethodId));
      const method = methods.get(payment.paymentMethodId);
      const claimed = await claimRead(deps, payment.id, method, now);
      if (!claimed) continue;
      perOwner.set(payment.ownerId, taken + 1);
      run.read++;
      run.changed += await readAndApply(deps, claimed.payment, method!, claimed.open, now);
    } catch (error) {
      log('error', 'dispute_check_failed', { payment_id: payment.id, ...errorFields(error) });
    }
  }
  return run;
}

/** The ids of the payment's disputes still open, as recorded. */
async function openDisputesOf(deps: Deps, payment: PaymentRow): Promise<string[]> {
  const rows = await deps.db
    .select({ processorDisputeId: disputes.processorDisputeId })
    .from(disputes)
    .where(
      and(
        eq(disputes.paymentId, payment.id),
        eq(disputes.ownerId, payment.ownerId),
        eq(disputes.environment, payment.environment),
        inArray(disputes.status, OPEN_DISPUTE_STATUSES),
      ),
    );
  return rows.map((r) => r.processorDisputeId);
}

const versionOf = async (deps: Deps, method: PaymentMethodRow) => (await connectorFor(deps, method)).version;

/**
 * Takes this slot's read of the payment: sets the next one (`nextDisputeCheck`) in one compare-and-set. Null
 * when the read is not due any more (another run took it), or when nothing can be read: the payment never
 * collected, or its method has no credentials or a connector that lists no disputes (its schedule ends).
 */
async function claimRead(
  deps: Deps,
  paymentId: string,
  method: PaymentMethodRow | undefined,
  now: number,
): Promise<{ payment: PaymentRow; open: string[] } | null> {
  const version = method && method.secretsCiphertext !== null ? await versionOf(deps, method) : null;
  const readable = version?.adapter.listDisputes !== undefined && version.disputeWindowMs !== undefined;
  const { payment, result } = await mutatePayment<string[] | null>(deps, paymentId, async (current) => {
    if (current.disputeCheckAt === null || current.disputeCheckAt > now) return { none: null };
    const open = await openDisputesOf(deps, current);
    // A payment voided or never collected has nothing to dispute, unless a dispute was recorded meanwhile.
    if (!readable || (!DISPUTABLE_STATUSES.includes(current.status) && open.length === 0))
      return { change: { disputeCheckAt: null }, result: null };
    const next = nextDisputeCheck({
      createdAt: current.createdAt,
      windowMs: version!.disputeWindowMs,
      openDispute: open.length > 0,
      now,
    });
    return { change: { disputeCheckAt: next }, result: open };
  });
  return result ? { payment, open: result } : null;
}

/**
 * Reads the payment's disputes and applies each as trusted news; returns how many changed. Within its window
 * the payment's disputes are listed (a new one shows there); past it only its open ones are read, by id where
 * the connector can. Afterwards the schedule follows what was found: a dispute found open keeps the payment on
 * the open-dispute gap, one found closed lets it go back to the window's.
 */
async function readAndApply(
  deps: Deps,
  payment: PaymentRow,
  method: PaymentMethodRow,
  openBefore: string[],
  now: number,
): Promise<number> {
  const { version, ctx } = await connectorFor(deps, method);
  const adapter = version.adapter;
  const lookup = processorLookup(payment);
  const listing = withinDisputeWindow(payment.createdAt, version.disputeWindowMs, now) || !adapter.getDispute;
  const read = await callConnector(async (): Promise<ProcessorDispute[]> => {
    if (listing) return adapter.listDisputes!(ctx, lookup);
    const found: ProcessorDispute[] = [];
    for (const processorDisputeId of openBefore)
      found.push(await adapter.getDispute!(ctx, { processorDisputeId, payment: lookup }));
    return found;
  });
  if (!read.ok) {
    log('info', 'dispute_check_unanswered', { payment_id: payment.id, kind: read.error.kind });
    return 0;
  }
  let changed = 0;
  for (const dispute of read.value) {
    // Only the payment's own: a connector answers for the reference it was given, but the record is keyed by it.
    if (dispute.paymentProcessorReference !== payment.processorReference) continue;
    if (await recordDisputeNews(deps, payment.id, dispute)) changed++;
  }
  const openAfter = await openDisputesOf(deps, payment);
  if (openAfter.length > 0 !== openBefore.length > 0) await reschedule(deps, payment.id, version, now);
  return changed;
}

/** Sets the next read from the disputes recorded now (read inside the compare-and-set, so news meanwhile is counted). */
async function reschedule(
  deps: Deps,
  paymentId: string,
  version: { disputeWindowMs?: number },
  now: number,
): Promise<void> {
  await mutatePayment(deps, paymentId, async (current) => {
    const open = await openDisputesOf(deps, current);
    const next = nextDisputeCheck({
      createdAt: current.createdAt,
      windowMs: version.disputeWindowMs,
      openDispute: open.length > 0,
      now,
    });
    return next === current.disputeCheckAt ? { none: null } : { change: { disputeCheckAt: next }, result: null };
  });
}
