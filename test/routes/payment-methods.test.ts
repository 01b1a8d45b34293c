import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, createKey, expectError, seedSession, type ApiResponse, type Session } from '../helpers/api.ts';
import { createMethod, expectIndistinguishable, ISO_MS, link, PUBLIC_FIELDS, QR } from '../helpers/methods.ts';

const LIST = '/v1/payment-methods';
const ids = (res: ApiResponse) => (res.body.data as { id: string }[]).map((m) => m.id);

let owner: Session;
let other: Session;

beforeAll(async () => {
  owner = await seedSession();
  other = await seedSession();
});

function expectNotFound(res: ApiResponse) {
  const error = expectError(res, 404, 'payment_method_not_found');
  expect(error).toMatchObject({ category: 'validation', retryable: false, details: {} });
  expect(error.request_id).toMatch(/^req_/);
}

describe('public view with an API key', () => {
  it('shows only the methods linked and enabled for that key, in the public shape', async () => {
    const session = await seedSession();
    const display = { label: 'Counter', color: '#0a7' };
    const a = await createMethod(session, {
      connector_definition_version_id: QR,
      name: 'QR A',
      display_configuration: display,
      configuration: { qr_ttl_seconds: 300 },
    });
    const b = await createMethod(session, { name: 'POS B', capabilities: ['payments', 'refunds'] });
    const unlinked = await createMethod(session);
    const key = await createKey(session, ['payment_methods:read']);
    await link(session, a.id, key.id);
    await link(session, b.id, key.id);

    const list = await call('GET', LIST, { token: key.secret });
    expect(list.status).toBe(200);
    expect(new Set(ids(list))).toEqual(new Set([a.id, b.id]));
    expect(list.body.pagination).toEqual({ limit: 50, offset: 0, total: 2, has_more: false });
    for (const m of list.body.data) expect(Object.keys(m).sort()).toEqual(PUBLIC_FIELDS);
    for (const secret of [a.apiKey, b.apiKey, unlinked.apiKey]) expect(list.text).not.toContain(secret);
    expect(list.text).not.toContain('qr_ttl_seconds');
    expect(list.text).not.toContain('configuration');

    const detail = await call('GET', `${LIST}/${a.id}`, { token: key.secret });
    expect(detail.status).toBe(200);
    expect(detail.body.data).toEqual({
      id: a.id,
      name: 'QR A',
      type: 'qr',
      provider: 'sandbox',
      environment: 'test',
      status: 'active',
      capabilities: ['payments', 'refunds', 'cancellations'],
      metadata: display,
      created_at: a.body.created_at,
    });
    expect(detail.body.data.created_at).toMatch(ISO_MS);
    expect((await call('GET', `${LIST}/${b.id}`, { token: key.secret })).body.data.capabilities).toEqual([
      'payments',
      'refunds',
    ]);

    expectNotFound(await call('GET', `${LIST}/${unlinked.id}`, { token: key.secret }));
  });

  it('pages the key’s methods', async () => {
    const session = await seedSession();
    const key = await createKey(session, ['payment_methods:read']);
    const created = [];
    for (let i = 0; i < 3; i++) {
      const m = await createMethod(session, { name: `m${i}` });
      await link(session, m.id, key.id);
      created.push(m.id);
    }
    const p1 = await call('GET', `${LIST}?limit=2`, { token: key.secret });
    const p2 = await call('GET', `${LIST}?limit=2&offset=2`, { token: key.secret });
    expect(p1.body.pagination).toEqual({ limit: 2, offset: 0, total: 3, has_more: true });
    expect(p2.body.pagination).toEqual({ limit: 2, offset: 2, total: 3, has_more: false });
    expect(new Set([...ids(p1), ...ids(p2)])).toEqual(new Set(created));
    expectError(await call('GET', `${LIST}?limit=101`, { token: key.secret }), 400, 'invalid_request');
    expectError(await call('GET', `${LIST}?offset=-1`, { token: key.secret }), 400, 'invalid_request');
  });

  it('hides a method linked to another key of the same owner', async () => {
    const session = await seedSession();
    const m = await createMethod(session);
    const k1 = await createKey(session, ['payment_methods:read']);
    const k2 = await createKey(session, ['payment_methods:read']);
    await link(session, m.id, k1.id);
    expect(ids(await call('GET', LIST, { token: k1.secret }))).toEqual([m.id]);
    expect(ids(await call('GET', LIST, { token: k2.secret }))).toEqual([]);
    const hidden = await call('GET', `${LIST}/${m.id}`, { token: k2.secret });
    expectNotFound(hidden);
    expectIndistinguishable(hidden, await call('GET', `${LIST}/${crypto.randomUUID()}`, { token: k2.secret }));
  });

  it('hides another owner’s method exactly like a random id', async () => {
    const key = await createKey(owner, ['payment_methods:read']);
    const foreign = await createMethod(other);
    const answers = [];
    for (const id of [foreign.id, crypto.randomUUID(), 'not-a-uuid'])
      answers.push(await call('GET', `${LIST}/${id}`, { token: key.secret }));
    expectNotFound(answers[0]!);
    for (const a of answers.slice(1)) expectIndistinguishable(answers[0]!, a);
    expect(ids(await call('GET', LIST, { token: key.secret }))).not.toContain(foreign.id);
  });

  it('needs the scope payment_methods:read', async () => {
    const m = await createMethod(owner);
    const key = await createKey(owner, ['payments:create', 'payments:read']);
    await link(owner, m.id, key.id);
    for (const path of [LIST, `${LIST}/${m.id}`, `${LIST}/${crypto.randomUUID()}`]) {
      const error = expectError(await call('GET', path, { token: key.secret }), 403, 'insufficient_scope');
      expect(error.category).toBe('authorization');
      expect(error.retryable).toBe(false);
    }
  });

  it('refuses a revoked key and a malformed key', async () => {
    const m = await createMethod(owner);
    const key = await createKey(owner, ['payment_methods:read']);
    await link(owner, m.id, key.id);
    expect((await call('GET', `${LIST}/${m.id}`, { token: key.secret })).status).toBe(200);
    const revoke = await call('POST', `/v1/account/api-keys/${key.id}/revoke`, { token: owner.accessToken });
    expect(revoke.status).toBe(200);
    expectError(await call('GET', LIST, { token: key.secret }), 401, 'unauthorized');
    expectError(await call('GET', `${LIST}/${m.id}`, { token: key.secret }), 401, 'unauthorized');
    expectError(await call('GET', LIST, { token: `${key.secret.slice(0, -2)}xx` }), 401, 'unauthorized');
    expectError(await call('GET', LIST, { token: key.secret.replace('sk_test_', 'sk_live_') }), 401, 'unauthorized');
    expectError(await call('GET', LIST), 401, 'unauthorized');
  });

  it('hides an inactive method, and shows it again when re-enabled', async () => {
    const m = await createMethod(owner);
    const key = await createKey(owner, ['payment_methods:read']);
    await link(owner, m.id, key.id);
    expect(
      (
        await call('PATCH', `/v1/account/payment-methods/${m.id}`, {
          token: owner.accessToken,
          body: { enabled: false },
        })
      ).status,
    ).toBe(200);
    expectNotFound(await call('GET', `${LIST}/${m.id}`, { token: key.secret }));
    const list = await call('GET', LIST, { token: key.secret });
    expect(ids(list)).not.toContain(m.id);
    expect(list.body.pagination.total).toBe(ids(list).length);
    expect(
      (
        await call('PATCH', `/v1/account/payment-methods/${m.id}`, {
          token: owner.accessToken,
          body: { enabled: true },
        })
      ).status,
    ).toBe(200);
    expect((await call('GET', `${LIST}/${m.id}`, { token: key.secret })).body.data.status).toBe('active');
  });

  it('hides a deleted method and a disabled link', async () => {
    const deleted = await createMethod(owner);
    const disabled = await createMethod(owner);
    const key = await createKey(owner, ['payment_methods:read']);
    await link(owner, deleted.id, key.id);
    await link(owner, disabled.id, key.id);
    expect(
      (await call('DELETE', `/v1/account/payment-methods/${deleted.id}`, { token: owner.accessToken })).status,
    ).toBe(204);
    expect(
      (
        await call('POST', `/v1/account/payment-methods/${disabled.id}/api-keys/${key.id}/disable`, {
          token: owner.accessToken,
        })
      ).status,
    ).toBe(200);
    for (const id of [deleted.id, disabled.id]) {
      const res = await call('GET', `${LIST}/${id}`, { token: key.secret });
      expectNotFound(res);
      expectIndistinguishable(res, await call('GET', `${LIST}/${crypto.randomUUID()}`, { token: key.secret }));
    }
    expect(ids(await call('GET', LIST, { token: key.secret }))).toEqual([]);
  });

  it('ignores a link row that points at a method of another environment', async () => {
    const session = await seedSession();
    const key = await createKey(session, ['payment_methods:read']);
    const liveId = crypto.randomUUID();
    const now = Date.now();
    await env.DB.batch([
      env.DB.prepare(
        `INSERT INTO payment_methods (id, user_id, environment, connector_version_id, provider, type, name, enabled, capabilities, display_configuration, secrets_ciphertext, created_at, updated_at, deleted_at)
         VALUES (?, ?, 'live', 'cnv_sandbox_pos_v1', 'sandbox', 'pos', 'Live one', 1, '["payments"]', '{}', NULL, ?, ?, NULL)`,
      ).bind(liveId, session.user.id, now, now),
      env.DB.prepare(
        'INSERT INTO api_key_payment_methods (api_key_id, payment_method_id, enabled, created_at, updated_at) VALUES (?, ?, 1, ?, ?)',
      ).bind(key.id, liveId, now, now),
    ]);
    expectNotFound(await call('GET', `${LIST}/${liveId}`, { token: key.secret }));
    expect(ids(await call('GET', LIST, { token: key.secret }))).toEqual([]);
    expectNotFound(await call('GET', `${LIST}/${liveId}`, { token: session.accessToken }));
    expect(ids(await call('GET', LIST, { token: session.accessToken }))).toEqual([]);
  });
});

