/**
 * When a failed webhook delivery is tried again (docs/webhooks.md, "Delivery"): about 30 s, 2 min, 10 min, 1 h, then
 * every 6 h, for 3 days from the event; after that the delivery is dead-lettered (kept, not retried).
 * A ±10% jitter keeps a receiver that was down from being hit by every retry at the same instant.
 */
export const RETRY_DELAYS_SECONDS = [30, 120, 600, 3600] as const;
export const STEADY_RETRY_SECONDS = 6 * 3600;
export const DELIVERY_WINDOW_MS = 3 * 24 * 3600 * 1000;

/** Delay before the attempt that follows `failedAttempts` failures, in seconds, with jitter. */
export function retryDelaySeconds(failedAttempts: number, random: () => number = Math.random): number {
  const base = RETRY_DELAYS_SECONDS[failedAttempts - 1] ?? STEADY_RETRY_SECONDS;
  const jitter = 1 + (random() * 2 - 1) * 0.1;
  return Math.max(1, Math.round(base * jitter));
}

/** The next attempt time, or null when it would fall outside the three-day window: dead-letter. */
export function nextAttemptAt(
  eventCreatedAt: number,
  failedAttempts: number,
  now: number,
  random: () => number = Math.random,
): number | null {
  const at = now + retryDelaySeconds(failedAttempts, random) * 1000;
  return at > eventCreatedAt + DELIVERY_WINDOW_MS ? null : at;
}
