import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { signAccessToken } from '../../src/domain/access-tokens.ts';
import { hashApiKeySecret } from '../../src/domain/api-key-secrets.ts';
import { bytesToBase64Url } from '../../src/lib/encoding.ts';
import { newId } from '../../src/lib/ids.ts';
import { createRouter } from '../../src/lib/openapi.ts';
import { requireAuth } from '../../src/middleware/auth.ts';
import { handleError } from '../../src/middleware/error-handler.ts';
import { requestContext } from '../../src/middleware/request-context.ts';
import { call, createKey, expectError, seedSession, type ApiResponse, type Session } from '../helpers/api.ts';
import { recordResponse, trackSecret } from '../helpers/leak-scan.ts';

/** A test-only app with one business-style route, to exercise the middleware alone. */
const probeApp = createRouter();
probeApp.use('*', requestContext);
probeApp.onError(handleError);
probeApp.get('/probe', requireAuth({ accept: 'any', scope: 'payments:read' }), (c) => c.json({ data: c.get('auth') }));
probeApp.get('/probe-user', requireAuth({ accept: 'user' }), (c) => c.json({ data: c.get('auth') }));

/**
 * Calls the probe app with the given Authorization header (or none) and waits for its background work
 * (`waitUntil`), recording the response for the leak scan like `call` does.
 */
async function probe(authorization: string | undefined, path = '/probe'): Promise<ApiResponse> {
  const headers: Record<string, string> = authorization === undefined ? {} : { Authorization: authorization };
  const ctx = createExecutionContext();
  const res = await probeApp.request(path, { headers }, env, ctx);
  await waitOnExecutionContext(ctx);
  const text = await res.text();
  const id = recordResponse(`GET ${path}`, res.status, text);
  return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : undefined, id };
}

const bearer = (token: string) => `Bearer ${token}`;
const randomKeyBody = () => bytesToBase64Url(crypto.getRandomValues(new Uint8Array(32)));

/** A credential that must never be echoed anywhere. */
function untrusted(secret: string): string {
  trackSecret('api_key_secret', secret);
  return secret;
}

async function keyListing(session: Session, keyId: string) {
  const res = await call('GET', '/v1/account/api-keys?limit=100', { token: session.accessToken });
  expect(res.status).toBe(200);
  return res.body.data.find((k: { id: string }) => k.id === keyId);
}

let owner: Session;
let admin: Session;

beforeAll(async () => {
  owner = await seedSession();
  admin = await seedSession({ role: 'admin' });
});

