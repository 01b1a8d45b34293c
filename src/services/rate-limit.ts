import type { Deps } from '../deps.ts';
import { rateLimiters } from '../durable-objects/rate-limiter.ts';
import { ServiceError } from '../lib/errors.ts';

/** Session endpoints: at most 10 attempts a minute per client address and per account (docs/limits.md). */
export const SESSION_RATE_LIMIT = { limit: 10, windowMs: 60_000 } as const;

/** Counts one attempt against every key; refuses with 429 and `Retry-After` when any key is over. */
export async function enforceRateLimit(deps: Deps, keys: string[]): Promise<void> {
  const { limit, windowMs } = SESSION_RATE_LIMIT;
  const limiters = rateLimiters(deps.rateLimiter);
  const results = await Promise.all(keys.map((key) => limiters.get(limiters.idFromName(key)).hit(limit, windowMs)));
  const refused = results.filter((r) => !r.allowed);
  if (refused.length > 0) {
    const retryAfter = Math.max(...refused.map((r) => r.retryAfterSeconds));
    throw new ServiceError('rate_limited', undefined, {
      retryAfterSeconds: retryAfter,
      details: { retry_after_seconds: retryAfter },
    });
  }
}
