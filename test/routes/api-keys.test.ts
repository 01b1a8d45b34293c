import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { BUSINESS_SCOPES } from '../../src/domain/scopes.ts';
import { newId } from '../../src/lib/ids.ts';
import { call, createKey, expectError, seedSession, seedUser, type ApiResponse, type Session } from '../helpers/api.ts';
import { expectIndistinguishable, fieldsOf } from '../helpers/methods.ts';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const SECRET = /^sk_test_[A-Za-z0-9_-]{43}$/;
const KEY_FIELDS = [
  'created_at',
  'environment',
  'id',
  'last_used_at',
  'name',
  'prefix',
  'revoked_at',
  'scopes',
  'status',
];

const ids = (res: ApiResponse) => (res.body.data as { id: string }[]).map((k) => k.id);

async function listAll(session: Session, query = '') {
  const res = await call('GET', `/v1/account/api-keys?limit=100${query}`, { token: session.accessToken });
  expect(res.status).toBe(200);
  return res;
}

async function keyListing(session: Session, keyId: string) {
  return (await listAll(session)).body.data.find((k: { id: string }) => k.id === keyId);
}

let admin: Session;
let client: Session;

beforeAll(async () => {
  admin = await seedSession({ role: 'admin' });
  client = await seedSession();
});

