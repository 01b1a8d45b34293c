import { env } from 'cloudflare:workers';
import { SignJWT, decodeJwt, decodeProtectedHeader } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { ACCESS_TOKEN_TTL_SECONDS, signAccessToken } from '../../src/domain/access-tokens.ts';
import { sha256Hex } from '../../src/lib/encoding.ts';
import { newId } from '../../src/lib/ids.ts';
import { call, createKey, expectError, login, randomIp, seedSession, seedUser, type Session } from '../helpers/api.ts';

/** The signing key of the test deployment (vitest.config.ts). */
const TEST_JWT_KEY = 'test-jwt-signing-key-0123456789abcdef0123456789';
const ISSUER = 'payment-service';
const AUDIENCE = 'payment-service:test';
const USER_FIELDS = ['created_at', 'email', 'id', 'name', 'role', 'scopes', 'updated_at'];

const me = (token: string) => call('GET', '/v1/auth/me', { token });
const refresh = (refreshToken: string, headers?: Record<string, string>) =>
  call('POST', '/v1/auth/refresh', { body: { refresh_token: refreshToken }, ...(headers ? { headers } : {}) });
const postLogin = (body: unknown, headers?: Record<string, string>) =>
  call('POST', '/v1/auth/login', { body, ...(headers ? { headers } : {}) });

const uniqueEmail = () => `${newId('u')}@example.com`;

function sessionIdOf(accessToken: string): string {
  return decodeJwt(accessToken).sid as string;
}

async function refreshTokenRows(sessionId: string) {
  const { results } = await env.DB.prepare(
    'SELECT id, used_at, replaced_by FROM refresh_tokens WHERE session_id = ? ORDER BY created_at',
  )
    .bind(sessionId)
    .all<{ id: string; used_at: number | null; replaced_by: string | null }>();
  return results;
}

/** Error fields that must not differ between two answers of the same code (request ids always do). */
function comparable(error: Record<string, unknown>) {
  const { request_id: _ignored, ...rest } = error;
  return rest;
}

function expectRateLimited(res: Awaited<ReturnType<typeof call>>) {
  const error = expectError(res, 429, 'rate_limited');
  expect(error.category).toBe('rate_limit');
  expect(error.retryable).toBe(true);
  const retryAfter = res.headers.get('retry-after');
  expect(retryAfter).toMatch(/^\d+$/);
  const seconds = Number(retryAfter);
  expect(seconds).toBeGreaterThanOrEqual(1);
  expect(seconds).toBeLessThanOrEqual(60);
  expect(error.details.retry_after_seconds).toBe(seconds);
}

