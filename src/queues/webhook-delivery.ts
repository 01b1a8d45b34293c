import { createDeps } from '../deps.ts';
import type { Env, WebhookMessage } from '../env.ts';
import { errorFields, log } from '../lib/log.ts';
import { deliverEvent } from '../services/webhooks/deliver.ts';

/**
 * Queue consumer: at least once, each message one delivery attempt. A failed attempt is retried by the
 * queue itself after the backoff delay that `deliverEvent` chose (all within the queue's 12 h limit).
 */
export async function handleWebhookBatch(batch: MessageBatch<WebhookMessage>, env: Env): Promise<void> {
  const deps = createDeps(env);
  for (const message of batch.messages) {
    try {
      const outcome = await deliverEvent(deps, message.body.eventId, Date.now(), message.body.endpointId);
      if (outcome.kind === 'retry') message.retry({ delaySeconds: outcome.delaySeconds });
      else message.ack();
    } catch (error) {
      log('error', 'webhook_delivery_crashed', {
        event_id: message.body.eventId,
        endpoint_id: message.body.endpointId ?? null,
        ...errorFields(error),
      });
      message.retry({ delaySeconds: 30 });
    }
  }
}
