import { DurableObject } from 'cloudflare:workers';
import { decide } from '../domain/rate-limit.ts';

/**
 * One object per rate-limit key (e.g. `login:email:<email>`). A Durable Object runs one call at a time,
 * so concurrent attempts cannot slip past the limit between a read and a write.
 */
export class RateLimiter extends DurableObject {
  async hit(limit: number, windowMs: number): Promise<{ allowed: boolean; retryAfterSeconds: number }> {
    const now = Date.now();
    const previous = (await this.ctx.storage.get<number[]>('hits')) ?? [];
    const decision = decide(previous, now, limit, windowMs);
    if (decision.allowed) {
      await this.ctx.storage.put('hits', decision.hits);
      // Forget the key once its window has passed, so idle keys hold no storage.
      await this.ctx.storage.setAlarm(now + windowMs);
    }
    return { allowed: decision.allowed, retryAfterSeconds: Math.ceil(decision.retryAfterMs / 1000) };
  }

  override async alarm(): Promise<void> {
    await this.ctx.storage.deleteAll();
  }
}
