import { and, asc, eq, lte, sql } from 'drizzle-orm';
import { findConnectorVersion } from '../connectors/registry.ts';
import type { ProcessorDispute } from '../connectors/types.ts';
import { disputes, payments, type PaymentMethodRow, type PaymentRow } from '../db/schema/index.ts';
import type { Deps } from '../deps.ts';
import { withinDisputeWindow } from '../domain/dispute-checks.ts';
import { errorFields, log } from '../lib/log.ts';
import { notAway, ownersAway } from '../services/shards/directory.ts';
import { recordDisputeNews } from '../services/disputes/record-dispute-news.ts';
import { loadPaymentMethod } from '../services/payment-methods/store.ts';
import { callConnector, connectorFor, processorLookup } from '../services/payments/processor.ts';
import { loadPayment, mutate } from '../services/payments/store.ts';

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

export async function runDisputeChecks(deps: Deps, now: number): Promise<DisputeCheckRun> {
  const methods = new Map<string, PaymentMethodRow | undefined>();
  const run: DisputeCheckRun = { read: 0, changed: 0 };
  for (const { id, paymentMethodId } of await dueReads(deps, now, await ownersAway(deps))) {
    try {
      if (!methods.has(paymentMethodId)) methods.set(paymentMethodId, await loadPaymentMethod(deps, paymentMethodId));
      const method = methods.get(paymentMethodId);
      const claimed = await claimRead(deps, id, method, now);
      if (!claimed) continue;
      run.read++;
      run.changed += await readAndApply(deps, claimed, method!, now);
    } catch (error) {
      log('error', 'dispute_check_failed', { payment_id: id, ...errorFields(error) });
      // Its slot is spent anyway (a method that cannot be loaded, a connector that cannot be built): one broken
      // row must not stay first in line and take a place in every run. Tried again after the shortest gap.
      await deferRead(deps, id, now).catch(() => undefined);
    }
  }
  return run;
}

/**
 * The payments whose read is due, at most `DISPUTE_CHECKS_PER_OWNER_PER_RUN` of each owner (their oldest slots)
 * and `DISPUTE_CHECKS_PER_RUN` in all, oldest slot first. The owner's share is taken in SQL, so an owner with a
 * thousand due reads cannot fill the run and leave the others waiting. What it reads: every due row's entry of
 * `payments_dispute_check_idx` (slot, environment, owner, id: the window function needs no row of the table),
 * in one range (`dispute_check_at <= now`, EXPLAIN QUERY PLAN: `SEARCH payments USING COVERING INDEX
 * payments_dispute_check_idx (dispute_check_at<?)`), sorted by owner for the ranks; only the chosen rows are read
 * from the table (their method, then each row again in its `claimRead`).
 */
export function dueReads(deps: Deps, now: number, away: readonly string[] = []) {
  const ranked = deps.db.$with('ranked').as(
    deps.db
      .select({
        id: payments.id,
        slot: sql<number>`${payments.disputeCheckAt}`.as('slot'),
        nth: sql<number>`row_number() over (partition by ${payments.ownerId} order by ${payments.disputeCheckAt}, ${payments.id})`.as(
          'nth',
        ),
      })
      .from(payments)
      .where(
        and(
          lte(payments.disputeCheckAt, now),
          eq(payments.environment, deps.environment),
          notAway(payments.ownerId, away),
        ),
      ),
  );
  return deps.db
    .with(ranked)
    .select({ id: ranked.id, paymentMethodId: payments.paymentMethodId })
    .from(ranked)
    .innerJoin(payments, eq(payments.id, ranked.id))
    .where(lte(ranked.nth, DISPUTE_CHECKS_PER_OWNER_PER_RUN))
    .orderBy(asc(ranked.slot), asc(ranked.id))
    .limit(DISPUTE_CHECKS_PER_RUN);
}

/** Puts off a due read that failed before its slot was spent, by the shortest gap (its schedule then goes on). */
const deferRead = (deps: Deps, paymentId: string, now: number) =>
  mutate(deps, paymentId, { type: 'defer_dispute_check' }, { now });

/** The processor's id of the payment's dispute still open, as recorded (at most one: domain/ledger/disputes.ts). */
async function openDisputeOf(deps: Deps, payment: PaymentRow): Promise<string[]> {
  if (payment.openDisputeId === null) return [];
  const row = await deps.db
    .select({ processorDisputeId: disputes.processorDisputeId })
    .from(disputes)
    .where(and(eq(disputes.id, payment.openDisputeId), eq(disputes.paymentId, payment.id)))
    .get();
  return row ? [row.processorDisputeId] : [];
}

interface ClaimedRead {
  payment: PaymentRow;
  /** The ids of its disputes open when claimed. */
  open: string[];
  /** The slot this read spends (the window's closing read is decided on it, not on when the run got to it). */
  slot: number;
}

/**
 * Takes this slot's read of the payment: sets the next one (`nextDisputeCheck`) in one compare-and-set, before
 * anything at the processor is asked. Null when the read is not due any more (another run took it), or when
 * nothing is read this time: the payment never collected, or its connector version lists no disputes (its
 * schedule ends), or its method's credentials are removed (the schedule goes on: they may come back, and an open
 * dispute still has a deadline). The version is the registry's, not the decrypted connector's, so nothing that
 * can fail at the processor or with the credentials comes before the claim.
 */
async function claimRead(
  deps: Deps,
  paymentId: string,
  method: PaymentMethodRow | undefined,
  now: number,
): Promise<ClaimedRead | null> {
  const version = method ? findConnectorVersion(method.connectorVersionId) : undefined;
  const readable = version?.adapter.listDisputes !== undefined && version.disputeWindowMs !== undefined;
  const { payment, outcome: slot } = await mutate(
    deps,
    paymentId,
    {
      type: 'claim_dispute_check',
      readable,
      askable: method !== undefined && method.secretsCiphertext !== null,
      windowMs: version?.disputeWindowMs,
    },
    { now },
  );
  return slot === null ? null : { payment, open: await openDisputeOf(deps, payment), slot };
}

/**
 * Reads the payment's disputes and applies each as trusted news; returns how many changed. Within its window
 * the payment's disputes are listed (a new one shows there); past it only its open ones are read, by id where
 * the connector can. Afterwards the schedule follows what was found: a dispute found open keeps the payment on
 * the open-dispute gap, one found closed lets it go back to the window's.
 */
async function readAndApply(
  deps: Deps,
  { payment, open: openBefore, slot }: ClaimedRead,
  method: PaymentMethodRow,
  now: number,
): Promise<number> {
  const { version, ctx } = await connectorFor(deps, method, payment);
  const adapter = version.adapter;
  const lookup = processorLookup(payment);
  // The window's last slot is its very end (`nextDisputeCheck`), which a run always reaches a little later: decided
  // on that slot, it is still the window's read, so the disputes are listed (one opened on the last day is found).
  const windowMs = version.disputeWindowMs;
  const closingRead = windowMs !== undefined && slot === payment.createdAt + windowMs;
  const listing = closingRead || withinDisputeWindow(payment.createdAt, windowMs, now) || !adapter.getDispute;
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
  const after = await loadPayment(deps, payment.id);
  if (after && (after.openDisputeId !== null) !== openBefore.length > 0)
    await mutate(deps, payment.id, { type: 'reschedule_dispute_check', windowMs: version.disputeWindowMs }, { now });
  return changed;
}
