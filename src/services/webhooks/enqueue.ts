import type { Deps } from '../../deps.ts';
import type { WebhookMessage } from '../../env.ts';
import { PAYMENT_URL_DESTINATION } from '../../domain/webhook-endpoints.ts';
import { log } from '../../lib/log.ts';

/** A delivery owed: of event `eventId`, to the endpoint `endpointId`, or to the payment's `webhook_url` without one. */
export type PendingDelivery = WebhookMessage;

/** The delivery owed by a stored row (its `destination`: `payment_url` or an endpoint id). */
export const pendingDeliveryOf = (eventId: string, destination: string): PendingDelivery =>
  destination === PAYMENT_URL_DESTINATION ? { eventId } : { eventId, endpointId: destination };

/**
 * Hands committed deliveries to the queue. A failed send loses nothing: the delivery row is already
 * `pending` in D1, and the scheduled relay re-queues deliveries that are overdue.
 */
export async function enqueueDeliveries(deps: Deps, deliveries: PendingDelivery[]): Promise<void> {
  if (deliveries.length === 0) return;
  try {
    await deps.webhooks.sendBatch(
      deliveries.map((d) => ({
        body: (d.endpointId
          ? { eventId: d.eventId, endpointId: d.endpointId }
          : { eventId: d.eventId }) satisfies WebhookMessage,
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
