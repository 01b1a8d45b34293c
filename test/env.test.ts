import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import type { Env } from '../src/env.ts';

// Fails to type-check when test/env.d.ts leaves a binding of the generated types optional.
const deployment: Env = env;

describe('the bindings (src/env.ts, generated from wrangler.toml)', () => {
  it('are those of the `test` deployment', () => {
    expect(deployment.ENVIRONMENT).toBe('test');
    expect(deployment.ALLOW_INSECURE_WEBHOOKS).toBe('false');
  });

  it('type the Durable Object namespaces by their class: a stub is called without a cast', async () => {
    const stub = deployment.RATE_LIMITER.get(deployment.RATE_LIMITER.idFromName(`env-test:${crypto.randomUUID()}`));
    expect(await stub.hit(1, 60_000)).toEqual({ allowed: true, retryAfterSeconds: 0 });
  });
});