describe('POST /v1/account/api-keys', () => {
  it('creates a key and shows its secret once', async () => {
    const res = await call('POST', '/v1/account/api-keys', {
      token: client.accessToken,
      body: { name: 'Checkout server', scopes: ['payments:create', 'payments:read'] },
    });
    expect(res.status).toBe(201);
    const key = res.body.data;
    expect(Object.keys(key).sort()).toEqual([...KEY_FIELDS, 'secret'].sort());
    expect(key).toMatchObject({
      name: 'Checkout server',
      scopes: ['payments:create', 'payments:read'],
      environment: 'test',
      status: 'active',
      last_used_at: null,
      revoked_at: null,
    });
    expect(key.secret).toMatch(SECRET);
    expect(key.prefix).toBe(key.secret.slice(0, 'sk_test_'.length + 4));
    expect(key.created_at).toMatch(ISO_MS);

    // Never again: not in the list, not anywhere in its entries.
    const list = await listAll(client);
    expect(list.text).not.toContain(key.secret);
    expect(list.text).not.toContain(key.secret.slice('sk_test_'.length));
    const listed = list.body.data.find((k: { id: string }) => k.id === key.id);
    expect(Object.keys(listed).sort()).toEqual(KEY_FIELDS);
    const { secret: _secret, ...withoutSecret } = key;
    expect(listed).toEqual(withoutSecret);
  });

  it('gives every key its own secret', async () => {
    const a = await createKey(client, ['payments:read']);
    const b = await createKey(client, ['payments:read']);
    expect(a.id).not.toBe(b.id);
    expect(a.secret).not.toBe(b.secret);
  });

  it('stores no secret in D1: the api_keys row holds only a keyed hash and a short prefix', async () => {
    const key = await createKey(client, ['payments:read']);
    const random = key.secret.slice('sk_test_'.length);
    const row = await env.DB.prepare('SELECT * FROM api_keys WHERE id = ?')
      .bind(key.id)
      .first<Record<string, unknown>>();
    expect(row).not.toBeNull();
    for (const [column, value] of Object.entries(row!)) {
      const text = String(value);
      expect(text, column).not.toContain(key.secret);
      expect(text, column).not.toContain(random);
      // Not even a long fragment of it.
      expect(text, column).not.toContain(random.slice(4, 24));
    }
    expect(row!.secret_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row!.prefix).toBe(key.secret.slice(0, 12));

    // Nor in any other table.
    const tables = await env.DB.prepare(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name NOT LIKE 'd1_%'",
    ).all<{ name: string }>();
    expect(tables.results.map((t) => t.name)).toContain('api_keys');
    for (const { name } of tables.results) {
      const rows = await env.DB.prepare(`SELECT * FROM "${name}"`).all();
      expect(JSON.stringify(rows.results), name).not.toContain(random);
    }
  });

  it('stores scopes deduplicated in canonical order', async () => {
    const res = await call('POST', '/v1/account/api-keys', {
      token: client.accessToken,
      body: { name: 'Dup', scopes: ['refunds:create', 'payment_methods:read', 'refunds:create'] },
    });
    expect(res.status).toBe(201);
    expect(res.body.data.scopes).toEqual(['payment_methods:read', 'refunds:create']);
  });

  it('accepts all five business scopes', async () => {
    const key = await createKey(client, [...BUSINESS_SCOPES]);
    expect(key.scopes).toEqual([...BUSINESS_SCOPES]);
  });

  it.each([
    [{ name: 'k', scopes: ['payments:write'] }, 'scopes.0'],
    [{ name: 'k', scopes: ['payments:read', 'admin'] }, 'scopes.1'],
    [{ name: 'k', scopes: [] }, 'scopes'],
    [{ name: 'k', scopes: 'payments:read' }, 'scopes'],
    [{ name: 'k' }, 'scopes'],
    [{ scopes: ['payments:read'] }, 'name'],
    [{ name: '  ', scopes: ['payments:read'] }, 'name'],
    [{ name: 'k', scopes: ['payments:read'], environment: 'live' }, 'environment'],
    [{ name: 'k', scopes: ['payments:read'], secret: 'sk_test_chosen' }, 'secret'],
  ])('refuses %j with 400 invalid_request naming %s', async (body, field) => {
    const res = await call('POST', '/v1/account/api-keys', { token: client.accessToken, body });
    expectError(res, 400, 'invalid_request');
    expect(fieldsOf(res)).toEqual([field]);
  });

  it("refuses scopes beyond the owner's own with 403 insufficient_scope", async () => {
    const limited = await seedSession({ scopes: ['payments:read', 'payment_methods:read'] });
    const res = await call('POST', '/v1/account/api-keys', {
      token: limited.accessToken,
      body: { name: 'Too much', scopes: ['payments:read', 'payments:create', 'refunds:create', 'payments:create'] },
    });
    const error = expectError(res, 403, 'insufficient_scope');
    expect(error.category).toBe('authorization');
    expect(error.details).toEqual({ missing_scopes: ['payments:create', 'refunds:create'] });
    expect((await listAll(limited)).body.pagination.total).toBe(0);

    const within = await createKey(limited, ['payments:read']);
    expect(within.scopes).toEqual(['payments:read']);
  });

  it('refuses a client naming any user_id with 403 insufficient_role, its own included', async () => {
    const other = await seedUser();
    for (const user_id of [other.id, client.user.id, newId('usr')]) {
      const res = await call('POST', '/v1/account/api-keys', {
        token: client.accessToken,
        body: { name: 'For someone', scopes: ['payments:read'], user_id },
      });
      expectError(res, 403, 'insufficient_role');
    }
    const otherKeys = await listAll(admin, `&user_id=${other.id}`);
    expect(otherKeys.body.pagination.total).toBe(0);
  });

  it('lets an admin create a key for another owner, checked against that owner’s scopes', async () => {
    // The admin itself holds no business scope: the owner's scopes are what count.
    const scopelessAdmin = await seedSession({ role: 'admin', scopes: [] });
    const owner = await seedUser({ scopes: ['payments:read', 'payments:create'] });
    const res = await call('POST', '/v1/account/api-keys', {
      token: scopelessAdmin.accessToken,
      body: { name: 'Managed', scopes: ['payments:create'], user_id: owner.id },
    });
    expect(res.status).toBe(201);
    expect(res.body.data.secret).toMatch(SECRET);

    const ownerKeys = await listAll(scopelessAdmin, `&user_id=${owner.id}`);
    expect(ids(ownerKeys)).toEqual([res.body.data.id]);
    const adminKeys = await listAll(scopelessAdmin);
    expect(ids(adminKeys)).not.toContain(res.body.data.id);

    const beyond = await call('POST', '/v1/account/api-keys', {
      token: scopelessAdmin.accessToken,
      body: { name: 'Managed', scopes: ['refunds:create'], user_id: owner.id },
    });
    const error = expectError(beyond, 403, 'insufficient_scope');
    expect(error.details).toEqual({ missing_scopes: ['refunds:create'] });

    // Without user_id, the admin's own (empty) scopes apply.
    expectError(
      await call('POST', '/v1/account/api-keys', {
        token: scopelessAdmin.accessToken,
        body: { name: 'Own', scopes: ['payments:read'] },
      }),
      403,
      'insufficient_scope',
    );
  });

  it('answers 404 user_not_found to an admin naming an unknown user_id', async () => {
    const res = await call('POST', '/v1/account/api-keys', {
      token: admin.accessToken,
      body: { name: 'Ghost', scopes: ['payments:read'], user_id: newId('usr') },
    });
    const error = expectError(res, 404, 'user_not_found');
    expect(error.category).toBe('not_found');
  });

  it('needs a user access token', async () => {
    const body = { name: 'Anon', scopes: ['payments:read'] };
    expectError(await call('POST', '/v1/account/api-keys', { body }), 401, 'unauthorized');
    expectError(await call('POST', '/v1/account/api-keys', { token: 'garbage', body }), 401, 'unauthorized');
    const key = await createKey(client);
    // A key cannot mint keys.
    expectError(await call('POST', '/v1/account/api-keys', { token: key.secret, body }), 401, 'unauthorized');
  });
});

