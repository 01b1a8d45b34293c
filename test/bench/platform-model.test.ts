import { describe, expect, it } from 'vitest';
import { parseRateLimit, rateLimitModel, testRateLimit } from '../../bench/platform-model.ts';
import wranglerToml from '../../wrangler.toml?raw';

describe('the bench’s model of the Rate Limiting binding', () => {
  it('allows `limit` calls per key in a wall-clock window, refuses the next without counting it, and rolls over', async () => {
    let now = 20_000;
    const binding = rateLimitModel({ limit: 2, periodSeconds: 10 }, () => now);
    const answers = async (key: string, n: number) => {
      const out: boolean[] = [];
      for (let i = 0; i < n; i++) out.push((await binding.limit({ key })).success);
      return out;
    };
    expect(await answers('a', 3)).toEqual([true, true, false]);
    expect(await answers('b', 1)).toEqual([true]);
    now = 29_999;
    expect(await answers('a', 1)).toEqual([false]);
    now = 30_000;
    expect(await answers('a', 3)).toEqual([true, true, false]);
  });

  it('reads the rule of the `test` deployment from wrangler.toml, and refuses anything else', () => {
    expect(parseRateLimit(testRateLimit(wranglerToml))).toEqual({ limit: 500, periodSeconds: 10 });
    expect(() =>
      testRateLimit('[[env.test.ratelimits]]\nname = "OTHER"\nsimple = { limit = 1, period = 10 }\n'),
    ).toThrow();
    expect(parseRateLimit('500')).toBeNull();
    expect(parseRateLimit(undefined)).toBeNull();
  });
});
