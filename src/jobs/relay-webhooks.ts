import { and, eq, lte } from 'drizzle-orm';
import { webhookDeliveries } from '../db/schema/index.ts';
import type { Deps } from '../deps.ts';
import { enqueueDeliveries, pendingDeliveryOf } from '../services/webhooks/enqueue.ts';

/** A delivery this late past its planned attempt lost its queue message (or its send failed). */
export const OVERDUE_AFTER_MS = 5 * 60 * 1000;

/** Re-queues overdue pending deliveries: the outbox row, not the queue, is the record of what is owed. */
export async function relayOverdueWebhooks(deps: Deps, now: number, limit = 100): Promise<number> {
  const overdue = await deps.db
    .select({
      eventId: webhookDeliveries.eventId,
      ownerId: webhookDeliveries.ownerId,
      destination: webhookDeliveries.destination,
    })
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.status, 'pending'), lte(webhookDeliveries.nextAttemptAt, now - OVERDUE_AFTER_MS)))
    .limit(limit);
  await enqueueDeliveries(
    deps,
    overdue.map((d) => pendingDeliveryOf(d.eventId, d.ownerId, d.destination)),
  );
  return overdue.length;
}
