import { and, asc, eq, isNotNull, isNull, lte } from 'drizzle-orm';
import { payments, type PaymentRow } from '../db/schema/index.ts';
import type { Deps } from '../deps.ts';
import type { Expire } from '../domain/ledger/index.ts';
import { errorFields, log } from '../lib/log.ts';
import { notAway, ownersAway } from '../services/shards/directory.ts';
import { loadPaymentMethod } from '../services/payment-methods/store.ts';
import { callConnector, connectorFor, processorLookup } from '../services/payments/processor.ts';
import { mutate } from '../services/payments/store.ts';

/**
 * The pending QR payments past their expiry, oldest expiry first: those whose processor could not be reached come
 * first within the grace period, and leave the head once it is over, so they hold later expiries back an hour at most.
 * One whose withdrawal the processor accepted to carry out later (`cancel_requested_at`) waits for its news and is
 * asked no more. A range of `payments_expiry_idx` read in its order: the index holds neither those nor the payments
 * waiting on a required action, so the range costs the same however many of them a shard keeps.
 */
export function dueExpiries(deps: Deps, now: number, limit: number, away: readonly string[] = []) {
  return (
    deps.db
      .select()
      .from(payments)
      // One waiting on a required action is past its scan: only that action (or reconciliation) settles it.
      .where(
        and(
          eq(payments.status, 'pending'),
          isNotNull(payments.expiresAt),
          lte(payments.expiresAt, now),
          isNull(payments.requiredAction),
          isNull(payments.cancelRequestedAt),
          eq(payments.environment, deps.environment),
          notAway(payments.ownerId, away),
        ),
      )
      .orderBy(asc(payments.expiresAt))
      .limit(limit)
  );
}

/**
 * Pending QR payments past their method's `qr_ttl_seconds` become `expired` (and send `payment.expired`),
 * whether or not anyone asks about them again. The QR is withdrawn at the processor first, so a buyer
 * cannot pay a code we consider dead; if the processor refuses because the buyer already paid, its
 * answer is applied instead. Runs from the cron trigger; returns how many expired.
 */
export async function expireQrPayments(deps: Deps, now: number, limit = 100): Promise<number> {
  const due = await dueExpiries(deps, now, limit, await ownersAway(deps));
  let expired = 0;
  for (const payment of due) {
    try {
      const withdrawal = await withdrawAtProcessor(deps, payment);
      const { outcome } = await mutate(deps, payment.id, { type: 'expire', withdrawal }, { now });
      if (outcome) expired++;
    } catch (error) {
      log('error', 'qr_expiry_failed', { payment_id: payment.id, ...errorFields(error) });
    }
  }
  return expired;
}

/** Asks the processor to withdraw the QR; what it said is the ledger's to weigh (domain/ledger/payments.ts `expire`). */
async function withdrawAtProcessor(deps: Deps, payment: PaymentRow): Promise<Expire['withdrawal']> {
  const method = await loadPaymentMethod(deps, payment.paymentMethodId);
  // Deleted with its credentials: nothing can be asked; the processor's own expiry applies.
  if (!method || method.secretsCiphertext === null) return { kind: 'withdrawn' };
  const { version, ctx } = await connectorFor(deps, method, payment);
  const lookup = processorLookup(payment);
  const canceled = await callConnector(() =>
    version.adapter.cancelPayment(ctx, {
      ...lookup,
      processorIdempotencyKey: `${payment.processorIdempotencyKey}:expire`,
      currentStatus: 'pending',
    }),
  );
  if (canceled.ok) {
    const { status, cancellation } = canceled.value;
    // Accepted to be carried out later, the payment still pending (Adyen's `/cancels`): its news completes it.
    if (cancellation === 'requested' && status === 'pending') return { kind: 'requested' };
    return status === 'canceled' ? { kind: 'withdrawn' } : { kind: 'settled', status };
  }
  if (canceled.error.kind === 'declined') {
    // Refused: most likely paid meanwhile. Believe the processor's own account of the payment.
    const read = await callConnector(() => version.adapter.getPayment(ctx, lookup));
    if (read.ok) return { kind: 'settled', status: read.value.status };
  }
  return { kind: 'no_answer' };
}
