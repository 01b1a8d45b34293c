import type { Env, WebhookMessage } from './env.ts';
import { app } from './app.ts';
import { runScheduledJobs } from './jobs/scheduled.ts';
import { handleWebhookBatch } from './queues/webhook-delivery.ts';

export { IdempotencyStore } from './durable-objects/idempotency-store.ts';
export { RateLimiter } from './durable-objects/rate-limiter.ts';
export { OwnerMoveWorkflow } from './workflows/owner-move.ts';

export default {
  fetch: app.fetch,
  queue: (batch, env) => handleWebhookBatch(batch as MessageBatch<WebhookMessage>, env),
  scheduled: async (controller, env, ctx) => {
    ctx.waitUntil(runScheduledJobs(env, controller.scheduledTime));
  },
} satisfies ExportedHandler<Env>;
