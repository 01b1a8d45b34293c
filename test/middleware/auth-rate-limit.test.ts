import { env, exports } from 'cloudflare:workers';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { API_KEY_RATE_LIMIT_PERIOD_SECONDS } from '../../src/middleware/auth.ts';
import wranglerToml from '../../wrangler.toml?raw';
import { call, createKey, expectError, seedSession, type Session } from '../helpers/api.ts';
import { newReference } from '../helpers/merchant.ts';

/** Requests per API key (src/middleware/auth.ts, docs/limits.md "Per API key"). */

/** `TIGHT_API_KEY_RATE_LIMIT` of vitest.config.ts: 3 requests a minute. */
const TIGHT_LIMIT = 3;
const TIGHT_PERIOD_MS = 60_000;

/**
 * Miniflare's counters live in windows aligned to the clock: a test that spends its budget must not cross into
 * the next window, so it starts a new one when too little of the current one is left.
 */
async function freshWindow(periodMs: number, needMs: number) {
  const left = periodMs - (Date.now() % periodMs);
  if (left < needMs) await new Promise((resolve) => setTimeout(resolve, left + 50));
}

/** Every API key request in this file is counted by the tight binding instead of the deployment's. */
function tightenLimit() {
  const tight = env.TIGHT_API_KEY_RATE_LIMIT;
  vi.spyOn(env.API_KEY_RATE_LIMIT, 'limit').mockImplementation((options) => tight.limit(options));
}

const listMethods = (token: string) => call('GET', '/v1/payment-methods', { token });

function expectRateLimited(res: Awaited<ReturnType<typeof call>>) {
  const error = expectError(res, 429, 'rate_limited');
  expect(error.retryable).toBe(true);
  expect(error.category).toBe('rate_limit');
  expect(res.headers.get('retry-after')).toBe(String(API_KEY_RATE_LIMIT_PERIOD_SECONDS));
  expect(error.details).toEqual({ retry_after_seconds: API_KEY_RATE_LIMIT_PERIOD_SECONDS });
}

describe('requests per API key, beyond the limit', () => {
  let owner: Session;

  beforeEach(async () => {
    owner = await seedSession();
    await freshWindow(TIGHT_PERIOD_MS, 10_000);
    tightenLimit();
  });
  afterEach(() => vi.restoreAllMocks());

  it('are answered 429 rate_limited, retryable, with Retry-After, on reads and idempotent writes alike', async () => {
    const key = await createKey(owner);
    for (let i = 0; i < TIGHT_LIMIT; i++) expect((await listMethods(key.secret)).status).toBe(200);
    expectRateLimited(await listMethods(key.secret));
    expectRateLimited(await call('GET', '/v1/payments', { token: key.secret }));
    const create = await call('POST', '/v1/payments', {
      token: key.secret,
      headers: { 'Idempotency-Key': crypto.randomUUID() },
      body: { amount: { value: '10.00', currency: 'USD' }, external_reference: newReference(), payment_method: 'x' },
    });
    expectRateLimited(create);
  });

  it('leave another key of the same owner untouched', async () => {
    const flooding = await createKey(owner);
    const other = await createKey(owner);
    for (let i = 0; i <= TIGHT_LIMIT; i++) await listMethods(flooding.secret);
    expectRateLimited(await listMethods(flooding.secret));
    for (let i = 0; i < TIGHT_LIMIT; i++) expect((await listMethods(other.secret)).status).toBe(200);
  });

  it('count requests refused for a missing scope; a credential that names no key counts nothing', async () => {
    const key = await createKey(owner, ['payments:read']);
    for (let i = 0; i < TIGHT_LIMIT; i++) expectError(await listMethods(key.secret), 403, 'insufficient_scope');
    expectRateLimited(await call('GET', '/v1/payments', { token: key.secret }));
    for (let i = 0; i <= TIGHT_LIMIT; i++) expectError(await listMethods(`${key.secret}x`), 401, 'unauthorized');
  });

  it('leave user access tokens alone, and never answer 429 on a route an API key cannot use', async () => {
    for (let i = 0; i <= TIGHT_LIMIT; i++) expect((await listMethods(owner.accessToken)).status).toBe(200);
    const key = await createKey(owner);
    for (let i = 0; i <= TIGHT_LIMIT; i++) await listMethods(key.secret);
    expectError(await call('GET', '/v1/account/api-keys', { token: key.secret }), 401, 'unauthorized');
  });

  it('are declared: an operation answers a key past its limit 429 exactly when it lists rate_limited', async () => {
    const key = await createKey(owner);
    for (let i = 0; i < TIGHT_LIMIT; i++) await listMethods(key.secret);
    const spec = (await call('GET', '/openapi.json')).body;
    const limited: string[] = [];
    const declared: string[] = [];
    for (const [path, item] of Object.entries<Record<string, any>>(spec.paths)) {
      for (const [method, operation] of Object.entries<any>(item)) {
        const name = `${method.toUpperCase()} ${path}`;
        const examples = operation.responses['429']?.content['application/json'].examples ?? {};
        // Login and refresh list it too, for their own limit; they take no credential.
        if (operation.security?.length && 'rate_limited' in examples) declared.push(name);
        // `{action}` takes only its declared values: it is routed once per value (lib/openapi.ts, openapiPerValue).
        const res = await call(
          method.toUpperCase(),
          path.replace('{action}', 'approve').replaceAll(/\{[a-z_]+\}/g, 'x'),
          {
            token: key.secret,
            headers: { 'Idempotency-Key': crypto.randomUUID() },
          },
        );
        if (res.status === 429) limited.push(name);
      }
    }
    expect(limited.length).toBeGreaterThanOrEqual(13);
    expect(limited).toEqual(declared);
  });
});

