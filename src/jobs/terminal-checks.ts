import { and, asc, eq, lte } from 'drizzle-orm';
import { payments, type PaymentMethodRow, type PaymentRow } from '../db/schema/index.ts';
import type { Deps } from '../deps.ts';
import { errorFields, log } from '../lib/log.ts';
import { notAway, ownersAway } from '../services/shards/directory.ts';
import { loadPaymentMethod } from '../services/payment-methods/store.ts';
import { callConnector, connectorFor, processorLookup } from '../services/payments/processor.ts';
import { mutate } from '../services/payments/store.ts';

/**
 * The terminal re-reads (docs/terminal-checks.md): each run reads from its processor every payment waiting
 * at a POS terminal whose read is due (`terminal_check_at`), advancing its schedule (`nextTerminalCheck`)
 * before asking, so two runs never read one payment for one slot. The processor's answer goes through the
 * usual rules: a final status stops the reads, `check_terminal` tells the merchant (`payment.action_required`),
 * a cancel accepted at the terminal completes. Runs from the cron trigger, once a minute.
 */

/** Reads per run at most; the rest are due still and wait for the next run (their slots stay anchored). */
export const TERMINAL_CHECKS_PER_RUN = 50;
/**
 * Reads per owner and run at most: an owner's processor account is shared by its terminals, and a Stripe read
 * is 2 requests, so 10 reads stay within Stripe's 25 read requests per second in test mode even if made
 * within one second (docs/terminal-checks.md, "Rate limits").
 */
export const TERMINAL_CHECKS_PER_OWNER_PER_RUN = 10;

export interface TerminalCheckRun {
  /** Payments read from their processor. */
  read: number;
  /** Of those, how many changed (settled, started waiting on a check, or were canceled). */
  changed: number;
}

export async function runTerminalChecks(deps: Deps, now: number): Promise<TerminalCheckRun> {
  const away = await ownersAway(deps);
  const due = await deps.db
    .select()
    .from(payments)
    .where(
      and(
        lte(payments.terminalCheckAt, now),
        eq(payments.environment, deps.environment),
        notAway(payments.ownerId, away),
      ),
    )
    .orderBy(asc(payments.terminalCheckAt))
    .limit(TERMINAL_CHECKS_PER_RUN * 4);
  const perOwner = new Map<string, number>();
  const methods = new Map<string, PaymentMethodRow | undefined>();
  const run: TerminalCheckRun = { read: 0, changed: 0 };
  for (const payment of due) {
    if (run.read >= TERMINAL_CHECKS_PER_RUN) break;
    const taken = perOwner.get(payment.ownerId) ?? 0;
    if (taken >= TERMINAL_CHECKS_PER_OWNER_PER_RUN) continue;
    try {
      const claimed = await claimRead(deps, payment.id, now);
      if (!claimed) continue;
      perOwner.set(payment.ownerId, taken + 1);
      if (!methods.has(claimed.paymentMethodId))
        methods.set(claimed.paymentMethodId, await loadPaymentMethod(deps, claimed.paymentMethodId));
      const method = methods.get(claimed.paymentMethodId);
      if (!method || method.secretsCiphertext === null) continue;
      run.read++;
      if (await readAndApply(deps, claimed, method, now)) run.changed++;
    } catch (error) {
      log('error', 'terminal_check_failed', { payment_id: payment.id, ...errorFields(error) });
    }
  }
  return run;
}

/**
 * Takes this slot's read of the payment: counts it and schedules the next (none once spent or past the
 * window), marking the payment looked at (reconciliation leaves it alone meanwhile). Null when the read is
 * not due any more (another run took it) or the payment is no longer open (its schedule is dropped).
 */
async function claimRead(deps: Deps, paymentId: string, now: number): Promise<PaymentRow | null> {
  const { payment, outcome } = await mutate(deps, paymentId, { type: 'claim_terminal_check' }, { now });
  return outcome ? payment : null;
}

async function readAndApply(deps: Deps, payment: PaymentRow, method: PaymentMethodRow, now: number) {
  const { version, ctx } = await connectorFor(deps, method, payment);
  const read = await callConnector(() => version.adapter.getPayment(ctx, processorLookup(payment)));
  if (!read.ok) {
    log('info', 'terminal_check_unanswered', { payment_id: payment.id, kind: read.error.kind });
    return false;
  }
  const { outcome } = await mutate(
    deps,
    payment.id,
    { type: 'processor_news', account: read.value, processorStatus: read.value.processorStatus },
    { now },
  );
  return outcome === 'applied';
}