describe('public view with a user token', () => {
  it('shows the owner’s methods in this environment, active and inactive, never deleted', async () => {
    const session = await seedSession();
    const active = await createMethod(session);
    const inactive = await createMethod(session, { connector_definition_version_id: QR });
    const deleted = await createMethod(session);
    await createMethod(other);
    expect(
      (
        await call('PATCH', `/v1/account/payment-methods/${inactive.id}`, {
          token: session.accessToken,
          body: { enabled: false },
        })
      ).status,
    ).toBe(200);
    expect(
      (await call('DELETE', `/v1/account/payment-methods/${deleted.id}`, { token: session.accessToken })).status,
    ).toBe(204);

    const list = await call('GET', LIST, { token: session.accessToken });
    expect(list.status).toBe(200);
    expect(new Set(ids(list))).toEqual(new Set([active.id, inactive.id]));
    expect(list.body.pagination).toEqual({ limit: 50, offset: 0, total: 2, has_more: false });
    for (const m of list.body.data) expect(Object.keys(m).sort()).toEqual(PUBLIC_FIELDS);
    for (const secret of [active.apiKey, inactive.apiKey, deleted.apiKey]) expect(list.text).not.toContain(secret);

    const detail = await call('GET', `${LIST}/${inactive.id}`, { token: session.accessToken });
    expect(detail.status).toBe(200);
    expect(detail.body.data).toMatchObject({ id: inactive.id, status: 'inactive', type: 'qr' });
    expect(Object.keys(detail.body.data).sort()).toEqual(PUBLIC_FIELDS);
    expectNotFound(await call('GET', `${LIST}/${deleted.id}`, { token: session.accessToken }));
  });

  it('answers another owner’s method exactly like a random id', async () => {
    const foreign = await createMethod(other);
    const answers = [];
    for (const id of [foreign.id, crypto.randomUUID(), 'not-a-uuid'])
      answers.push(await call('GET', `${LIST}/${id}`, { token: owner.accessToken }));
    expectNotFound(answers[0]!);
    for (const a of answers.slice(1)) expectIndistinguishable(answers[0]!, a);
    expect(ids(await call('GET', LIST, { token: owner.accessToken }))).not.toContain(foreign.id);
  });

  it('does not widen an admin’s view to other owners', async () => {
    const admin = await seedSession({ role: 'admin' });
    const foreign = await createMethod(other);
    expectNotFound(await call('GET', `${LIST}/${foreign.id}`, { token: admin.accessToken }));
    expect(ids(await call('GET', LIST, { token: admin.accessToken }))).not.toContain(foreign.id);
  });

  it('needs the user scope payment_methods:read', async () => {
    const session = await seedSession({ scopes: ['payments:read'] });
    const m = await createMethod(session);
    expectError(await call('GET', LIST, { token: session.accessToken }), 403, 'insufficient_scope');
    expectError(await call('GET', `${LIST}/${m.id}`, { token: session.accessToken }), 403, 'insufficient_scope');
  });
});