describe('POST /v1/auth/login', () => {
  it('answers 201 with a Bearer session for the user', async () => {
    const user = await seedUser();
    const res = await postLogin({ email: user.email, password: user.password });
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const data = res.body.data;
    expect(Object.keys(data).sort()).toEqual(['access_token', 'expires_in', 'refresh_token', 'token_type', 'user']);
    expect(data.token_type).toBe('Bearer');
    expect(data.expires_in).toBe(900);
    expect(data.refresh_token).toMatch(/^rt_[A-Za-z0-9_-]{43}$/);
    expect(Object.keys(data.user).sort()).toEqual(USER_FIELDS);
    expect(data.user).toMatchObject({ id: user.id, email: user.email, role: 'client', scopes: user.scopes });

    expect(decodeProtectedHeader(data.access_token)).toEqual({ alg: 'HS256', typ: 'at+jwt' });
    const claims = decodeJwt(data.access_token);
    expect(claims).toMatchObject({ sub: user.id, iss: ISSUER, aud: AUDIENCE, env: 'test', role: 'client' });
    expect(claims.exp! - claims.iat!).toBe(ACCESS_TOKEN_TTL_SECONDS);
    expect(typeof claims.jti).toBe('string');

    // Only the hash of the refresh token is stored.
    const sessionId = sessionIdOf(data.access_token);
    const stored = await env.DB.prepare('SELECT token_hash FROM refresh_tokens WHERE session_id = ?')
      .bind(sessionId)
      .all<{ token_hash: string }>();
    expect(stored.results).toEqual([{ token_hash: await sha256Hex(data.refresh_token) }]);

    expect((await me(data.access_token)).status).toBe(200);
  });

  it('answers a wrong password and an unknown email alike: 401 invalid_credentials', async () => {
    const user = await seedUser();
    const wrong = await postLogin({ email: user.email, password: 'not-the-right-password' });
    const unknown = await postLogin({ email: uniqueEmail(), password: 'not-the-right-password' });
    const a = expectError(wrong, 401, 'invalid_credentials');
    const b = expectError(unknown, 401, 'invalid_credentials');
    expect(a.category).toBe('authentication');
    expect(a.retryable).toBe(false);
    expect(comparable(a)).toEqual(comparable(b));
    expect(Object.keys(wrong.body).sort()).toEqual(Object.keys(unknown.body).sort());
    expect(wrong.text).not.toContain(user.email);
  });

  it('treats the email case-insensitively and ignores surrounding spaces', async () => {
    const user = await seedUser();
    const upper = await postLogin({ email: user.email.toUpperCase(), password: user.password });
    expect(upper.status).toBe(201);
    expect(upper.body.data.user.id).toBe(user.id);
    const spaced = await postLogin({ email: `  ${user.email}  `, password: user.password });
    expect(spaced.status).toBe(201);
  });

  it('refuses a password that differs only in case', async () => {
    const user = await seedUser();
    expectError(
      await postLogin({ email: user.email, password: user.password.toUpperCase() }),
      401,
      'invalid_credentials',
    );
  });

  describe('validation: 400 invalid_request naming the field, never its value', () => {
    it('names each missing field', async () => {
      const res = await postLogin({});
      const error = expectError(res, 400, 'invalid_request');
      const fields = (error.details.fields as { field: string }[]).map((f) => f.field).sort();
      expect(fields).toEqual(['email', 'password']);

      const onlyEmail = expectError(await postLogin({ email: uniqueEmail() }), 400, 'invalid_request');
      expect((onlyEmail.details.fields as { field: string }[]).map((f) => f.field)).toEqual(['password']);
    });

    it('answers an empty body like one missing every field', async () => {
      const error = expectError(await call('POST', '/v1/auth/login'), 400, 'invalid_request');
      expect((error.details.fields as { field: string }[]).map((f) => f.field).sort()).toEqual(['email', 'password']);
    });

    it('refuses a number as password without echoing it', async () => {
      const res = await postLogin({ email: uniqueEmail(), password: 987654321987 });
      const error = expectError(res, 400, 'invalid_request');
      expect(error.details.fields).toEqual([expect.objectContaining({ field: 'password' })]);
      expect(res.text).not.toContain('987654321987');
    });

    it('refuses a non-string email', async () => {
      const res = await postLogin({ email: ['someone@example.com'], password: 'whatever-password' });
      const error = expectError(res, 400, 'invalid_request');
      expect(error.details.fields).toEqual([expect.objectContaining({ field: 'email' })]);
      expect(res.text).not.toContain('someone@example.com');
    });

    it('refuses an unknown extra field, naming it without its value', async () => {
      const user = await seedUser();
      const res = await postLogin({
        email: user.email,
        password: user.password,
        remember_me: 'value-that-must-not-echo',
      });
      const error = expectError(res, 400, 'invalid_request');
      expect(error.details.fields).toEqual([{ field: 'remember_me', issue: 'Unknown field' }]);
      expect(res.text).not.toContain('value-that-must-not-echo');
    });

    it('refuses empty strings', async () => {
      const error = expectError(await postLogin({ email: '', password: '' }), 400, 'invalid_request');
      expect((error.details.fields as { field: string }[]).map((f) => f.field).sort()).toEqual(['email', 'password']);
    });

    it('refuses malformed JSON without quoting it', async () => {
      const res = await call('POST', '/v1/auth/login', {
        rawBody: '{"email": "quoted@example.com", "password": "half-a-secret',
        headers: { 'Content-Type': 'application/json' },
      });
      expectError(res, 400, 'invalid_request');
      expect(res.text).not.toContain('half-a-secret');
      expect(res.text).not.toContain('quoted@example.com');
    });

    it('refuses a JSON body that is not an object', async () => {
      const res = await call('POST', '/v1/auth/login', {
        rawBody: '["a", "b"]',
        headers: { 'Content-Type': 'application/json' },
      });
      expectError(res, 400, 'invalid_request');
    });
  });

  describe('rate limit', () => {
    it('refuses the 11th attempt within a minute from one address with 429 and Retry-After', async () => {
      const ip = randomIp();
      for (let i = 0; i < 10; i++) {
        // Other emails each time, so only the address limit can be reached.
        expectError(
          await postLogin({ email: uniqueEmail(), password: 'wrong-password-attempt' }, { 'CF-Connecting-IP': ip }),
          401,
          'invalid_credentials',
        );
      }
      expectRateLimited(
        await postLogin({ email: uniqueEmail(), password: 'wrong-password-attempt' }, { 'CF-Connecting-IP': ip }),
      );

      // Even correct credentials wait; other addresses are not affected.
      const user = await seedUser();
      expectRateLimited(await postLogin({ email: user.email, password: user.password }, { 'CF-Connecting-IP': ip }));
      expect((await postLogin({ email: user.email, password: user.password })).status).toBe(201);
    });

    it('refuses the 11th attempt for one email across different addresses', async () => {
      const user = await seedUser();
      for (let i = 0; i < 10; i++) {
        // Varying the case still counts against the same account.
        const email = i % 2 === 0 ? user.email : user.email.toUpperCase();
        expectError(await postLogin({ email, password: 'wrong-password-attempt' }), 401, 'invalid_credentials');
      }
      expectRateLimited(await postLogin({ email: user.email, password: user.password }));
      // Another account from a fresh address is unaffected.
      const other = await seedUser();
      expect((await postLogin({ email: other.email, password: other.password })).status).toBe(201);
    });

    it('also counts attempts for unknown emails', async () => {
      const email = uniqueEmail();
      for (let i = 0; i < 10; i++) {
        expectError(await postLogin({ email, password: 'wrong-password-attempt' }), 401, 'invalid_credentials');
      }
      expectRateLimited(await postLogin({ email, password: 'wrong-password-attempt' }));
    });
  });
});