describe('requireAuth with an API key', () => {
  it('authenticates a valid key as kind api_key, for the key owner', async () => {
    const key = await createKey(owner, ['payments:read', 'payments:create']);
    const res = await probe(bearer(key.secret));
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      kind: 'api_key',
      ownerId: owner.user.id,
      apiKeyId: key.id,
      role: null,
      scopes: ['payments:create', 'payments:read'],
      environment: 'test',
    });
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
  });

  it('accepts the scheme name in any case', async () => {
    const key = await createKey(owner, ['payments:read']);
    expect((await probe(`bearer ${key.secret}`)).status).toBe(200);
    expect((await probe(`BEARER ${key.secret}`)).status).toBe(200);
  });

  it('takes the owner of a key an admin made for someone else', async () => {
    const res = await call('POST', '/v1/account/api-keys', {
      token: admin.accessToken,
      body: { name: 'managed', scopes: ['payments:read'], user_id: owner.user.id },
    });
    expect(res.status).toBe(201);
    const probed = await probe(bearer(res.body.data.secret));
    expect(probed.status).toBe(200);
    expect(probed.body.data).toMatchObject({ kind: 'api_key', ownerId: owner.user.id, apiKeyId: res.body.data.id });
  });

  it('refuses a key lacking the scope with 403 insufficient_scope', async () => {
    const key = await createKey(owner, ['payments:create', 'refunds:create']);
    const res = await probe(bearer(key.secret));
    const error = expectError(res, 403, 'insufficient_scope');
    expect(error.category).toBe('authorization');
    expect(error.retryable).toBe(false);
    expect(error.details).toEqual({ required_scope: 'payments:read' });
  });

  it('refuses a revoked key with 401 unauthorized', async () => {
    const key = await createKey(owner, ['payments:read']);
    expect((await probe(bearer(key.secret))).status).toBe(200);
    const revoked = await call('POST', `/v1/account/api-keys/${key.id}/revoke`, { token: owner.accessToken });
    expect(revoked.status).toBe(200);
    const error = expectError(await probe(bearer(key.secret)), 401, 'unauthorized');
    expect(error.category).toBe('authentication');
  });

  it('refuses a well-formed sk_live_ key on this test deployment', async () => {
    expectError(await probe(bearer(untrusted(`sk_live_${randomKeyBody()}`))), 401, 'unauthorized');
  });

  it('refuses a key stored for the other environment, even with a test-looking secret', async () => {
    // Defence in depth: the lookup itself is pinned to the deployment's environment.
    const secret = untrusted(`sk_test_${randomKeyBody()}`);
    const now = Date.now();
    await env.DB.prepare(
      'INSERT INTO api_keys (id, user_id, name, scopes, environment, status, secret_hash, prefix, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    )
      .bind(
        newId('key'),
        owner.user.id,
        'live key',
        JSON.stringify(['payments:read']),
        'live',
        'active',
        await hashApiKeySecret(env.API_KEY_PEPPER, secret),
        secret.slice(0, 12),
        now,
      )
      .run();
    expectError(await probe(bearer(secret)), 401, 'unauthorized');
  });

  it('refuses unknown or malformed sk_test_ keys', async () => {
    const key = await createKey(owner, ['payments:read']);
    const candidates = [
      `sk_test_${randomKeyBody()}`,
      key.secret.slice(0, -1),
      `${key.secret}x`,
      `${key.secret.slice(0, -1)}${key.secret.endsWith('A') ? 'B' : 'A'}`,
      `sk_test_${'!'.repeat(43)}`,
      key.secret.replace('sk_test_', 'sk_TEST_'),
      key.secret.replace('sk_test_', 'sk_live_'),
    ];
    for (const candidate of candidates) {
      // A prefix of the real secret legitimately appears in its creation response; the rest may appear nowhere.
      expectError(
        await probe(bearer(key.secret.includes(candidate) ? candidate : untrusted(candidate))),
        401,
        'unauthorized',
      );
    }
  });

  it('sets last_used_at after the first use', async () => {
    const key = await createKey(owner, ['payments:read']);
    expect((await keyListing(owner, key.id)).last_used_at).toBeNull();
    // `probe` waits for the execution context, where the update runs in waitUntil.
    expect((await probe(bearer(key.secret))).status).toBe(200);
    const listed = await keyListing(owner, key.id);
    expect(listed.last_used_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(Date.parse(listed.last_used_at)).toBeGreaterThanOrEqual(Date.parse(listed.created_at));
  });

  it('leaves last_used_at unset for a refused secret', async () => {
    const key = await createKey(owner, ['payments:read']);
    await probe(bearer(untrusted(`sk_test_${randomKeyBody()}`)));
    expect((await keyListing(owner, key.id)).last_used_at).toBeNull();
  });

  it('is refused on management routes with 401 unauthorized', async () => {
    const adminKey = await createKey(admin);
    const ownerKey = await createKey(owner);
    const attempts: [string, string, string, unknown?][] = [
      ['GET', '/v1/auth/me', ownerKey.secret],
      ['GET', '/v1/account/api-keys', ownerKey.secret],
      ['POST', '/v1/account/api-keys', ownerKey.secret, { name: 'minted', scopes: ['payments:read'] }],
      ['POST', `/v1/account/api-keys/${ownerKey.id}/revoke`, ownerKey.secret],
      ['GET', '/v1/users', adminKey.secret],
      ['GET', `/v1/users/${admin.user.id}`, adminKey.secret],
      ['PATCH', `/v1/users/${owner.user.id}`, adminKey.secret, { role: 'admin' }],
    ];
    for (const [method, path, token, body] of attempts) {
      const res = await call(method, path, { token, ...(body ? { body } : {}) });
      expectError(res, 401, 'unauthorized');
    }
    expectError(await probe(bearer(ownerKey.secret), '/probe-user'), 401, 'unauthorized');
  });

  it("narrows a key to its owner's current scopes", async () => {
    const narrowed = await seedSession();
    const key = await createKey(narrowed, ['payments:read', 'payments:create']);
    expect((await probe(bearer(key.secret))).status).toBe(200);

    // Taking a scope from the user takes it from the user's existing keys at once.
    const patched = await call('PATCH', `/v1/users/${narrowed.user.id}`, {
      token: admin.accessToken,
      body: { scopes: ['payments:create'] },
    });
    expect(patched.status).toBe(200);
    const res = await probe(bearer(key.secret));
    expectError(res, 403, 'insufficient_scope');

    // Giving it back restores the key's own scopes, never more.
    await call('PATCH', `/v1/users/${narrowed.user.id}`, {
      token: admin.accessToken,
      body: { scopes: ['payments:read', 'payments:create', 'refunds:create'] },
    });
    const restored = await probe(bearer(key.secret));
    expect(restored.status).toBe(200);
    expect(restored.body.data.scopes).toEqual(['payments:create', 'payments:read']);
  });
});