describe('GET /v1/account/api-keys', () => {
  it("lists only the caller's own keys", async () => {
    const alice = await seedSession();
    const bob = await seedSession();
    const a1 = await createKey(alice, ['payments:read'], 'alice 1');
    const a2 = await createKey(alice, ['payments:create'], 'alice 2');
    const b1 = await createKey(bob, ['payments:read'], 'bob 1');

    const aliceList = await listAll(alice);
    expect(ids(aliceList).sort()).toEqual([a1.id, a2.id].sort());
    expect(aliceList.body.pagination).toEqual({ limit: 100, offset: 0, total: 2, has_more: false });
    const bobList = await listAll(bob);
    expect(ids(bobList)).toEqual([b1.id]);
    expect(bobList.body.pagination.total).toBe(1);
  });

  it('lists newest first with the default page size', async () => {
    const owner = await seedSession();
    for (let i = 0; i < 3; i++) await createKey(owner, ['payments:read'], `key ${i}`);
    const res = await call('GET', '/v1/account/api-keys', { token: owner.accessToken });
    expect(res.status).toBe(200);
    expect(res.body.pagination).toEqual({ limit: 50, offset: 0, total: 3, has_more: false });
    const created = res.body.data.map((k: { created_at: string }) => Date.parse(k.created_at));
    expect(created).toEqual([...created].sort((a, b) => b - a));
  });

  it('pages with limit and offset', async () => {
    const owner = await seedSession();
    const made = [];
    for (let i = 0; i < 3; i++) made.push((await createKey(owner, ['payments:read'], `key ${i}`)).id);
    const all = await listAll(owner);
    const first = await call('GET', '/v1/account/api-keys?limit=2', { token: owner.accessToken });
    const second = await call('GET', '/v1/account/api-keys?limit=2&offset=2', { token: owner.accessToken });
    const past = await call('GET', '/v1/account/api-keys?offset=3', { token: owner.accessToken });
    expect(first.body.pagination).toEqual({ limit: 2, offset: 0, total: 3, has_more: true });
    expect(second.body.pagination).toEqual({ limit: 2, offset: 2, total: 3, has_more: false });
    expect(past.body.pagination).toEqual({ limit: 50, offset: 3, total: 3, has_more: false });
    expect(past.body.data).toEqual([]);
    expect([...ids(first), ...ids(second)]).toEqual(ids(all));
    expect(ids(all).sort()).toEqual([...made].sort());
  });

  it.each(['limit=0', 'limit=101', 'limit=-1', 'limit=abc', 'offset=-1', 'user_id='])(
    'refuses %s with 400 invalid_request',
    async (query) => {
      const res = await call('GET', `/v1/account/api-keys?${query}`, { token: admin.accessToken });
      expectError(res, 400, 'invalid_request');
      expect(fieldsOf(res)).toEqual([`query.${query.split('=')[0]}`]);
    },
  );

  it('includes revoked keys, without secrets', async () => {
    const owner = await seedSession();
    const key = await createKey(owner, ['payments:read']);
    expect((await call('POST', `/v1/account/api-keys/${key.id}/revoke`, { token: owner.accessToken })).status).toBe(
      200,
    );
    const list = await listAll(owner);
    expect(list.body.data).toHaveLength(1);
    expect(list.body.data[0]).toMatchObject({ id: key.id, status: 'revoked' });
    expect(list.body.data[0].revoked_at).toMatch(ISO_MS);
    expect(list.text).not.toContain(key.secret);
  });

  it("lets an admin list another owner's keys with user_id", async () => {
    const owner = await seedSession();
    const key = await createKey(owner, ['payments:read']);
    const res = await listAll(admin, `&user_id=${owner.user.id}`);
    expect(ids(res)).toEqual([key.id]);
    expect(res.body.pagination.total).toBe(1);
    expect(res.text).not.toContain(key.secret);
    expectError(
      await call('GET', `/v1/account/api-keys?user_id=${newId('usr')}`, { token: admin.accessToken }),
      404,
      'user_not_found',
    );
  });

  it('refuses user_id from a client with 403 insufficient_role, its own id included', async () => {
    const other = await seedSession();
    await createKey(other, ['payments:read']);
    for (const userId of [other.user.id, client.user.id]) {
      const res = await call('GET', `/v1/account/api-keys?user_id=${userId}`, { token: client.accessToken });
      expectError(res, 403, 'insufficient_role');
      expect(res.body.data).toBeUndefined();
    }
  });

  it('needs a user access token', async () => {
    expectError(await call('GET', '/v1/account/api-keys'), 401, 'unauthorized');
    const key = await createKey(client);
    expectError(await call('GET', '/v1/account/api-keys', { token: key.secret }), 401, 'unauthorized');
  });
});

