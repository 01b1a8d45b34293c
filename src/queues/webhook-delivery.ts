import { isShardName, type ShardName } from '../db/shards.ts';
import { createDeps } from '../deps.ts';
import type { Env, WebhookMessage } from '../env.ts';
import { errorFields, log } from '../lib/log.ts';
import { placementOf } from '../services/shards/directory.ts';
import { deliverEvent } from '../services/webhooks/deliver.ts';

/** A message whose owner is being moved waits this long: the move copies in seconds (services/shards/move-owner.ts). */
const OWNER_MOVING_DELAY_SECONDS = 30;

/**
 * Queue consumer: at least once, each message one delivery attempt. A failed attempt is retried by the
 * queue itself after the backoff delay that `deliverEvent` chose (all within the queue's 12 h limit).
 * Each message names its shard; the directory decides where its owner lives now (a moved owner's deliveries
 * went with it), and while the owner moves the message waits, so a delivery is never made from both copies.
 */
export async function handleWebhookBatch(batch: MessageBatch<WebhookMessage>, env: Env): Promise<void> {
  const base = createDeps(env);
  for (const message of batch.messages) {
    try {
      const { eventId, endpointId, ownerId } = message.body;
      let shard: ShardName = message.body.shard && isShardName(message.body.shard) ? message.body.shard : 'SHARD_0';
      if (ownerId !== undefined) {
        const placement = await placementOf(base, ownerId);
        if (placement.movingTo !== null) {
          message.retry({ delaySeconds: OWNER_MOVING_DELAY_SECONDS });
          continue;
        }
        shard = placement.shard;
      }
      const outcome = await deliverEvent(base.withShard(shard), eventId, Date.now(), endpointId);
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
