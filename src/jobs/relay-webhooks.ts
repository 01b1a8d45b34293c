import { and, eq, inArray, isNull, lte, or, sql } from 'drizzle-orm';
import { webhookDeliveries } from '../db/schema/index.ts';
import type { Deps } from '../deps.ts';
import { enqueueDeliveries, pendingDeliveryOf } from '../services/webhooks/enqueue.ts';

/**
 * How long after it is due a delivery's queue message may still be on its way: the message queued for that time
 * (the first one, sent after the event's commit; the retry the consumer asked for, its delay rounded up to the
 * second; one this relay sent) reaches the consumer in a batch within `max_batch_timeout` (1 s, wrangler.toml) plus
 * the queue's own latency. Past it, a pending delivery that no attempt holds (`leased_until`) lost its message: the
 * process crashed before or while sending it, the send failed, or the message was dropped. The cron (every minute)
 * queues it again, so it is sent again within 15 to 75 seconds of being due.
 */
export const OVERDUE_AFTER_MS = 15_000;

/**
 * Re-queues the pending deliveries whose message was lost (`OVERDUE_AFTER_MS`): the outbox row, not the queue, is the
 * record of what is owed. The statement that picks a delivery also makes it due now, as a retry's is: the message sent
 * now is then on its way as any other, so neither a cron run that overlaps this one nor the next one sends it again
 * while it travels. A duplicate message all the same (the queue delivering twice, a message that waited long in a
 * slow batch) attempts nothing twice: the consumer claims a delivery before attempting it (services/webhooks/deliver.ts).
 */
export async function relayOverdueWebhooks(deps: Deps, now: number, limit = 100): Promise<number> {
  const overdue = deps.db
    .select({ rowid: sql`rowid` })
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.status, 'pending'),
        lte(webhookDeliveries.nextAttemptAt, now - OVERDUE_AFTER_MS),
        or(isNull(webhookDeliveries.leasedUntil), lte(webhookDeliveries.leasedUntil, now)),
      ),
    )
    .limit(limit);
  const relayed = await deps.db
    .update(webhookDeliveries)
    .set({ nextAttemptAt: now, updatedAt: now })
    .where(inArray(sql`rowid`, overdue))
    .returning({
      eventId: webhookDeliveries.eventId,
      ownerId: webhookDeliveries.ownerId,
      destination: webhookDeliveries.destination,
    });
  await enqueueDeliveries(
    deps,
    relayed.map((d) => pendingDeliveryOf(d.eventId, d.ownerId, d.destination)),
  );
  return relayed.length;
}