describe('POST /v1/auth/refresh', () => {
  it('answers 201 with a new pair; the old refresh token then fails with 401 invalid_refresh_token', async () => {
    const session = await seedSession();
    const res = await refresh(session.refreshToken);
    expect(res.status).toBe(201);
    const data = res.body.data;
    expect(Object.keys(data).sort()).toEqual(['access_token', 'expires_in', 'refresh_token', 'token_type', 'user']);
    expect(data.token_type).toBe('Bearer');
    expect(data.expires_in).toBe(900);
    expect(data.user.id).toBe(session.user.id);
    expect(data.refresh_token).not.toBe(session.refreshToken);
    expect(data.access_token).not.toBe(session.accessToken);
    // Same session, same chain.
    expect(sessionIdOf(data.access_token)).toBe(sessionIdOf(session.accessToken));
    expect((await me(data.access_token)).status).toBe(200);

    const again = expectError(await refresh(session.refreshToken), 401, 'invalid_refresh_token');
    expect(again.retryable).toBe(false);
    expect(again.category).toBe('authentication');
  });

  it('a chain of refreshes keeps working while each token is used once', async () => {
    const session = await seedSession();
    let token = session.refreshToken;
    for (let i = 0; i < 3; i++) {
      const res = await refresh(token);
      expect(res.status).toBe(201);
      token = res.body.data.refresh_token;
    }
    const rows = await refreshTokenRows(sessionIdOf(session.accessToken));
    expect(rows).toHaveLength(4);
    expect(rows.filter((r) => r.used_at === null)).toHaveLength(1);
  });

  it('reuse of a rotated token revokes the whole chain, successor and access tokens included', async () => {
    const session = await seedSession();
    const rotated = await refresh(session.refreshToken);
    expect(rotated.status).toBe(201);
    const successor = rotated.body.data;

    expectError(await refresh(session.refreshToken), 401, 'invalid_refresh_token');

    expectError(await refresh(successor.refresh_token), 401, 'invalid_refresh_token');
    expectError(await me(successor.access_token), 401, 'unauthorized');
    expectError(await me(session.accessToken), 401, 'unauthorized');
  });

  it('concurrent exchanges of one token mint at most one successor', async () => {
    const session = await seedSession();
    const results = await Promise.all(Array.from({ length: 5 }, () => refresh(session.refreshToken)));
    const created = results.filter((r) => r.status === 201);
    expect(created.length).toBeLessThanOrEqual(1);
    for (const res of results.filter((r) => r.status !== 201)) expectError(res, 401, 'invalid_refresh_token');

    const rows = await refreshTokenRows(sessionIdOf(session.accessToken));
    // The original token plus at most one successor.
    expect(rows.length).toBeLessThanOrEqual(2);
    expect(rows.filter((r) => r.replaced_by !== null).length).toBeLessThanOrEqual(1);
    // The losers' exchanges were reuses: nothing of the chain works any more.
    expectError(await refresh(session.refreshToken), 401, 'invalid_refresh_token');
    for (const res of created) expectError(await refresh(res.body.data.refresh_token), 401, 'invalid_refresh_token');
  });

  it('refuses an expired refresh token', async () => {
    const session = await seedSession();
    await env.DB.prepare('UPDATE refresh_tokens SET expires_at = ? WHERE token_hash = ?')
      .bind(Date.now() - 1000, await sha256Hex(session.refreshToken))
      .run();
    expectError(await refresh(session.refreshToken), 401, 'invalid_refresh_token');
  });

  it('refuses garbage and unknown tokens', async () => {
    expectError(await refresh('garbage'), 401, 'invalid_refresh_token');
    expectError(await refresh(`rt_${'A'.repeat(43)}`), 401, 'invalid_refresh_token');
  });

  it('refuses an access token presented as a refresh token', async () => {
    const session = await seedSession();
    const res = await refresh(session.accessToken);
    // Refused either as too long for a refresh token (400) or as unknown (401); never exchanged.
    expect([400, 401]).toContain(res.status);
    expectError(res, res.status, res.status === 400 ? 'invalid_request' : 'invalid_refresh_token');
    // The session itself is untouched.
    expect((await me(session.accessToken)).status).toBe(200);
  });

  it('validates the body: missing, wrong type, extra field', async () => {
    const missing = expectError(await call('POST', '/v1/auth/refresh', { body: {} }), 400, 'invalid_request');
    expect(missing.details.fields).toEqual([expect.objectContaining({ field: 'refresh_token' })]);
    const wrongType = expectError(
      await call('POST', '/v1/auth/refresh', { body: { refresh_token: 12345 } }),
      400,
      'invalid_request',
    );
    expect(wrongType.details.fields).toEqual([expect.objectContaining({ field: 'refresh_token' })]);

    const session = await seedSession();
    const extra = await call('POST', '/v1/auth/refresh', {
      body: { refresh_token: session.refreshToken, scope: 'admin' },
    });
    expect(expectError(extra, 400, 'invalid_request').details.fields).toEqual([
      { field: 'scope', issue: 'Unknown field' },
    ]);
    // A refused request exchanges nothing.
    expect((await refresh(session.refreshToken)).status).toBe(201);
  });

  it('refuses a refresh token of a session that was logged out', async () => {
    const session = await seedSession();
    expect((await call('POST', '/v1/auth/logout', { body: { refresh_token: session.refreshToken } })).status).toBe(204);
    expectError(await refresh(session.refreshToken), 401, 'invalid_refresh_token');
  });

  describe('rate limit', () => {
    it('refuses the 11th attempt within a minute from one address', async () => {
      const ip = randomIp();
      for (let i = 0; i < 10; i++) {
        expectError(await refresh(`rt_garbage_${i}`, { 'CF-Connecting-IP': ip }), 401, 'invalid_refresh_token');
      }
      expectRateLimited(await refresh('rt_garbage_last', { 'CF-Connecting-IP': ip }));
      // A valid token from that address waits too, and is not consumed by the refused attempt.
      const session = await seedSession();
      expectRateLimited(await refresh(session.refreshToken, { 'CF-Connecting-IP': ip }));
      expect((await refresh(session.refreshToken)).status).toBe(201);
    });

    it('refuses the 11th attempt with one token across addresses', async () => {
      const guessed = `rt_${newId('guess')}`;
      for (let i = 0; i < 10; i++) expectError(await refresh(guessed), 401, 'invalid_refresh_token');
      expectRateLimited(await refresh(guessed));
    });
  });
});

