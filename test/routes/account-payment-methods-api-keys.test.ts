import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.ts';
import { call, createKey, expectError, seedSession, type ApiResponse, type Session } from '../helpers/api.ts';
import { createMethod, expectIndistinguishable, fieldsOf, ISO_MS, linkRows } from '../helpers/methods.ts';

const linkPath = (methodId: string) => `/v1/account/payment-methods/${methodId}/api-keys`;
const disablePath = (methodId: string, keyId: string) =>
  `/v1/account/payment-methods/${methodId}/api-keys/${keyId}/disable`;
const linkKey = (session: Session, methodId: string, apiKeyId: string) =>
  call('POST', linkPath(methodId), { token: session.accessToken, body: { api_key_id: apiKeyId } });
const disable = (session: Session, methodId: string, keyId: string) =>
  call('POST', disablePath(methodId, keyId), { token: session.accessToken });
const seesMethod = async (secret: string, methodId: string) =>
  (await call('GET', `/v1/payment-methods/${methodId}`, { token: secret })).status === 200;
const listed = async (secret: string) =>
  ((await call('GET', '/v1/payment-methods', { token: secret })).body.data as { id: string }[]).map((m) => m.id);

let owner: Session;
let other: Session;

beforeAll(async () => {
  owner = await seedSession();
  other = await seedSession();
});

function expectKeyNotFound(res: ApiResponse) {
  const error = expectError(res, 404, 'api_key_not_found');
  expect(error.retryable).toBe(false);
  return error;
}