describe("the deployment's own limit", () => {
  it('is 500 requests per 10 seconds in `test`, counted by the binding wrangler.toml declares', async () => {
    const owner = await seedSession();
    const key = await createKey(owner, ['payments:read']);
    // Each answers 403 insufficient_scope (no D1 read once the key is cached): cheap, and counted all the same.
    const send = () =>
      exports.default.fetch(
        new Request('http://localhost/v1/payment-methods', { headers: { Authorization: `Bearer ${key.secret}` } }),
      );
    let accepted = 0;
    let refused: Response | undefined;
    // Two windows at most: the flood may start late in one.
    while (!refused && accepted <= 1_000) {
      const batch = await Promise.all(Array.from({ length: 50 }, send));
      for (const res of batch) {
        if (res.status === 429) refused ??= res;
        else {
          expect(res.status).toBe(403);
          accepted++;
        }
        await res.body?.cancel();
      }
    }
    expect(refused?.headers.get('retry-after')).toBe('10');
    expect(accepted).toBeGreaterThanOrEqual(500);
    expect(accepted).toBeLessThanOrEqual(1_000);
  });

  it('wrangler.toml: each environment its own counter, the documented limit, and the period Retry-After names', () => {
    const blocks = [...wranglerToml.matchAll(/^\[\[env\.(\w+)\.ratelimits\]\]\n((?:[^[\n].*\n)+)/gm)].map(
      ([, environment, body]) => ({
        environment,
        name: /^name = "(\w+)"/m.exec(body!)?.[1],
        namespace: /^namespace_id = "(\d+)"/m.exec(body!)?.[1],
        limit: Number(/limit = (\d+)/.exec(body!)?.[1]),
        period: Number(/period = (\d+)/.exec(body!)?.[1]),
      }),
    );
    expect(blocks.map(({ namespace: _, ...rest }) => rest)).toEqual([
      { environment: 'test', name: 'API_KEY_RATE_LIMIT', limit: 500, period: API_KEY_RATE_LIMIT_PERIOD_SECONDS },
      { environment: 'live', name: 'API_KEY_RATE_LIMIT', limit: 1_000, period: API_KEY_RATE_LIMIT_PERIOD_SECONDS },
    ]);
    expect(new Set(blocks.map((b) => b.namespace)).size).toBe(2);
  });
});