describe('requireAuth with a user access token', () => {
  it('authenticates as kind user', async () => {
    const res = await probe(bearer(owner.accessToken));
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      kind: 'user',
      ownerId: owner.user.id,
      userId: owner.user.id,
      role: 'client',
      environment: 'test',
    });
    expect(res.body.data.scopes).toEqual(owner.user.scopes);
    expect(res.body.data.sessionId).toMatch(/^ses_/);
  });

  it('refuses a user lacking the scope with 403 insufficient_scope', async () => {
    const limited = await seedSession({ scopes: ['payments:create'] });
    const error = expectError(await probe(bearer(limited.accessToken)), 403, 'insufficient_scope');
    expect(error.details).toEqual({ required_scope: 'payments:read' });
  });

  it("takes role and scopes from the user's current row, not the token", async () => {
    const user = await seedSession();
    expect((await probe(bearer(user.accessToken))).status).toBe(200);
    await call('PATCH', `/v1/users/${user.user.id}`, {
      token: admin.accessToken,
      body: { scopes: ['refunds:create'] },
    });
    expectError(await probe(bearer(user.accessToken)), 403, 'insufficient_scope');
  });

  it('refuses the token of an ended session', async () => {
    const user = await seedSession();
    expect((await probe(bearer(user.accessToken))).status).toBe(200);
    const out = await call('POST', '/v1/auth/logout', { body: { refresh_token: user.refreshToken } });
    expect(out.status).toBe(204);
    expectError(await probe(bearer(user.accessToken)), 401, 'unauthorized');
  });

  it('refuses a tampered, expired or other-environment token', async () => {
    const [header, payload, signature] = owner.accessToken.split('.');
    const flipped = `${signature!.slice(0, -2)}${signature!.endsWith('AA') ? 'BB' : 'AA'}`;
    const claims = JSON.parse(atob(payload!.replace(/-/g, '+').replace(/_/g, '/')));
    const forgedPayload = bytesToBase64Url(
      new TextEncoder().encode(JSON.stringify({ ...claims, role: 'admin', sub: admin.user.id })),
    );
    const base = { sub: owner.user.id, sid: claims.sid as string, role: 'client' as const, scopes: owner.user.scopes };
    const expired = await signAccessToken(env.JWT_SIGNING_KEY, { ...base, env: 'test' }, Date.now() - 60 * 60 * 1000);
    const live = await signAccessToken(env.JWT_SIGNING_KEY, { ...base, env: 'live' });
    const otherKey = await signAccessToken('another-signing-key-0123456789abcdef0123', { ...base, env: 'test' });
    for (const token of [
      `${header}.${payload}.${flipped}`,
      `${header}.${forgedPayload}.${signature}`,
      expired,
      live,
      otherKey,
    ]) {
      expectError(await probe(bearer(token)), 401, 'unauthorized');
    }
    // The genuine token still works.
    expect((await probe(bearer(owner.accessToken))).status).toBe(200);
  });
});

describe('requireAuth with a missing or malformed Authorization header', () => {
  it.each([
    ['absent', undefined],
    ['empty', ''],
    ['Basic x', 'Basic x'],
    ['Bearer', 'Bearer'],
    ['Bearer with a trailing space', 'Bearer '],
    ['Bearer a b', 'Bearer a b'],
    ['Token scheme', 'Token abcdef'],
    ['no scheme', 'sk_test_abc'],
    ['Bearer garbage', 'Bearer not-a-credential'],
  ])('answers 401 unauthorized when %s', async (_label, authorization) => {
    const res = await probe(authorization);
    const error = expectError(res, 401, 'unauthorized');
    expect(error.category).toBe('authentication');
    expect(error.retryable).toBe(false);
    expect(error.details).toEqual({});
  });

  it('refuses a valid key sent without the Bearer scheme or with two credentials', async () => {
    const key = await createKey(owner, ['payments:read']);
    expectError(await probe(key.secret), 401, 'unauthorized');
    expectError(await probe(`Basic ${key.secret}`), 401, 'unauthorized');
    expectError(await probe(`Bearer ${key.secret} ${key.secret}`), 401, 'unauthorized');
    expectError(await probe(`Bearer ${owner.accessToken} ${key.secret}`), 401, 'unauthorized');
  });
});
