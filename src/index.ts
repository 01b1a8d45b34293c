import type { Env } from './env.ts';
import { app } from './app.ts';

export { IdempotencyStore } from './durable-objects/idempotency-store.ts';
export { RateLimiter } from './durable-objects/rate-limiter.ts';

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
