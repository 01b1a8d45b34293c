import type { Deps } from '../../deps.ts';
import type { WebhookMessage } from '../../env.ts';
import { log } from '../../lib/log.ts';

export interface PendingDelivery {
  eventId: string;
}

/**
 * Hands committed deliveries to the queue. A failed send loses nothing: the delivery row is already
 * `pending` in D1, and the scheduled relay re-queues deliveries that are overdue.
 */
export async function enqueueDeliveries(deps: Deps, deliveries: PendingDelivery[]): Promise<void> {
  if (deliveries.length === 0) return;
  try {
    await deps.webhooks.sendBatch(deliveries.map((d) => ({ body: { eventId: d.eventId } satisfies WebhookMessage, contentType: 'json' as const })));
  } catch (error) {
    log('warn', 'webhook_enqueue_failed', { events: deliveries.map((d) => d.eventId), error_name: (error as Error)?.name });
  }
}
