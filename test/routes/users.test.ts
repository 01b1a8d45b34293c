import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { BUSINESS_SCOPES } from '../../src/domain/scopes.ts';
import { newId } from '../../src/lib/ids.ts';
import {
  call,
  createKey,
  expectError,
  login,
  seedSession,
  seedUser,
  type Session,
  type TestUser,
} from '../helpers/api.ts';
import { expectIndistinguishable, fieldsOf } from '../helpers/methods.ts';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const USER_FIELDS = ['created_at', 'email', 'id', 'name', 'role', 'scopes', 'updated_at'];

const uniqueEmail = () => `${newId('u')}@example.com`;
/** A fresh password per request, so a leak is attributable (every password sent is tracked by `call`). */
const newPassword = () => `pw-${newId('p', 16)}`;

async function userCount(): Promise<number> {
  const row = await env.DB.prepare('SELECT COUNT(*) AS n FROM users').first<{ n: number }>();
  return row!.n;
}

let admin: Session;
let client: Session;

beforeAll(async () => {
  admin = await seedSession({ role: 'admin' });
  client = await seedSession();
});

describe('POST /v1/users', () => {
  it('lets an admin create a client with every business scope by default, and never returns the password', async () => {
    const password = newPassword();
    const email = uniqueEmail();
    const res = await call('POST', '/v1/users', {
      token: admin.accessToken,
      body: { email, name: 'Corner Shop', password },
    });
    expect(res.status).toBe(201);
    const user = res.body.data;
    expect(Object.keys(user).sort()).toEqual(USER_FIELDS);
    expect(user).toMatchObject({ email, name: 'Corner Shop', role: 'client', scopes: [...BUSINESS_SCOPES] });
    expect(user.id).toEqual(expect.any(String));
    expect(user.created_at).toMatch(ISO_MS);
    expect(user.updated_at).toBe(user.created_at);
    expect(res.text).not.toContain(password);
    expect(res.text).not.toMatch(/password/i);

    // The password works, and neither login nor later reads return it.
    const session = await login({ id: user.id, email, password, role: 'client', scopes: [...BUSINESS_SCOPES] });
    const me = await call('GET', '/v1/auth/me', { token: session.accessToken });
    expect(me.status).toBe(200);
    expect(me.body.data).toEqual(user);
    const read = await call('GET', `/v1/users/${user.id}`, { token: admin.accessToken });
    expect(read.body.data).toEqual(user);
    expect(read.text).not.toMatch(/password/i);
  });

  it('takes an explicit role and scopes, storing scopes deduplicated in canonical order', async () => {
    const res = await call('POST', '/v1/users', {
      token: admin.accessToken,
      body: {
        email: uniqueEmail(),
        name: 'Ops',
        password: newPassword(),
        role: 'admin',
        scopes: ['refunds:create', 'payments:read', 'refunds:create'],
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.data.role).toBe('admin');
    expect(res.body.data.scopes).toEqual(['payments:read', 'refunds:create']);
  });

  it('accepts an empty scope list', async () => {
    const res = await call('POST', '/v1/users', {
      token: admin.accessToken,
      body: { email: uniqueEmail(), name: 'No scopes', password: newPassword(), scopes: [] },
    });
    expect(res.status).toBe(201);
    expect(res.body.data.scopes).toEqual([]);
  });

  it('stores the email lower-cased', async () => {
    const local = newId('mixed');
    const res = await call('POST', '/v1/users', {
      token: admin.accessToken,
      body: { email: `${local.toUpperCase()}@Example.COM`, name: 'Mixed', password: newPassword() },
    });
    expect(res.status).toBe(201);
    expect(res.body.data.email).toBe(`${local}@example.com`);
  });

  it('accepts passwords of 12 and of 256 characters', async () => {
    for (const password of ['p'.repeat(6) + 'q'.repeat(6), 'r'.repeat(256)]) {
      const email = uniqueEmail();
      const res = await call('POST', '/v1/users', {
        token: admin.accessToken,
        body: { email, name: 'Boundary', password },
      });
      expect(res.status).toBe(201);
      await login({ id: res.body.data.id, email, password, role: 'client', scopes: [] });
    }
  });

  it('refuses passwords of 11 or 257 characters, naming the field but never echoing the value', async () => {
    for (const password of ['s'.repeat(11), 't'.repeat(257)]) {
      const res = await call('POST', '/v1/users', {
        token: admin.accessToken,
        body: { email: uniqueEmail(), name: 'Short', password },
      });
      expectError(res, 400, 'invalid_request');
      expect(fieldsOf(res)).toEqual(['password']);
      expect(res.text).not.toContain(password);
    }
  });

  it('refuses a password that is not a string', async () => {
    const res = await call('POST', '/v1/users', {
      token: admin.accessToken,
      body: { email: uniqueEmail(), name: 'Numeric', password: 123456789012345 },
    });
    expectError(res, 400, 'invalid_request');
    expect(fieldsOf(res)).toEqual(['password']);
  });

  it('names every missing required field', async () => {
    const res = await call('POST', '/v1/users', { token: admin.accessToken, body: {} });
    const error = expectError(res, 400, 'invalid_request');
    expect(error.category).toBe('validation');
    expect(error.retryable).toBe(false);
    expect(fieldsOf(res).sort()).toEqual(['email', 'name', 'password']);
  });

  it('refuses an invalid email, an unknown role, an unknown scope, a blank name and unknown fields', async () => {
    const base = () => ({ email: uniqueEmail(), name: 'Shop', password: newPassword() });
    const cases: [Record<string, unknown>, string][] = [
      [{ ...base(), email: 'not-an-email' }, 'email'],
      [{ ...base(), role: 'superuser' }, 'role'],
      [{ ...base(), scopes: ['payments:read', 'payments:write'] }, 'scopes.1'],
      [{ ...base(), scopes: 'payments:read' }, 'scopes'],
      [{ ...base(), name: '   ' }, 'name'],
      [{ ...base(), is_admin: true }, 'is_admin'],
    ];
    for (const [body, field] of cases) {
      const res = await call('POST', '/v1/users', { token: admin.accessToken, body });
      expectError(res, 400, 'invalid_request');
      expect(fieldsOf(res)).toEqual([field]);
    }
  });

  it('answers 409 email_taken for a duplicate email, also when only the case differs', async () => {
    const email = uniqueEmail();
    const first = await call('POST', '/v1/users', {
      token: admin.accessToken,
      body: { email, name: 'First', password: newPassword() },
    });
    expect(first.status).toBe(201);
    const before = await userCount();

    for (const again of [email, email.toUpperCase(), email.replace(/^u_/, 'U_')]) {
      const password = newPassword();
      const res = await call('POST', '/v1/users', {
        token: admin.accessToken,
        body: { email: again, name: 'Second', password },
      });
      const error = expectError(res, 409, 'email_taken');
      expect(error.category).toBe('conflict');
      expect(error.retryable).toBe(false);
      expect(res.text).not.toContain(password);
    }
    // A seeded user's email is taken too.
    const seeded = await call('POST', '/v1/users', {
      token: admin.accessToken,
      body: { email: client.user.email.toUpperCase(), name: 'Dup', password: newPassword() },
    });
    expectError(seeded, 409, 'email_taken');
    expect(await userCount()).toBe(before);
  });

  it('refuses a client caller with 403 insufficient_role', async () => {
    const email = uniqueEmail();
    const res = await call('POST', '/v1/users', {
      token: client.accessToken,
      body: { email, name: 'Sneaky', password: newPassword(), role: 'admin' },
    });
    const error = expectError(res, 403, 'insufficient_role');
    expect(error.category).toBe('authorization');
    const exists = await env.DB.prepare('SELECT COUNT(*) AS n FROM users WHERE email = ?')
      .bind(email)
      .first<{ n: number }>();
    expect(exists!.n).toBe(0);
  });

  it('refuses a request without a credential, with a bad token, or with an API key (401 unauthorized)', async () => {
    const key = await createKey(admin);
    for (const token of [undefined, 'not-a-token', key.secret]) {
      const res = await call('POST', '/v1/users', {
        ...(token ? { token } : {}),
        body: { email: uniqueEmail(), name: 'Anon', password: newPassword() },
      });
      const error = expectError(res, 401, 'unauthorized');
      expect(error.category).toBe('authentication');
    }
  });

  it('checks the credential before the body', async () => {
    const res = await call('POST', '/v1/users', { body: { nonsense: true } });
    expectError(res, 401, 'unauthorized');
  });
});

describe('GET /v1/users', () => {
  beforeAll(async () => {
    // At least three users besides the two sessions, so pages of two are meaningful.
    for (let i = 0; i < 3; i++) await seedUser();
  });

  it('lists users for an admin with the default page and a correct total', async () => {
    const before = await userCount();
    const res = await call('GET', '/v1/users', { token: admin.accessToken });
    const after = await userCount();
    expect(res.status).toBe(200);
    expect(res.body.pagination.limit).toBe(50);
    expect(res.body.pagination.offset).toBe(0);
    expect(res.body.pagination.total).toBeGreaterThanOrEqual(before);
    expect(res.body.pagination.total).toBeLessThanOrEqual(after);
    expect(res.body.data.length).toBe(Math.min(50, res.body.pagination.total));
    for (const user of res.body.data) expect(Object.keys(user).sort()).toEqual(USER_FIELDS);
    expect(res.text).not.toMatch(/password/i);
  });

  it('lists newest first', async () => {
    const res = await call('GET', '/v1/users?limit=100', { token: admin.accessToken });
    const created = res.body.data.map((u: { created_at: string }) => Date.parse(u.created_at));
    expect(created).toEqual([...created].sort((a, b) => b - a));
  });

  it('pages with limit and offset without overlap', async () => {
    const all = await call('GET', '/v1/users?limit=100', { token: admin.accessToken });
    const first = await call('GET', '/v1/users?limit=2', { token: admin.accessToken });
    const second = await call('GET', '/v1/users?limit=2&offset=2', { token: admin.accessToken });
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(first.body.pagination).toMatchObject({ limit: 2, offset: 0 });
    expect(second.body.pagination).toMatchObject({ limit: 2, offset: 2 });
    expect(first.body.data).toHaveLength(2);
    expect(second.body.data).toHaveLength(2);
    const ids = [...first.body.data, ...second.body.data].map((u: { id: string }) => u.id);
    expect(new Set(ids).size).toBe(4);
    // Same order as the full listing (no user is created in this file between these reads).
    expect(ids).toEqual(all.body.data.slice(0, 4).map((u: { id: string }) => u.id));
  });

  it('accepts the limits 1 and 100, and answers an empty page past the end', async () => {
    const one = await call('GET', '/v1/users?limit=1', { token: admin.accessToken });
    expect(one.status).toBe(200);
    expect(one.body.data).toHaveLength(1);
    const hundred = await call('GET', '/v1/users?limit=100', { token: admin.accessToken });
    expect(hundred.status).toBe(200);
    expect(hundred.body.pagination.limit).toBe(100);
    const past = await call('GET', '/v1/users?offset=10000', { token: admin.accessToken });
    expect(past.status).toBe(200);
    expect(past.body.data).toEqual([]);
    expect(past.body.pagination).toMatchObject({ offset: 10000, has_more: false });
    expect(past.body.pagination.total).toBeGreaterThan(0);
  });

  it.each([
    ['limit=0', 'query.limit'],
    ['limit=101', 'query.limit'],
    ['limit=-1', 'query.limit'],
    ['limit=abc', 'query.limit'],
    ['limit=1.5', 'query.limit'],
    ['limit=', 'query.limit'],
    ['offset=-1', 'query.offset'],
    ['offset=abc', 'query.offset'],
  ])('refuses %s with 400 invalid_request naming %s', async (query, field) => {
    const res = await call('GET', `/v1/users?${query}`, { token: admin.accessToken });
    expectError(res, 400, 'invalid_request');
    expect(fieldsOf(res)).toEqual([field]);
  });

  it('is for admins only', async () => {
    expectError(await call('GET', '/v1/users', { token: client.accessToken }), 403, 'insufficient_role');
    expectError(await call('GET', '/v1/users'), 401, 'unauthorized');
    const key = await createKey(admin);
    expectError(await call('GET', '/v1/users', { token: key.secret }), 401, 'unauthorized');
  });
});

describe('GET /v1/users/{user_id}', () => {
  it('lets an admin read any user', async () => {
    const res = await call('GET', `/v1/users/${client.user.id}`, { token: admin.accessToken });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      id: client.user.id,
      email: client.user.email,
      role: 'client',
      scopes: client.user.scopes,
    });
    expect(Object.keys(res.body.data).sort()).toEqual(USER_FIELDS);
  });

  it('lets a client read itself', async () => {
    const res = await call('GET', `/v1/users/${client.user.id}`, { token: client.accessToken });
    expect(res.status).toBe(200);
    expect(res.body.data.id).toBe(client.user.id);
  });

  it("answers a client asking for another user's id exactly like an unknown id", async () => {
    const foreign = await call('GET', `/v1/users/${admin.user.id}`, { token: client.accessToken });
    const unknown = await call('GET', `/v1/users/${newId('usr')}`, { token: client.accessToken });
    const error = expectError(foreign, 404, 'user_not_found');
    expect(error.category).toBe('not_found');
    expectError(unknown, 404, 'user_not_found');
    expectIndistinguishable(foreign, unknown);
    expect(foreign.text).not.toContain(admin.user.email);
    // ...and like an unknown id asked by an admin.
    expectIndistinguishable(foreign, await call('GET', `/v1/users/${newId('usr')}`, { token: admin.accessToken }));
  });

  it('needs a user access token', async () => {
    expectError(await call('GET', `/v1/users/${client.user.id}`), 401, 'unauthorized');
    const key = await createKey(client);
    expectError(await call('GET', `/v1/users/${client.user.id}`, { token: key.secret }), 401, 'unauthorized');
  });
});