describe('POST /v1/account/payment-methods/{id}/api-keys', () => {
  it('enables a method for a key', async () => {
    const m = await createMethod(owner);
    const key = await createKey(owner, ['payment_methods:read']);
    expect(await seesMethod(key.secret, m.id)).toBe(false);

    const res = await linkKey(owner, m.id, key.id);
    expect(res.status).toBe(201);
    expect(res.body.data).toEqual({
      api_key_id: key.id,
      payment_method_id: m.id,
      enabled: true,
      created_at: expect.stringMatching(ISO_MS),
    });
    expect(res.text).not.toContain(key.secret);
    expect(res.text).not.toContain(m.apiKey);
    expect(await seesMethod(key.secret, m.id)).toBe(true);

    // Linking again is harmless: still one link, still enabled, same creation time.
    const again = await linkKey(owner, m.id, key.id);
    expect(again.status).toBe(201);
    expect(again.body.data).toEqual(res.body.data);
    expect(await linkRows(m.id)).toHaveLength(1);
  });

  it('answers another owner’s key exactly like a random key id, and links nothing', async () => {
    const m = await createMethod(owner);
    const foreignKey = await createKey(other, ['payment_methods:read']);
    const foreign = await linkKey(owner, m.id, foreignKey.id);
    expectKeyNotFound(foreign);
    for (const id of [newId('key'), 'not-a-key', "x' OR 1=1 --"])
      expectIndistinguishable(foreign, await linkKey(owner, m.id, id));
    expect(await linkRows(m.id)).toEqual([]);
    expect(await listed(foreignKey.secret)).toEqual([]);
  });

  it('answers a key of the other environment like an unknown key', async () => {
    const m = await createMethod(owner);
    const liveKeyId = newId('key');
    await env.DB.prepare(
      `INSERT INTO api_keys (id, user_id, name, scopes, environment, status, secret_hash, prefix, created_at, last_used_at, revoked_at)
       VALUES (?, ?, 'live key', '["payment_methods:read"]', 'live', 'active', ?, 'sk_live_abcd', ?, NULL, NULL)`,
    )
      .bind(liveKeyId, owner.user.id, crypto.randomUUID(), Date.now())
      .run();
    const res = await linkKey(owner, m.id, liveKeyId);
    expectKeyNotFound(res);
    expectIndistinguishable(res, await linkKey(owner, m.id, newId('key')));
  });

  it('refuses a revoked key with 409 invalid_state_transition', async () => {
    const m = await createMethod(owner);
    const key = await createKey(owner, ['payment_methods:read']);
    expect((await call('POST', `/v1/account/api-keys/${key.id}/revoke`, { token: owner.accessToken })).status).toBe(
      200,
    );
    const error = expectError(await linkKey(owner, m.id, key.id), 409, 'invalid_state_transition');
    expect(error).toMatchObject({ category: 'conflict', retryable: false });
    expect(await linkRows(m.id)).toEqual([]);
  });

  it('refuses an inactive method with 409 and a deleted one with 404', async () => {
    const key = await createKey(owner, ['payment_methods:read']);
    const inactive = await createMethod(owner);
    expect(
      (
        await call('PATCH', `/v1/account/payment-methods/${inactive.id}`, {
          token: owner.accessToken,
          body: { enabled: false },
        })
      ).status,
    ).toBe(200);
    const error = expectError(await linkKey(owner, inactive.id, key.id), 409, 'invalid_state_transition');
    expect(error.category).toBe('conflict');
    expect(await linkRows(inactive.id)).toEqual([]);

    const deleted = await createMethod(owner);
    expect(
      (await call('DELETE', `/v1/account/payment-methods/${deleted.id}`, { token: owner.accessToken })).status,
    ).toBe(204);
    const gone = await linkKey(owner, deleted.id, key.id);
    expectError(gone, 404, 'payment_method_not_found');
    expectIndistinguishable(gone, await linkKey(owner, crypto.randomUUID(), key.id));
  });

  it('adds no scope to the key', async () => {
    const m = await createMethod(owner);
    const key = await createKey(owner, ['payments:create', 'payments:read']);
    expect((await linkKey(owner, m.id, key.id)).status).toBe(201);
    expectError(await call('GET', '/v1/payment-methods', { token: key.secret }), 403, 'insufficient_scope');
    expectError(await call('GET', `/v1/payment-methods/${m.id}`, { token: key.secret }), 403, 'insufficient_scope');
    const keys = await call('GET', '/v1/account/api-keys?limit=100', { token: owner.accessToken });
    expect(keys.body.data.find((k: { id: string }) => k.id === key.id).scopes).toEqual([
      'payments:create',
      'payments:read',
    ]);
  });

  it('lets an admin link an owner’s key to that owner’s method, but not its own key', async () => {
    const admin = await seedSession({ role: 'admin' });
    const m = await createMethod(owner);
    const ownerKey = await createKey(owner, ['payment_methods:read']);
    const adminKey = await createKey(admin, ['payment_methods:read']);
    const res = await linkKey(admin, m.id, ownerKey.id);
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ api_key_id: ownerKey.id, payment_method_id: m.id, enabled: true });
    expectKeyNotFound(await linkKey(admin, m.id, adminKey.id));
    expect(await seesMethod(adminKey.secret, m.id)).toBe(false);
  });

  it('validates the body', async () => {
    const m = await createMethod(owner);
    const key = await createKey(owner, ['payment_methods:read']);
    for (const [body, fields] of [
      [{}, ['api_key_id']],
      [{ api_key_id: '' }, ['api_key_id']],
      [{ api_key_id: 42 }, ['api_key_id']],
      [{ api_key_id: 'x'.repeat(129) }, ['api_key_id']],
      [{ api_key_id: key.id, enabled: false }, ['enabled']],
    ] as const) {
      const res = await call('POST', linkPath(m.id), { token: owner.accessToken, body });
      expectError(res, 400, 'invalid_request');
      expect(fieldsOf(res)).toEqual(fields);
    }
    expect(await linkRows(m.id)).toEqual([]);
  });

  it('needs a user token', async () => {
    const m = await createMethod(owner);
    const key = await createKey(owner);
    expectError(await call('POST', linkPath(m.id), { body: { api_key_id: key.id } }), 401, 'unauthorized');
    expectError(
      await call('POST', linkPath(m.id), { token: key.secret, body: { api_key_id: key.id } }),
      401,
      'unauthorized',
    );
    expectError(await call('POST', disablePath(m.id, key.id)), 401, 'unauthorized');
    expectError(await call('POST', disablePath(m.id, key.id), { token: key.secret }), 401, 'unauthorized');
    expect(await linkRows(m.id)).toEqual([]);
  });
});

