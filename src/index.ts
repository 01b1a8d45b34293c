import type { Env } from './env.ts';
import { app } from './app.ts';

export { RateLimiter } from './durable-objects/rate-limiter.ts';

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