describe('POST /v1/account/api-keys/{api_key_id}/revoke', () => {
  it('revokes a key, idempotently', async () => {
    const owner = await seedSession();
    const key = await createKey(owner, ['payments:read'], 'to revoke');
    const res = await call('POST', `/v1/account/api-keys/${key.id}/revoke`, { token: owner.accessToken });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.data).sort()).toEqual(KEY_FIELDS);
    expect(res.body.data).toMatchObject({
      id: key.id,
      name: 'to revoke',
      status: 'revoked',
      scopes: ['payments:read'],
    });
    expect(res.body.data.revoked_at).toMatch(ISO_MS);
    expect(res.text).not.toContain(key.secret);

    const again = await call('POST', `/v1/account/api-keys/${key.id}/revoke`, { token: owner.accessToken });
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual(res.body.data);

    const listed = (await listAll(owner)).body.data.find((k: { id: string }) => k.id === key.id);
    expect(listed).toEqual(res.body.data);
  });

  it('answers concurrent revocations with the one stored revocation time', async () => {
    const owner = await seedSession();
    const key = await createKey(owner, ['payments:read']);
    const answers = await Promise.all(
      Array.from({ length: 5 }, () =>
        call('POST', `/v1/account/api-keys/${key.id}/revoke`, { token: owner.accessToken }),
      ),
    );
    const listed = await keyListing(owner, key.id);
    expect(listed.status).toBe('revoked');
    for (const res of answers) {
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual(listed);
    }
  });

  it('accepts an empty JSON body', async () => {
    const key = await createKey(client, ['payments:read']);
    const res = await call('POST', `/v1/account/api-keys/${key.id}/revoke`, { token: client.accessToken, body: {} });
    expect(res.status).toBe(200);
    expect(res.body.data.status).toBe('revoked');
  });

  it("answers another owner's key id exactly like an unknown id, and leaves the key active", async () => {
    const owner = await seedSession();
    const key = await createKey(owner, ['payments:read']);
    const foreign = await call('POST', `/v1/account/api-keys/${key.id}/revoke`, { token: client.accessToken });
    const unknown = await call('POST', `/v1/account/api-keys/${newId('key')}/revoke`, { token: client.accessToken });
    const error = expectError(foreign, 404, 'api_key_not_found');
    expect(error.category).toBe('not_found');
    expectError(unknown, 404, 'api_key_not_found');
    expectIndistinguishable(foreign, unknown);
    expect(foreign.text).not.toContain(key.id);

    const listed = (await listAll(owner)).body.data.find((k: { id: string }) => k.id === key.id);
    expect(listed.status).toBe('active');
    expect(listed.revoked_at).toBeNull();
  });

  it("lets an admin revoke any owner's key", async () => {
    const owner = await seedSession();
    const key = await createKey(owner, ['payments:read']);
    const res = await call('POST', `/v1/account/api-keys/${key.id}/revoke`, { token: admin.accessToken });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: key.id, status: 'revoked' });
    const listed = (await listAll(owner)).body.data.find((k: { id: string }) => k.id === key.id);
    expect(listed.status).toBe('revoked');
    expectError(
      await call('POST', `/v1/account/api-keys/${newId('key')}/revoke`, { token: admin.accessToken }),
      404,
      'api_key_not_found',
    );
  });

  it('needs a user access token: a key cannot revoke itself', async () => {
    const key = await createKey(client, ['payments:read']);
    expectError(await call('POST', `/v1/account/api-keys/${key.id}/revoke`), 401, 'unauthorized');
    expectError(
      await call('POST', `/v1/account/api-keys/${key.id}/revoke`, { token: key.secret }),
      401,
      'unauthorized',
    );
    const listed = (await listAll(client)).body.data.find((k: { id: string }) => k.id === key.id);
    expect(listed.status).toBe('active');
  });
});