describe('POST /v1/auth/logout', () => {
  it('with a refresh token: 204 without a body, and the session ends', async () => {
    const session = await seedSession();
    const res = await call('POST', '/v1/auth/logout', { body: { refresh_token: session.refreshToken } });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expectError(await me(session.accessToken), 401, 'unauthorized');
    expectError(await refresh(session.refreshToken), 401, 'invalid_refresh_token');
  });

  it('with a rotated (older) refresh token of the chain: ends the session too', async () => {
    const session = await seedSession();
    const rotated = await refresh(session.refreshToken);
    expect(rotated.status).toBe(201);
    expect((await call('POST', '/v1/auth/logout', { body: { refresh_token: session.refreshToken } })).status).toBe(204);
    expectError(await refresh(rotated.body.data.refresh_token), 401, 'invalid_refresh_token');
    expectError(await me(rotated.body.data.access_token), 401, 'unauthorized');
  });

  it('with only a bearer access token and no body: 204, and the session ends', async () => {
    const session = await seedSession();
    const res = await call('POST', '/v1/auth/logout', { token: session.accessToken });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expectError(await me(session.accessToken), 401, 'unauthorized');
    expectError(await refresh(session.refreshToken), 401, 'invalid_refresh_token');
  });

  it('with a bearer access token and an empty JSON object: 204, and the session ends', async () => {
    const session = await seedSession();
    expect((await call('POST', '/v1/auth/logout', { token: session.accessToken, body: {} })).status).toBe(204);
    expectError(await me(session.accessToken), 401, 'unauthorized');
  });

  it('with neither: 401 unauthorized', async () => {
    expectError(await call('POST', '/v1/auth/logout'), 401, 'unauthorized');
    expectError(await call('POST', '/v1/auth/logout', { body: {} }), 401, 'unauthorized');
  });

  it('with an invalid bearer and no refresh token: 401 unauthorized', async () => {
    expectError(await call('POST', '/v1/auth/logout', { token: 'not-a-jwt' }), 401, 'unauthorized');
  });

  it('with an API key as bearer and no refresh token: 401 unauthorized', async () => {
    const session = await seedSession();
    const key = await createKey(session, ['payments:read']);
    expectError(await call('POST', '/v1/auth/logout', { token: key.secret }), 401, 'unauthorized');
    expect((await me(session.accessToken)).status).toBe(200);
  });

  it('with an unknown refresh token: 204', async () => {
    const res = await call('POST', '/v1/auth/logout', { body: { refresh_token: `rt_${'B'.repeat(43)}` } });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
  });

  it('twice with the same token: 204 both times', async () => {
    const session = await seedSession();
    expect((await call('POST', '/v1/auth/logout', { body: { refresh_token: session.refreshToken } })).status).toBe(204);
    expect((await call('POST', '/v1/auth/logout', { body: { refresh_token: session.refreshToken } })).status).toBe(204);
  });

  it('refuses an unknown body field', async () => {
    const session = await seedSession();
    const res = await call('POST', '/v1/auth/logout', { token: session.accessToken, body: { all_sessions: true } });
    expect(expectError(res, 400, 'invalid_request').details.fields).toEqual([
      { field: 'all_sessions', issue: 'Unknown field' },
    ]);
    expect((await me(session.accessToken)).status).toBe(200);
  });

  it('leaves the other sessions of the same user working', async () => {
    const user = await seedUser();
    const first = await login(user);
    const second = await login(user);
    const third = await login(user);

    expect((await call('POST', '/v1/auth/logout', { body: { refresh_token: first.refreshToken } })).status).toBe(204);
    expect((await call('POST', '/v1/auth/logout', { token: second.accessToken })).status).toBe(204);

    expectError(await me(first.accessToken), 401, 'unauthorized');
    expectError(await me(second.accessToken), 401, 'unauthorized');
    expect((await me(third.accessToken)).status).toBe(200);
    expect((await refresh(third.refreshToken)).status).toBe(201);
  });
});

