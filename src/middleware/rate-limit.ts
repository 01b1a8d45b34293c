import type { Context } from 'hono';
import type { AppEnv } from '../env.ts';
import { ApiError } from '../lib/errors.ts';

/** Session endpoints: at most 10 attempts a minute per client address and per account (CONTRACT.md). */
export const SESSION_RATE_LIMIT = { limit: 10, windowMs: 60_000 } as const;

export function clientAddress(c: Context<AppEnv>): string {
  // Set by Cloudflare's edge on every request; a client cannot forge it there.
  return c.req.header('cf-connecting-ip') ?? 'unknown';
}

/** Counts one attempt against every key; refuses with 429 and `Retry-After` when any key is over. */
export async function enforceRateLimit(c: Context<AppEnv>, keys: string[]): Promise<void> {
  const { limit, windowMs } = SESSION_RATE_LIMIT;
  const results = await Promise.all(keys.map((key) => c.env.RATE_LIMITER.get(c.env.RATE_LIMITER.idFromName(key)).hit(limit, windowMs)));
  const refused = results.filter((r) => !r.allowed);
  if (refused.length > 0) {
    const retryAfter = Math.max(...refused.map((r) => r.retryAfterSeconds));
    throw new ApiError('rate_limited', undefined, { headers: { 'Retry-After': String(retryAfter) }, details: { retry_after_seconds: retryAfter } });
  }
}
