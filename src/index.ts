import type { Env, WebhookMessage } from './env.ts';
import { appOf } from './app.ts';
import { runScheduledJobs } from './jobs/scheduled.ts';
import { handleWebhookBatch } from './queues/webhook-delivery.ts';

export { IdempotencyStore } from './durable-objects/idempotency-store.ts';
export { RateLimiter } from './durable-objects/rate-limiter.ts';
export { OwnerMoveWorkflow } from './workflows/owner-move.ts';

export default {
  fetch: (request, env, ctx) => appOf(env.ENVIRONMENT).fetch(request, env, ctx),
  queue: (batch, env) => handleWebhookBatch(batch as MessageBatch<WebhookMessage>, env),
  scheduled: async (controller, env, ctx) => {
    ctx.waitUntil(runScheduledJobs(env, controller.scheduledTime));
  },
} satisfies ExportedHandler<Env>;
