import type { Deps } from '../deps.ts';
import { ServiceError } from '../lib/errors.ts';

export interface RateLimit {
  limit: number;
  windowMs: number;
}

/** Session endpoints: at most 10 attempts a minute per client address and per account (docs/limits.md). */
export const SESSION_RATE_LIMIT = { limit: 10, windowMs: 60_000 } as const satisfies RateLimit;

/** Counts one attempt against every key; refuses with 429 and `Retry-After` when any key is over. */
export async function enforceRateLimit(
  deps: Deps,
  keys: string[],
  { limit, windowMs }: RateLimit = SESSION_RATE_LIMIT,
): Promise<void> {
  const results = await Promise.all(keys.map((key) => hit(deps, key, limit, windowMs)));
  const refused = results.filter((r) => !r.allowed);
  if (refused.length > 0) {
    const retryAfter = Math.max(...refused.map((r) => r.retryAfterSeconds));
    throw new ServiceError('rate_limited', undefined, {
      retryAfterSeconds: retryAfter,
      details: { retry_after_seconds: retryAfter },
    });
  }
}

/** Whether this is the first attempt under `key` in the last `windowMs` (work done at most once per window). */
export async function firstInWindow(deps: Deps, key: string, windowMs: number): Promise<boolean> {
  return (await hit(deps, key, 1, windowMs)).allowed;
}

function hit(deps: Deps, key: string, limit: number, windowMs: number) {
  return deps.rateLimiter.get(deps.rateLimiter.idFromName(key)).hit(limit, windowMs);
}
