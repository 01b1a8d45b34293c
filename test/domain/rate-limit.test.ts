import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { decide } from '../../src/domain/rate-limit.ts';
import { newId } from '../../src/lib/ids.ts';
import { SESSION_RATE_LIMIT } from '../../src/services/rate-limit.ts';

const LIMIT = 10;
const WINDOW = 60_000;
const T0 = 1_800_000_000_000;

/** Feeds attempts at the given times through `decide`, carrying the state like the limiter does. */
function run(times: number[], limit = LIMIT, windowMs = WINDOW) {
  let hits: number[] = [];
  const decisions = times.map((at) => {
    const decision = decide(hits, at, limit, windowMs);
    hits = decision.hits;
    return decision;
  });
  return { decisions, hits };
}

describe('decide() sliding window', () => {
  it('allows up to the limit, then refuses', () => {
    const { decisions } = run(Array.from({ length: LIMIT + 1 }, (_, i) => T0 + i * 100));
    expect(decisions.slice(0, LIMIT).every((d) => d.allowed && d.retryAfterMs === 0)).toBe(true);
    expect(decisions[LIMIT]!.allowed).toBe(false);
  });

  it('records each allowed attempt', () => {
    const first = decide([], T0, LIMIT, WINDOW);
    expect(first).toEqual({ allowed: true, hits: [T0], retryAfterMs: 0 });
    const second = decide(first.hits, T0 + 5, LIMIT, WINDOW);
    expect(second.hits).toEqual([T0, T0 + 5]);
  });

  it('does not record refused attempts, nor let them extend the wait', () => {
    const full = Array.from({ length: LIMIT }, (_, i) => T0 + i);
    const refused = decide(full, T0 + 1_000, LIMIT, WINDOW);
    expect(refused.allowed).toBe(false);
    expect(refused.hits).toEqual(full);

    // Hammering while refused changes nothing: the wait still ends when the oldest hit expires.
    let hits = full;
    for (let at = T0 + 2_000; at < T0 + WINDOW; at += 5_000) {
      const decision = decide(hits, at, LIMIT, WINDOW);
      expect(decision.allowed).toBe(false);
      expect(decision.retryAfterMs).toBe(T0 + WINDOW - at);
      hits = decision.hits;
    }
    expect(hits).toEqual(full);
    expect(decide(hits, T0 + WINDOW, LIMIT, WINDOW).allowed).toBe(true);
  });

  it('does not mutate the hits it is given', () => {
    const previous = Object.freeze([T0, T0 + 1]);
    const decision = decide(previous, T0 + 2, LIMIT, WINDOW);
    expect(previous).toEqual([T0, T0 + 1]);
    expect(decision.hits).toEqual([T0, T0 + 1, T0 + 2]);
  });

  it('lets a hit expire exactly one window later', () => {
    const full = Array.from({ length: LIMIT }, () => T0);
    expect(decide(full, T0 + WINDOW - 1, LIMIT, WINDOW).allowed).toBe(false);
    const after = decide(full, T0 + WINDOW, LIMIT, WINDOW);
    expect(after.allowed).toBe(true);
    // The expired hits are dropped from the stored state.
    expect(after.hits).toEqual([T0 + WINDOW]);
  });

  it('slides: only as many slots free up as hits have expired', () => {
    // Five hits early, five hits half a window later.
    const times = [
      ...Array.from({ length: 5 }, (_, i) => T0 + i),
      ...Array.from({ length: 5 }, (_, i) => T0 + 30_000 + i),
    ];
    const { hits } = run(times);
    expect(hits).toHaveLength(LIMIT);

    // After the first five expire, exactly five more are allowed; the sixth waits for the later batch.
    const now = T0 + WINDOW + 10;
    const { decisions } = (() => {
      let state = hits;
      const decisions = Array.from({ length: 6 }, () => {
        const d = decide(state, now, LIMIT, WINDOW);
        state = d.hits;
        return d;
      });
      return { decisions };
    })();
    expect(decisions.slice(0, 5).every((d) => d.allowed)).toBe(true);
    expect(decisions[5]!.allowed).toBe(false);
    expect(decisions[5]!.retryAfterMs).toBe(T0 + 30_000 + WINDOW - now);
  });

  it('computes Retry-After from the oldest hit in the window', () => {
    const hits = Array.from({ length: LIMIT }, (_, i) => T0 + i * 1_000);
    const now = T0 + 20_000;
    const refused = decide(hits, now, LIMIT, WINDOW);
    expect(refused.retryAfterMs).toBe(T0 + WINDOW - now);
    // Waiting exactly that long is enough.
    expect(decide(refused.hits, now + refused.retryAfterMs, LIMIT, WINDOW).allowed).toBe(true);
    // A moment less is not.
    expect(decide(refused.hits, now + refused.retryAfterMs - 1, LIMIT, WINDOW).allowed).toBe(false);
  });

  it('never answers a Retry-After below 1 ms or above the window', () => {
    for (let offset = 0; offset < WINDOW; offset += 7_919) {
      const hits = Array.from({ length: LIMIT }, () => T0);
      const d = decide(hits, T0 + offset, LIMIT, WINDOW);
      expect(d.allowed).toBe(false);
      expect(d.retryAfterMs).toBeGreaterThanOrEqual(1);
      expect(d.retryAfterMs).toBeLessThanOrEqual(WINDOW);
    }
  });

  it('keeps counting hits stamped after now (a clock step back does not reopen the window)', () => {
    const hits = Array.from({ length: LIMIT }, () => T0 + 1_000);
    const d = decide(hits, T0, LIMIT, WINDOW);
    expect(d.allowed).toBe(false);
    expect(d.retryAfterMs).toBe(WINDOW + 1_000);
  });

  it('works with a limit of one', () => {
    const { decisions } = run([T0, T0 + 1, T0 + WINDOW - 1, T0 + WINDOW], 1);
    expect(decisions.map((d) => d.allowed)).toEqual([true, false, false, true]);
    expect(decisions[1]!.retryAfterMs).toBe(WINDOW - 1);
    expect(decisions[2]!.retryAfterMs).toBe(1);
  });
});

describe('session rate limit settings and the RateLimiter object', () => {
  it('is 10 attempts a minute, as the contract says', () => {
    expect(SESSION_RATE_LIMIT).toEqual({ limit: 10, windowMs: 60_000 });
  });

  it('allows up to the limit per key, then answers whole seconds to wait', async () => {
    const limiters = env.RATE_LIMITER;
    const limiter = limiters.get(limiters.idFromName(`test:${newId('k')}`));
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await limiter.hit(3, 60_000));
    expect(results.slice(0, 3).map((r) => r.allowed)).toEqual([true, true, true]);
    expect(results.slice(0, 3).every((r) => r.retryAfterSeconds === 0)).toBe(true);
    const refused = results[3]!;
    expect(refused.allowed).toBe(false);
    expect(Number.isInteger(refused.retryAfterSeconds)).toBe(true);
    expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(refused.retryAfterSeconds).toBeLessThanOrEqual(60);

    // Another key is independent.
    const other = limiters.get(limiters.idFromName(`test:${newId('k')}`));
    expect((await other.hit(3, 60_000)).allowed).toBe(true);
  });
});