describe('GET /v1/auth/me', () => {
  it('answers 200 with the user of the token', async () => {
    const session = await seedSession({ role: 'admin' });
    const res = await me(session.accessToken);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.data).sort()).toEqual(USER_FIELDS);
    expect(res.body.data).toMatchObject({
      id: session.user.id,
      email: session.user.email,
      role: 'admin',
      scopes: session.user.scopes,
    });
    expect(res.text).not.toMatch(/password|hash/i);
  });

  it('reflects the user row, not the token: a demotion takes effect at once', async () => {
    const session = await seedSession({ role: 'admin' });
    await env.DB.prepare("UPDATE users SET role = 'client', scopes = '[]' WHERE id = ?").bind(session.user.id).run();
    const res = await me(session.accessToken);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ role: 'client', scopes: [] });
  });

  it('refuses an API key: management routes need a user token', async () => {
    const session = await seedSession();
    const key = await createKey(session);
    expectError(await me(key.secret), 401, 'unauthorized');
  });

  it('refuses a missing or malformed Authorization header', async () => {
    const session = await seedSession();
    expectError(await call('GET', '/v1/auth/me'), 401, 'unauthorized');
    expectError(
      await call('GET', '/v1/auth/me', { headers: { Authorization: session.accessToken } }),
      401,
      'unauthorized',
    );
    expectError(
      await call('GET', '/v1/auth/me', { headers: { Authorization: `Basic ${session.accessToken}` } }),
      401,
      'unauthorized',
    );
    expectError(await call('GET', '/v1/auth/me', { headers: { Authorization: 'Bearer ' } }), 401, 'unauthorized');
  });

  it('refuses a refresh token used as bearer', async () => {
    const session = await seedSession();
    expectError(await me(session.refreshToken), 401, 'unauthorized');
  });
});

