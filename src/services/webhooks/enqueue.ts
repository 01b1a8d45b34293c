import type { Deps } from '../../deps.ts';
import type { WebhookMessage } from '../../env.ts';
import { PAYMENT_URL_DESTINATION } from '../../domain/webhook-endpoints.ts';
import { log } from '../../lib/log.ts';

/**
 * A delivery owed: of event `eventId` of owner `ownerId`, to the endpoint `endpointId`, or to the payment's
 * `webhook_url` without one.
 */
export interface PendingDelivery {
  eventId: string;
  ownerId: string;
  endpointId?: string;
}

/** The delivery owed by a stored row (its `destination`: `payment_url` or an endpoint id). */
export const pendingDeliveryOf = (eventId: string, ownerId: string, destination: string): PendingDelivery =>
  destination === PAYMENT_URL_DESTINATION ? { eventId, ownerId } : { eventId, ownerId, endpointId: destination };

/**
 * Hands committed deliveries to the queue. A failed send loses nothing: the delivery row is already
 * `pending` in D1, and the scheduled relay re-queues deliveries that are overdue.
 */
export async function enqueueDeliveries(deps: Deps, deliveries: PendingDelivery[]): Promise<void> {
  if (deliveries.length === 0) return;
  try {
    await deps.webhooks.sendBatch(
      deliveries.map((d) => ({
        body: {
          eventId: d.eventId,
          ...(d.endpointId ? { endpointId: d.endpointId } : {}),
          shard: deps.shard,
          ownerId: d.ownerId,
        } satisfies WebhookMessage,
        contentType: 'json' as const,
      })),
    );
  } catch (error) {
    log('warn', 'webhook_enqueue_failed', {
      events: deliveries.map((d) => d.eventId),
      endpoints: deliveries.map((d) => d.endpointId ?? null),
      error_name: (error as Error)?.name,
    });
  }
}
