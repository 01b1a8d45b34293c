import { and, eq, isNotNull, lte } from 'drizzle-orm';
import { createDb } from '../db/client.ts';
import { payments } from '../db/schema/index.ts';
import type { Env } from '../env.ts';
import { applyTransition } from '../domain/payment-state.ts';
import { mutatePayment } from '../services/payments/store.ts';

/**
 * Pending QR payments past their method's `qr_ttl_seconds` become `expired` (and send `payment.expired`),
 * whether or not anyone asks about them again. Runs from the cron trigger; returns how many expired.
 */
export async function expireQrPayments(env: Env, now: number, limit = 100): Promise<number> {
  const due = await createDb(env)
    .select({ id: payments.id })
    .from(payments)
    .where(and(eq(payments.status, 'pending'), isNotNull(payments.expiresAt), lte(payments.expiresAt, now), eq(payments.environment, env.ENVIRONMENT)))
    .limit(limit);
  let expired = 0;
  for (const { id } of due) {
    const { result } = await mutatePayment<boolean>(env, id, (current, refunds) => {
      if (current.expiresAt === null || current.expiresAt > now) return { none: false };
      const move = applyTransition(current, 'expired', now, { hasRefunds: refunds.length > 0 });
      return move.ok ? { change: { status: move.status, updatedAt: move.updatedAt }, result: true } : { none: false };
    });
    if (result) expired++;
  }
  return expired;
}
