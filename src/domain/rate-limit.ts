/**
 * Sliding-window log: at most `limit` accepted attempts in any `windowMs`. Refused attempts are not
 * recorded, so a caller that waits `retryAfterMs` is let through.
 */
export interface RateLimitDecision {
  allowed: boolean;
  hits: number[];
  retryAfterMs: number;
}

export function decide(
  previousHits: readonly number[],
  now: number,
  limit: number,
  windowMs: number,
): RateLimitDecision {
  const hits = previousHits.filter((at) => at > now - windowMs);
  if (hits.length < limit) return { allowed: true, hits: [...hits, now], retryAfterMs: 0 };
  const oldest = Math.min(...hits);
  return { allowed: false, hits, retryAfterMs: Math.max(1, oldest + windowMs - now) };
}