describe('POST /v1/account/payment-methods/{id}/api-keys/{api_key_id}/disable', () => {
  it('disables the method for that key only; re-linking enables it again', async () => {
    const m = await createMethod(owner);
    const k1 = await createKey(owner, ['payment_methods:read']);
    const k2 = await createKey(owner, ['payment_methods:read']);
    const linked = await linkKey(owner, m.id, k1.id);
    expect((await linkKey(owner, m.id, k2.id)).status).toBe(201);

    const res = await disable(owner, m.id, k1.id);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      api_key_id: k1.id,
      payment_method_id: m.id,
      enabled: false,
      created_at: linked.body.data.created_at,
    });
    expect(await seesMethod(k1.secret, m.id)).toBe(false);
    expect(await listed(k1.secret)).not.toContain(m.id);
    expect(await seesMethod(k2.secret, m.id)).toBe(true);
    expect(await listed(k2.secret)).toContain(m.id);
    // The method itself is untouched.
    expect(
      (await call('GET', `/v1/account/payment-methods/${m.id}`, { token: owner.accessToken })).body.data.status,
    ).toBe('active');

    // Idempotent.
    const again = await disable(owner, m.id, k1.id);
    expect(again.status).toBe(200);
    expect(again.body.data.enabled).toBe(false);

    const relinked = await linkKey(owner, m.id, k1.id);
    expect(relinked.status).toBe(201);
    expect(relinked.body.data).toEqual({ ...linked.body.data, enabled: true });
    expect(await seesMethod(k1.secret, m.id)).toBe(true);
  });

  it('answers a key that is not linked, foreign or unknown with 404 api_key_not_found, all alike', async () => {
    const m = await createMethod(owner);
    const unlinked = await createKey(owner, ['payment_methods:read']);
    const foreign = await createKey(other, ['payment_methods:read']);
    const foreignMethod = await createMethod(other);
    await linkKeyAs(other, foreignMethod.id, foreign.id);

    const first = await disable(owner, m.id, unlinked.id);
    expectKeyNotFound(first);
    for (const keyId of [foreign.id, newId('key'), 'not-a-key'])
      expectIndistinguishable(first, await disable(owner, m.id, keyId));
    expect(await linkRows(m.id)).toEqual([]);
    // The other owner's link is untouched.
    expect(await seesMethod(foreign.secret, foreignMethod.id)).toBe(true);
  });

  it('answers another owner’s method exactly like a random id, and disables nothing', async () => {
    const foreignMethod = await createMethod(other);
    const foreignKey = await createKey(other, ['payment_methods:read']);
    await linkKeyAs(other, foreignMethod.id, foreignKey.id);
    const foreign = await disable(owner, foreignMethod.id, foreignKey.id);
    expectError(foreign, 404, 'payment_method_not_found');
    expectIndistinguishable(foreign, await disable(owner, crypto.randomUUID(), foreignKey.id));
    expect(await seesMethod(foreignKey.secret, foreignMethod.id)).toBe(true);
  });

  it('still disables the link of a revoked key, and of an inactive method', async () => {
    const m = await createMethod(owner);
    const key = await createKey(owner, ['payment_methods:read']);
    await linkKeyAs(owner, m.id, key.id);
    expect(
      (
        await call('PATCH', `/v1/account/payment-methods/${m.id}`, {
          token: owner.accessToken,
          body: { enabled: false },
        })
      ).status,
    ).toBe(200);
    expect((await call('POST', `/v1/account/api-keys/${key.id}/revoke`, { token: owner.accessToken })).status).toBe(
      200,
    );
    const res = await disable(owner, m.id, key.id);
    expect(res.status).toBe(200);
    expect(res.body.data.enabled).toBe(false);
    expect((await linkRows(m.id))[0]!.enabled).toBe(0);
  });

  it('refuses a body that is not a JSON object', async () => {
    const m = await createMethod(owner);
    const key = await createKey(owner, ['payment_methods:read']);
    await linkKeyAs(owner, m.id, key.id);
    const res = await call('POST', disablePath(m.id, key.id), {
      token: owner.accessToken,
      rawBody: 'nope',
      headers: { 'Content-Type': 'application/json' },
    });
    expectError(res, 400, 'invalid_request');
    expect(await seesMethod(key.secret, m.id)).toBe(true);
  });
});

async function linkKeyAs(session: Session, methodId: string, keyId: string) {
  const res = await linkKey(session, methodId, keyId);
  expect(res.status).toBe(201);
}