describe('hostile access tokens against GET /v1/auth/me', () => {
  let session: Session;
  let sid: string;
  const key = new TextEncoder().encode(TEST_JWT_KEY);

  beforeAll(async () => {
    session = await seedSession();
    sid = sessionIdOf(session.accessToken);
  });

  interface Forge {
    header?: Record<string, unknown>;
    claims?: Record<string, unknown>;
    sub?: string;
    iss?: string;
    aud?: string;
    iat?: number;
    exp?: number;
    key?: Uint8Array;
  }

  /** A token like the service's own, with exactly one thing changed by `forge`. */
  function forge(options: Forge = {}) {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ role: 'client', scopes: session.user.scopes, env: 'test', sid, ...options.claims })
      .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', ...options.header } as { alg: string })
      .setSubject(options.sub ?? session.user.id)
      .setIssuer(options.iss ?? ISSUER)
      .setAudience(options.aud ?? AUDIENCE)
      .setIssuedAt(options.iat ?? now)
      .setExpirationTime(options.exp ?? now + 900)
      .setJti(crypto.randomUUID())
      .sign(options.key ?? key);
  }

  const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

  it('accepts the unmodified forgery baseline (so each refusal below is due to its one change)', async () => {
    const res = await me(await forge());
    expect(res.status).toBe(200);
    expect(res.body.data.id).toBe(session.user.id);
  });

  it('refuses alg none with an empty signature', async () => {
    const claims = decodeJwt(session.accessToken);
    for (const alg of ['none', 'None', 'NONE']) {
      const token = `${b64url({ alg, typ: 'at+jwt' })}.${b64url(claims)}.`;
      expectError(await me(token), 401, 'unauthorized');
    }
  });

  it('refuses a tampered payload that keeps the original signature', async () => {
    const [header, , signature] = session.accessToken.split('.');
    const claims = { ...decodeJwt(session.accessToken), role: 'admin' };
    expectError(await me(`${header}.${b64url(claims)}.${signature}`), 401, 'unauthorized');
  });

  it('refuses an expired token', async () => {
    const past = Date.now() - (ACCESS_TOKEN_TTL_SECONDS + 60) * 1000;
    const expired = await signAccessToken(
      TEST_JWT_KEY,
      { sub: session.user.id, sid, role: 'client', scopes: session.user.scopes, env: 'test' },
      past,
    );
    expectError(await me(expired), 401, 'unauthorized');
    const now = Math.floor(Date.now() / 1000);
    expectError(await me(await forge({ iat: now - 3600, exp: now - 60 })), 401, 'unauthorized');
  });

  it('refuses a token of the live audience or environment', async () => {
    expectError(await me(await forge({ aud: 'payment-service:live' })), 401, 'unauthorized');
    expectError(await me(await forge({ claims: { env: 'live' } })), 401, 'unauthorized');
    const live = await signAccessToken(TEST_JWT_KEY, {
      sub: session.user.id,
      sid,
      role: 'client',
      scopes: session.user.scopes,
      env: 'live',
    });
    expectError(await me(live), 401, 'unauthorized');
  });

  it('refuses another issuer', async () => {
    expectError(await me(await forge({ iss: 'someone-else' })), 401, 'unauthorized');
  });

  it('refuses the wrong typ header', async () => {
    expectError(await me(await forge({ header: { typ: 'JWT' } })), 401, 'unauthorized');
    expectError(await me(await forge({ header: { typ: undefined } })), 401, 'unauthorized');
  });

  it('refuses a token signed with another key', async () => {
    const other = new TextEncoder().encode('another-jwt-signing-key-0123456789abcdef012345');
    expectError(await me(await forge({ key: other })), 401, 'unauthorized');
  });

  it('refuses HS512 and HS384 even with the right key', async () => {
    expectError(await me(await forge({ header: { alg: 'HS512' } })), 401, 'unauthorized');
    expectError(await me(await forge({ header: { alg: 'HS384' } })), 401, 'unauthorized');
  });

  it('refuses a token missing the session claim', async () => {
    expectError(await me(await forge({ claims: { sid: undefined } })), 401, 'unauthorized');
  });

  it('refuses a token for a user that does not exist', async () => {
    expectError(await me(await forge({ sub: newId('usr') })), 401, 'unauthorized');
  });

  it("refuses a token naming another user's session", async () => {
    const other = await seedSession();
    expectError(await me(await forge({ claims: { sid: sessionIdOf(other.accessToken) } })), 401, 'unauthorized');
  });

  it('refuses a token for a session that does not exist', async () => {
    expectError(await me(await forge({ claims: { sid: newId('ses') } })), 401, 'unauthorized');
  });

  it('refuses the tokens of a user that was deleted', async () => {
    const doomed = await seedSession();
    const doomedSid = sessionIdOf(doomed.accessToken);
    await env.DB.batch([
      env.DB.prepare('DELETE FROM refresh_tokens WHERE session_id IN (SELECT id FROM sessions WHERE user_id = ?)').bind(
        doomed.user.id,
      ),
      env.DB.prepare('DELETE FROM sessions WHERE user_id = ?').bind(doomed.user.id),
      env.DB.prepare('DELETE FROM users WHERE id = ?').bind(doomed.user.id),
    ]);
    expectError(await me(doomed.accessToken), 401, 'unauthorized');
    // Even a freshly signed token for that user and its old session.
    expectError(await me(await forge({ sub: doomed.user.id, claims: { sid: doomedSid } })), 401, 'unauthorized');
    expectError(await refresh(doomed.refreshToken), 401, 'invalid_refresh_token');
  });

  it('refuses garbage in the bearer', async () => {
    for (const token of [
      'a.b.c',
      'not-a-jwt',
      `${session.accessToken}x`,
      session.accessToken.split('.').slice(0, 2).join('.'),
    ]) {
      expectError(await me(token), 401, 'unauthorized');
    }
  });
});

describe('OpenAPI description of the session routes', () => {
  it('documents the statuses the tests above rely on', async () => {
    const spec = (await call('GET', '/openapi.json')).body;
    const op = (path: string, method: string) => spec.paths[path][method];
    expect(Object.keys(op('/v1/auth/login', 'post').responses)).toEqual(
      expect.arrayContaining(['201', '400', '401', '429']),
    );
    expect(Object.keys(op('/v1/auth/refresh', 'post').responses)).toEqual(
      expect.arrayContaining(['201', '400', '401', '429']),
    );
    expect(Object.keys(op('/v1/auth/logout', 'post').responses)).toEqual(expect.arrayContaining(['204', '401']));
    expect(Object.keys(op('/v1/auth/me', 'get').responses)).toEqual(expect.arrayContaining(['200', '401']));
    expect(op('/v1/auth/login', 'post').responses['429'].content['application/json'].examples).toHaveProperty(
      'rate_limited',
    );
    expect(op('/v1/auth/refresh', 'post').responses['401'].content['application/json'].examples).toHaveProperty(
      'invalid_refresh_token',
    );
  });
});