describe('PATCH /v1/users/{user_id}', () => {
  let self: Session;
  beforeAll(async () => {
    self = await seedSession();
  });

  it('lets a client change its own name and email', async () => {
    const before = (await call('GET', `/v1/users/${self.user.id}`, { token: self.accessToken })).body.data;
    const local = newId('renamed');
    const res = await call('PATCH', `/v1/users/${self.user.id}`, {
      token: self.accessToken,
      body: { name: 'Renamed Shop', email: `${local.toUpperCase()}@EXAMPLE.com` },
    });
    expect(res.status).toBe(200);
    const after = res.body.data;
    expect(after).toMatchObject({
      id: self.user.id,
      name: 'Renamed Shop',
      email: `${local}@example.com`,
      role: 'client',
      scopes: before.scopes,
    });
    expect(after.created_at).toBe(before.created_at);
    expect(Date.parse(after.updated_at)).toBeGreaterThan(Date.parse(before.updated_at));
    expect(Object.keys(after).sort()).toEqual(USER_FIELDS);

    const read = await call('GET', `/v1/users/${self.user.id}`, { token: self.accessToken });
    expect(read.body.data).toEqual(after);
    // The new email is the login now; the old one is not.
    const renamed: TestUser = { ...self.user, email: `${local}@example.com` };
    await login(renamed);
    const old = await call('POST', '/v1/auth/login', {
      body: { email: self.user.email, password: self.user.password },
    });
    expectError(old, 401, 'invalid_credentials');
    self = { ...self, user: renamed };
  });

  it('accepts the own email again in another case, and an empty patch', async () => {
    const same = await call('PATCH', `/v1/users/${self.user.id}`, {
      token: self.accessToken,
      body: { email: self.user.email.toUpperCase() },
    });
    expect(same.status).toBe(200);
    expect(same.body.data.email).toBe(self.user.email);
    const empty = await call('PATCH', `/v1/users/${self.user.id}`, { token: self.accessToken, body: {} });
    expect(empty.status).toBe(200);
    expect(empty.body.data.email).toBe(self.user.email);
  });

  it('refuses role or scopes from a client with 403 insufficient_role, even with its current values', async () => {
    const current = (await call('GET', `/v1/users/${self.user.id}`, { token: self.accessToken })).body.data;
    for (const body of [
      { role: 'client' },
      { scopes: current.scopes },
      { role: 'admin' },
      { scopes: [] },
      { name: 'Also renamed', scopes: current.scopes },
    ]) {
      const res = await call('PATCH', `/v1/users/${self.user.id}`, { token: self.accessToken, body });
      expectError(res, 403, 'insufficient_role');
    }
    const unchanged = await call('GET', `/v1/users/${self.user.id}`, { token: self.accessToken });
    expect(unchanged.body.data).toEqual(current);
  });

  it('answers a client patching another user exactly like an unknown id, changing nothing', async () => {
    const victim = await seedUser();
    for (const body of [{ name: 'Hijacked' }, { role: 'admin' }]) {
      const foreign = await call('PATCH', `/v1/users/${victim.id}`, { token: self.accessToken, body });
      const unknown = await call('PATCH', `/v1/users/${newId('usr')}`, { token: self.accessToken, body });
      expectError(foreign, 404, 'user_not_found');
      expectIndistinguishable(foreign, unknown);
    }
    const read = await call('GET', `/v1/users/${victim.id}`, { token: admin.accessToken });
    expect(read.body.data).toMatchObject({ name: 'Test User', role: 'client' });
  });

  it('answers 404 user_not_found to an admin patching an unknown id', async () => {
    expectError(
      await call('PATCH', `/v1/users/${newId('usr')}`, { token: admin.accessToken, body: { name: 'Ghost' } }),
      404,
      'user_not_found',
    );
  });

  it('lets an admin change role and scopes', async () => {
    const target = await seedUser();
    const res = await call('PATCH', `/v1/users/${target.id}`, {
      token: admin.accessToken,
      body: { role: 'admin', scopes: ['refunds:create', 'payments:read', 'payments:read'] },
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: target.id, role: 'admin', scopes: ['payments:read', 'refunds:create'] });
    const read = await call('GET', `/v1/users/${target.id}`, { token: admin.accessToken });
    expect(read.body.data).toEqual(res.body.data);

    const cleared = await call('PATCH', `/v1/users/${target.id}`, { token: admin.accessToken, body: { scopes: [] } });
    expect(cleared.status).toBe(200);
    expect(cleared.body.data.scopes).toEqual([]);
  });

  it("applies a demotion to the user's existing access token at once", async () => {
    const formerAdmin = await seedSession({ role: 'admin' });
    expect((await call('GET', '/v1/users', { token: formerAdmin.accessToken })).status).toBe(200);

    const demoted = await call('PATCH', `/v1/users/${formerAdmin.user.id}`, {
      token: admin.accessToken,
      body: { role: 'client' },
    });
    expect(demoted.status).toBe(200);
    expect(demoted.body.data.role).toBe('client');

    expectError(await call('GET', '/v1/users', { token: formerAdmin.accessToken }), 403, 'insufficient_role');
    expectError(
      await call('POST', '/v1/users', {
        token: formerAdmin.accessToken,
        body: { email: uniqueEmail(), name: 'Late', password: newPassword() },
      }),
      403,
      'insufficient_role',
    );
    expectError(
      await call('PATCH', `/v1/users/${formerAdmin.user.id}`, {
        token: formerAdmin.accessToken,
        body: { role: 'admin' },
      }),
      403,
      'insufficient_role',
    );
    expectError(
      await call('GET', `/v1/users/${client.user.id}`, { token: formerAdmin.accessToken }),
      404,
      'user_not_found',
    );
    const me = await call('GET', '/v1/auth/me', { token: formerAdmin.accessToken });
    expect(me.body.data.role).toBe('client');
  });

  it('never lets a concurrent patch of other fields undo a demotion or a scope change', async () => {
    const target = await seedSession({ role: 'admin' });
    const answers = await Promise.all([
      call('PATCH', `/v1/users/${target.user.id}`, { token: target.accessToken, body: { name: 'Racing 1' } }),
      call('PATCH', `/v1/users/${target.user.id}`, { token: target.accessToken, body: { name: 'Racing 2' } }),
      call('PATCH', `/v1/users/${target.user.id}`, {
        token: admin.accessToken,
        body: { role: 'client', scopes: ['payments:read'] },
      }),
      call('PATCH', `/v1/users/${target.user.id}`, { token: target.accessToken, body: { name: 'Racing 3' } }),
      call('PATCH', `/v1/users/${target.user.id}`, { token: target.accessToken, body: { name: 'Racing 4' } }),
    ]);
    for (const res of answers) expect(res.status).toBe(200);
    const read = await call('GET', `/v1/users/${target.user.id}`, { token: admin.accessToken });
    expect(read.body.data).toMatchObject({ role: 'client', scopes: ['payments:read'] });
    expect(read.body.data.name).toMatch(/^Racing [1-4]$/);
    expectError(await call('GET', '/v1/users', { token: target.accessToken }), 403, 'insufficient_role');
  });

  it("applies a promotion to the user's existing access token at once", async () => {
    const promoted = await seedSession();
    expectError(await call('GET', '/v1/users', { token: promoted.accessToken }), 403, 'insufficient_role');
    expect(
      (await call('PATCH', `/v1/users/${promoted.user.id}`, { token: admin.accessToken, body: { role: 'admin' } }))
        .status,
    ).toBe(200);
    expect((await call('GET', '/v1/users', { token: promoted.accessToken })).status).toBe(200);
  });

  it('refuses an invalid role or scope value with 400', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ scopes: ['payments:read', 'admin:all'] }, 'scopes.1'],
      [{ scopes: 'payments:read' }, 'scopes'],
      [{ role: 'owner' }, 'role'],
      [{ email: 'nope' }, 'email'],
      [{ name: '' }, 'name'],
    ];
    for (const [body, field] of cases) {
      const res = await call('PATCH', `/v1/users/${client.user.id}`, { token: admin.accessToken, body });
      expectError(res, 400, 'invalid_request');
      expect(fieldsOf(res)).toEqual([field]);
    }
  });

  it('refuses unknown fields with 400, listing them (the password is not patchable here)', async () => {
    const password = newPassword();
    const res = await call('PATCH', `/v1/users/${self.user.id}`, {
      token: self.accessToken,
      body: { name: 'Ok', nickname: 'x', password },
    });
    expectError(res, 400, 'invalid_request');
    expect(fieldsOf(res).sort()).toEqual(['nickname', 'password']);
    expect(res.text).not.toContain(password);
    // Nothing was applied.
    const read = await call('GET', `/v1/users/${self.user.id}`, { token: self.accessToken });
    expect(read.body.data.name).not.toBe('Ok');
  });

  it('answers 409 email_taken when the new email belongs to someone else, in any case', async () => {
    const other = await seedUser();
    for (const email of [other.email, other.email.toUpperCase()]) {
      const res = await call('PATCH', `/v1/users/${self.user.id}`, { token: self.accessToken, body: { email } });
      expectError(res, 409, 'email_taken');
    }
    const byAdmin = await call('PATCH', `/v1/users/${other.id}`, {
      token: admin.accessToken,
      body: { email: self.user.email },
    });
    expectError(byAdmin, 409, 'email_taken');
    const read = await call('GET', `/v1/users/${self.user.id}`, { token: self.accessToken });
    expect(read.body.data.email).toBe(self.user.email);
  });

  it('needs a user access token', async () => {
    expectError(await call('PATCH', `/v1/users/${self.user.id}`, { body: { name: 'Anon' } }), 401, 'unauthorized');
    const key = await createKey(self);
    expectError(
      await call('PATCH', `/v1/users/${self.user.id}`, { token: key.secret, body: { name: 'Key' } }),
      401,
      'unauthorized',
    );
  });
});
