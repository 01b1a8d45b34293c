import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { openSecrets } from '../../src/services/payment-methods/secrets.ts';
import type { PaymentMethodRow } from '../../src/db/schema/index.ts';
import { call, createKey, expectError, seedSession, type Session } from '../helpers/api.ts';
import { trackSecret } from '../helpers/leak-scan.ts';
import {
  ACCOUNT_FIELDS,
  createMethod,
  expectIndistinguishable,
  expectNoTraceInRow,
  fieldsOf,
  ISO_MS,
  link,
  linkRows,
  methodRow,
  POS,
  QR,
  randomCredential,
  UUID,
} from '../helpers/methods.ts';
import { createDeps } from '../../src/deps.ts';

const BASE = '/v1/account/payment-methods';

let admin: Session;
let client: Session;
let other: Session;

beforeAll(async () => {
  admin = await seedSession({ role: 'admin' });
  client = await seedSession();
  other = await seedSession();
});

const post = (session: Session | string | undefined, body: unknown) =>
  call('POST', BASE, { token: typeof session === 'string' ? session : session?.accessToken, body });

const validBody = (overrides: Record<string, unknown> = {}) => ({
  connector_definition_version_id: POS,
  name: 'Front counter',
  credentials: { api_key: randomCredential() },
  ...overrides,
});

/** The decrypted secrets of a method, read the way the core reads them (only the test looks inside). */
async function secretsOf(id: string) {
  const raw = await methodRow(id);
  const row = {
    id: raw!.id,
    environment: raw!.environment,
    secretsCiphertext: raw!.secrets_ciphertext,
  } as unknown as PaymentMethodRow;
  return openSecrets(createDeps(env), row);
}

describe('POST /v1/account/payment-methods', () => {
  it('creates a POS method with the version’s capabilities and default configuration, never echoing credentials', async () => {
    const apiKey = randomCredential();
    const res = await post(client, {
      connector_definition_version_id: POS,
      name: 'Front counter',
      credentials: { api_key: apiKey },
    });
    expect(res.status).toBe(201);
    const m = res.body.data;
    expect(Object.keys(m).sort()).toEqual(ACCOUNT_FIELDS);
    expect(m.id).toMatch(UUID);
    expect(m).toMatchObject({
      user_id: client.user.id,
      connector_definition_version_id: POS,
      name: 'Front counter',
      type: 'pos',
      provider: 'sandbox',
      environment: 'test',
      status: 'active',
      enabled: true,
      capabilities: ['payments', 'refunds', 'cancellations'],
      display_configuration: {},
    });
    expect(m.created_at).toMatch(ISO_MS);
    expect(m.updated_at).toMatch(ISO_MS);
    expect(res.text).not.toContain(apiKey);
    expect(res.text).not.toContain('"configuration"');
    expect(await secretsOf(m.id)).toEqual({
      credentials: { api_key: apiKey },
      configuration: { terminal_id: 'sandbox-terminal-1' },
    });
  });

  it('creates a QR method whose configuration defaults to qr_ttl_seconds 900', async () => {
    const apiKey = randomCredential();
    const res = await post(client, {
      connector_definition_version_id: QR,
      name: 'Counter QR',
      credentials: { api_key: apiKey },
      display_configuration: { label: 'Till 2', color: '#0a7', order: 2, visible: true },
    });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      type: 'qr',
      provider: 'sandbox',
      status: 'active',
      capabilities: ['payments', 'refunds', 'cancellations'],
    });
    expect(res.body.data.display_configuration).toEqual({ label: 'Till 2', color: '#0a7', order: 2, visible: true });
    expect(res.text).not.toContain(apiKey);
    expect((await secretsOf(res.body.data.id)).configuration).toEqual({ qr_ttl_seconds: 900 });
  });

  it('keeps a given configuration and a subset of capabilities (in the version’s order, without repeats)', async () => {
    const res = await post(
      client,
      validBody({
        connector_definition_version_id: QR,
        configuration: { qr_ttl_seconds: 120 },
        capabilities: ['refunds', 'payments', 'refunds'],
      }),
    );
    expect(res.status).toBe(201);
    expect(res.body.data.capabilities).toEqual(['payments', 'refunds']);
    expect(res.text).not.toContain('qr_ttl_seconds');
    expect((await secretsOf(res.body.data.id)).configuration).toEqual({ qr_ttl_seconds: 120 });
  });

  it('gives each method its own UUID', async () => {
    const a = await createMethod(client);
    const b = await createMethod(client);
    expect(a.id).not.toBe(b.id);
  });

  it('stores no plaintext credential or configuration in the D1 row', async () => {
    const apiKey = randomCredential();
    const terminal = `term-${crypto.randomUUID()}`;
    const res = await post(
      client,
      validBody({ credentials: { api_key: apiKey }, configuration: { terminal_id: terminal } }),
    );
    expect(res.status).toBe(201);
    const row = await methodRow(res.body.data.id);
    expect(row).not.toBeNull();
    expect(String(row!.secrets_ciphertext)).toMatch(/^v1\./);
    expectNoTraceInRow(row!, apiKey);
    expectNoTraceInRow(row!, terminal);
    expect(res.text).not.toContain(terminal);
  });

  it('refuses an unknown connector version, naming the field', async () => {
    for (const version of ['cnv_unknown_v9', 'cnd_sandbox_pos', 'CNV_SANDBOX_POS_V1', ' cnv_sandbox_pos_v1']) {
      const apiKey = randomCredential();
      const res = await post(
        client,
        validBody({ connector_definition_version_id: version, credentials: { api_key: apiKey } }),
      );
      const error = expectError(res, 400, 'invalid_request');
      expect(error.category).toBe('validation');
      expect(fieldsOf(res)).toEqual(['connector_definition_version_id']);
      expect(res.text).not.toContain(apiKey);
    }
  });

  describe('credentials failing the version’s schema', () => {
    const cases: { name: string; credentials: (secret: string) => unknown; fields: string[] }[] = [
      { name: 'missing api_key', credentials: () => ({}), fields: ['credentials.api_key'] },
      { name: 'api_key too short', credentials: () => ({ api_key: 'Qz7#kP!' }), fields: ['credentials.api_key'] },
      { name: 'api_key too long', credentials: (s) => ({ api_key: s.repeat(8) }), fields: ['credentials.api_key'] },
      {
        name: 'an extra field',
        credentials: (s) => ({ api_key: randomCredential(), webhook_secret: s }),
        fields: ['credentials.webhook_secret'],
      },
      {
        name: 'api_key of the wrong type',
        credentials: () => ({ api_key: 918273645501 }),
        fields: ['credentials.api_key'],
      },
      { name: 'api_key null', credentials: () => ({ api_key: null }), fields: ['credentials.api_key'] },
      {
        name: 'api_key as an object',
        credentials: (s) => ({ api_key: { value: s } }),
        fields: ['credentials.api_key'],
      },
    ];
    for (const c of cases) {
      it(`${c.name} → 400 naming the field, never its value`, async () => {
        const secret = randomCredential();
        const credentials = c.credentials(secret);
        const res = await post(client, validBody({ credentials }));
        expectError(res, 400, 'invalid_request');
        expect(fieldsOf(res)).toEqual(c.fields);
        expect(res.text).not.toContain(secret);
        expect(res.text).not.toContain('Qz7#kP!');
        expect(res.text).not.toContain('918273645501');
      });
    }

    it('credentials that are not an object → 400 naming credentials', async () => {
      for (const credentials of [randomCredential(), ['x'], null, 42]) {
        const res = await post(client, validBody({ credentials }));
        expectError(res, 400, 'invalid_request');
        expect(fieldsOf(res)).toEqual(['credentials']);
        if (typeof credentials === 'string') expect(res.text).not.toContain(credentials);
      }
    });

    it('missing credentials → 400 naming credentials', async () => {
      const { credentials: _omitted, ...body } = validBody();
      const res = await post(client, body);
      expectError(res, 400, 'invalid_request');
      expect(fieldsOf(res)).toEqual(['credentials']);
    });
  });

  describe('configuration failing the version’s schema', () => {
    for (const [name, configuration, fields] of [
      ['a string TTL', { qr_ttl_seconds: 'x' }, ['configuration.qr_ttl_seconds']],
      ['a TTL under the minimum', { qr_ttl_seconds: 10 }, ['configuration.qr_ttl_seconds']],
      ['a fractional TTL', { qr_ttl_seconds: 90.5 }, ['configuration.qr_ttl_seconds']],
      ['an extra key', { qr_ttl_seconds: 900, colour: 'blue' }, ['configuration.colour']],
      ['a POS key on a QR version', { terminal_id: 'x' }, ['configuration.terminal_id']],
    ] as const) {
      it(`${name} → 400 naming the field`, async () => {
        const apiKey = randomCredential();
        const res = await post(
          client,
          validBody({ connector_definition_version_id: QR, credentials: { api_key: apiKey }, configuration }),
        );
        expectError(res, 400, 'invalid_request');
        expect(fieldsOf(res)).toEqual(fields);
        expect(res.text).not.toContain(apiKey);
      });
    }

    it('lists credentials and configuration issues together', async () => {
      const extra = randomCredential();
      const res = await post(
        client,
        validBody({
          connector_definition_version_id: QR,
          credentials: { api_key: 'short', extra },
          configuration: { qr_ttl_seconds: 'x' },
        }),
      );
      expectError(res, 400, 'invalid_request');
      expect(fieldsOf(res).sort()).toEqual([
        'configuration.qr_ttl_seconds',
        'credentials.api_key',
        'credentials.extra',
      ]);
      expect(res.text).not.toContain(extra);
    });
  });

  it('refuses an unknown capability', async () => {
    for (const capabilities of [
      ['refunds_plus'],
      ['payments', 'PAYMENTS'],
      'payments',
      ['payments', 'refunds', 'cancellations', 'payments'],
    ]) {
      const res = await post(client, validBody({ capabilities }));
      expectError(res, 400, 'invalid_request');
      expect(fieldsOf(res).every((f) => f.startsWith('capabilities'))).toBe(true);
      expect(fieldsOf(res).length).toBeGreaterThan(0);
    }
  });

  it('refuses display_configuration that looks like it carries a secret, or is not flat', async () => {
    for (const key of [
      'api_key',
      'secret',
      'clientSecret',
      'password',
      'access_token',
      'ApiKey',
      'private_key',
      'credentials',
    ]) {
      const value = randomCredential();
      const res = await post(client, validBody({ display_configuration: { label: 'ok', [key]: value } }));
      expectError(res, 400, 'invalid_request');
      expect(fieldsOf(res)).toEqual([`display_configuration.${key}`]);
      expect(res.text).not.toContain(value);
    }
    for (const display_configuration of [
      { nested: { a: 1 } },
      { list: [1] },
      { long: 'x'.repeat(501) },
      Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i])),
      'label',
    ]) {
      const res = await post(client, validBody({ display_configuration }));
      expectError(res, 400, 'invalid_request');
      expect(fieldsOf(res).every((f) => f.startsWith('display_configuration'))).toBe(true);
    }
  });

  it('is strict about the body', async () => {
    const res = await post(client, { ...validBody(), environment: 'live' });
    expectError(res, 400, 'invalid_request');
    expect(fieldsOf(res)).toEqual(['environment']);

    for (const [body, fields] of [
      [{ ...validBody(), name: '   ' }, ['name']],
      [{ ...validBody(), name: 'x'.repeat(201) }, ['name']],
      [{ ...validBody(), connector_definition_version_id: 7 }, ['connector_definition_version_id']],
      [{ credentials: { api_key: randomCredential() } }, ['connector_definition_version_id', 'name']],
    ] as const) {
      const r = await post(client, body);
      expectError(r, 400, 'invalid_request');
      expect(fieldsOf(r).sort()).toEqual([...fields].sort());
    }
  });

  it('refuses bodies that are not a JSON object', async () => {
    for (const rawBody of ['not json', '[]', '"text"', 'null', '{"name": "x",}']) {
      const res = await call('POST', BASE, {
        token: client.accessToken,
        rawBody,
        headers: { 'Content-Type': 'application/json' },
      });
      expectError(res, 400, 'invalid_request');
    }
    const apiKey = randomCredential();
    // Sent raw, so the helper cannot see it: tracked by hand for the leak scan.
    trackSecret('credential', apiKey);
    const res = await call('POST', BASE, {
      token: client.accessToken,
      rawBody: JSON.stringify(validBody({ credentials: { api_key: apiKey } })),
      headers: { 'Content-Type': 'text/plain' },
    });
    expect(res.status).toBe(415);
    expect(res.body.error.code).toBe('invalid_request');
    expect(res.text).not.toContain(apiKey);
  });

  it('refuses __proto__ smuggled into credentials, configuration or display_configuration', async () => {
    const apiKey = randomCredential();
    trackSecret('credential', apiKey);
    const bodies = [
      `{"connector_definition_version_id":"${POS}","name":"x","credentials":{"api_key":"${apiKey}","__proto__":{"admin":true}}}`,
      `{"connector_definition_version_id":"${POS}","name":"x","credentials":{"api_key":"${apiKey}"},"configuration":{"__proto__":{"terminal_id":"t"}}}`,
      `{"connector_definition_version_id":"${POS}","name":"x","credentials":{"api_key":"${apiKey}"},"__proto__":{"user_id":"${other.user.id}"}}`,
    ];
    for (const rawBody of bodies) {
      const res = await call('POST', BASE, {
        token: client.accessToken,
        rawBody,
        headers: { 'Content-Type': 'application/json' },
      });
      // Either refused, or created for the caller itself with nothing smuggled through.
      if (res.status === 201) {
        expect(res.body.data.user_id).toBe(client.user.id);
        expect(await secretsOf(res.body.data.id)).toEqual({
          credentials: { api_key: apiKey },
          configuration: { terminal_id: 'sandbox-terminal-1' },
        });
      } else {
        expectError(res, 400, 'invalid_request');
      }
      expect(res.text).not.toContain(apiKey);
    }
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });

  describe('acting for another owner', () => {
    it('refuses user_id from a client, even its own', async () => {
      for (const user_id of [other.user.id, client.user.id, 'usr_unknown']) {
        const res = await post(client, validBody({ user_id }));
        const error = expectError(res, 403, 'insufficient_role');
        expect(error.category).toBe('authorization');
      }
      // Nothing was created for the other owner.
      const list = await call('GET', `${BASE}?limit=100`, { token: other.accessToken });
      expect(list.body.pagination.total).toBe(0);
    });

    it('lets an admin create for an owner', async () => {
      const owner = await seedSession();
      const res = await post(admin, validBody({ user_id: owner.user.id }));
      expect(res.status).toBe(201);
      expect(res.body.data.user_id).toBe(owner.user.id);
      const list = await call('GET', BASE, { token: owner.accessToken });
      expect(list.body.data.map((m: { id: string }) => m.id)).toEqual([res.body.data.id]);
      const own = await call('GET', BASE, { token: admin.accessToken });
      expect(own.body.data.map((m: { id: string }) => m.id)).not.toContain(res.body.data.id);
    });

    it('answers 404 user_not_found to an admin naming an unknown user', async () => {
      const res = await post(admin, validBody({ user_id: 'usr_doesnotexist0000000' }));
      const error = expectError(res, 404, 'user_not_found');
      expect(error.details).toEqual({});
    });
  });

  describe('authentication', () => {
    it('needs a credential', async () => {
      expectError(await post(undefined, validBody()), 401, 'unauthorized');
      expectError(await post('not-a-token', validBody()), 401, 'unauthorized');
      expectError(
        await call('POST', BASE, { body: validBody(), headers: { Authorization: `Basic ${btoa('a:b')}` } }),
        401,
        'unauthorized',
      );
    });

    it('refuses an API key', async () => {
      const key = await createKey(client);
      expectError(await post(key.secret, validBody()), 401, 'unauthorized');
      expectError(await call('GET', BASE, { token: key.secret }), 401, 'unauthorized');
    });

    it('refuses a logged-out session', async () => {
      const session = await seedSession();
      const out = await call('POST', '/v1/auth/logout', {
        token: session.accessToken,
        body: { refresh_token: session.refreshToken },
      });
      expect(out.status).toBe(204);
      expectError(await post(session, validBody()), 401, 'unauthorized');
    });
  });
});

describe('GET /v1/account/payment-methods', () => {
  it('pages the owner’s methods, newest first, with limit, offset and total', async () => {
    const owner = await seedSession();
    const created = [];
    for (let i = 0; i < 3; i++) created.push((await createMethod(owner, { name: `m${i}` })).id);
    const all = await call('GET', BASE, { token: owner.accessToken });
    expect(all.status).toBe(200);
    expect(all.body.pagination).toEqual({ limit: 50, offset: 0, total: 3, has_more: false });
    expect(new Set(all.body.data.map((m: { id: string }) => m.id))).toEqual(new Set(created));
    for (const m of all.body.data) expect(Object.keys(m).sort()).toEqual(ACCOUNT_FIELDS);

    const page1 = await call('GET', `${BASE}?limit=2&offset=0`, { token: owner.accessToken });
    const page2 = await call('GET', `${BASE}?limit=2&offset=2`, { token: owner.accessToken });
    expect(page1.body.pagination).toEqual({ limit: 2, offset: 0, total: 3, has_more: true });
    expect(page2.body.pagination).toEqual({ limit: 2, offset: 2, total: 3, has_more: false });
    expect(page1.body.data).toHaveLength(2);
    expect(page2.body.data).toHaveLength(1);
    const paged = [...page1.body.data, ...page2.body.data].map((m: { id: string }) => m.id);
    expect(paged).toEqual(all.body.data.map((m: { id: string }) => m.id));

    const beyond = await call('GET', `${BASE}?offset=10`, { token: owner.accessToken });
    expect(beyond.body).toEqual({ data: [], pagination: { limit: 50, offset: 10, total: 3, has_more: false } });
  });

  it('validates limit and offset', async () => {
    for (const q of ['limit=0', 'limit=101', 'limit=x', 'offset=-1', 'limit=1.5']) {
      const res = await call('GET', `${BASE}?${q}`, { token: client.accessToken });
      expectError(res, 400, 'invalid_request');
      expect(fieldsOf(res)[0]).toMatch(/^query\.(limit|offset)$/);
    }
  });

  it('lists only the caller’s own methods, in this environment, and not deleted ones', async () => {
    const a = await seedSession();
    const b = await seedSession();
    const mine = await createMethod(a);
    const deleted = await createMethod(a);
    const theirs = await createMethod(b);
    expect((await call('DELETE', `${BASE}/${deleted.id}`, { token: a.accessToken })).status).toBe(204);

    // A row of the other environment for the same owner (as a `live` deployment sharing the table would write).
    const liveId = crypto.randomUUID();
    const now = Date.now();
    await env.DB.prepare(
      `INSERT INTO payment_methods (id, user_id, environment, connector_version_id, provider, type, name, enabled, capabilities, display_configuration, secrets_ciphertext, created_at, updated_at, deleted_at)
       VALUES (?, ?, 'live', ?, 'sandbox', 'pos', 'Live one', 1, '["payments"]', '{}', NULL, ?, ?, NULL)`,
    )
      .bind(liveId, a.user.id, POS, now, now)
      .run();

    const res = await call('GET', BASE, { token: a.accessToken });
    expect(res.body.data.map((m: { id: string }) => m.id)).toEqual([mine.id]);
    expect(res.body.pagination.total).toBe(1);
    expectError(await call('GET', `${BASE}/${liveId}`, { token: a.accessToken }), 404, 'payment_method_not_found');
    expectError(await call('GET', `${BASE}/${theirs.id}`, { token: a.accessToken }), 404, 'payment_method_not_found');
  });

  it('lets an admin list another owner’s methods with user_id', async () => {
    const owner = await seedSession();
    const m = await createMethod(owner);
    const res = await call('GET', `${BASE}?user_id=${owner.user.id}`, { token: admin.accessToken });
    expect(res.status).toBe(200);
    expect(res.body.data.map((x: { id: string }) => x.id)).toEqual([m.id]);
    expect(res.body.data[0].user_id).toBe(owner.user.id);
    expectError(
      await call('GET', `${BASE}?user_id=usr_doesnotexist0000000`, { token: admin.accessToken }),
      404,
      'user_not_found',
    );
  });

  it('refuses user_id from a client', async () => {
    expectError(
      await call('GET', `${BASE}?user_id=${other.user.id}`, { token: client.accessToken }),
      403,
      'insufficient_role',
    );
    expectError(
      await call('GET', `${BASE}?user_id=${client.user.id}`, { token: client.accessToken }),
      403,
      'insufficient_role',
    );
  });

  it('needs a user token', async () => {
    expectError(await call('GET', BASE), 401, 'unauthorized');
  });
});

describe('GET, PATCH, DELETE /v1/account/payment-methods/{id}', () => {
  it('gets a method in the creation representation', async () => {
    const m = await createMethod(client, {
      connector_definition_version_id: QR,
      display_configuration: { label: 'A' },
    });
    const res = await call('GET', `${BASE}/${m.id}`, { token: client.accessToken });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual(m.body);
    expect(res.text).not.toContain(m.apiKey);
  });

  it('lets an admin read, update and delete any owner’s method', async () => {
    const m = await createMethod(other);
    const got = await call('GET', `${BASE}/${m.id}`, { token: admin.accessToken });
    expect(got.status).toBe(200);
    expect(got.body.data.user_id).toBe(other.user.id);
    const patched = await call('PATCH', `${BASE}/${m.id}`, {
      token: admin.accessToken,
      body: { name: 'Renamed by admin' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({ name: 'Renamed by admin', user_id: other.user.id });
    expect((await call('DELETE', `${BASE}/${m.id}`, { token: admin.accessToken })).status).toBe(204);
    expectError(await call('GET', `${BASE}/${m.id}`, { token: other.accessToken }), 404, 'payment_method_not_found');
  });

  it('answers another owner’s method exactly like a random UUID and a non-UUID, on every route', async () => {
    const foreign = await createMethod(other);
    const myKey = await createKey(client, ['payment_methods:read']);
    const ids = [foreign.id, crypto.randomUUID(), 'not-a-uuid', encodeURIComponent("1' OR '1'='1")];
    const routes: [string, (id: string) => string, unknown][] = [
      ['GET', (id) => `${BASE}/${id}`, undefined],
      ['PATCH', (id) => `${BASE}/${id}`, { name: 'Hijacked' }],
      ['PATCH', (id) => `${BASE}/${id}`, { credentials: { api_key: randomCredential() } }],
      ['PATCH', (id) => `${BASE}/${id}`, { enabled: false }],
      ['DELETE', (id) => `${BASE}/${id}`, undefined],
      ['POST', (id) => `${BASE}/${id}/api-keys`, { api_key_id: myKey.id }],
      ['POST', (id) => `${BASE}/${id}/api-keys/${myKey.id}/disable`, undefined],
    ];
    for (const [method, path, body] of routes) {
      const answers = [];
      for (const id of ids) answers.push(await call(method, path(id), { token: client.accessToken, body }));
      const error = expectError(answers[0]!, 404, 'payment_method_not_found');
      expect(error).toMatchObject({ category: 'validation', retryable: false, details: {} });
      for (const answer of answers.slice(1)) expectIndistinguishable(answers[0]!, answer);
    }
    // The foreign method is untouched.
    const still = await call('GET', `${BASE}/${foreign.id}`, { token: other.accessToken });
    expect(still.body.data).toEqual(foreign.body);
    expect(await linkRows(foreign.id)).toEqual([]);
  });

  it('needs a user token on every route', async () => {
    const m = await createMethod(client);
    const key = await createKey(client);
    for (const [method, path] of [
      ['GET', `${BASE}/${m.id}`],
      ['PATCH', `${BASE}/${m.id}`],
      ['DELETE', `${BASE}/${m.id}`],
    ] as const) {
      expectError(
        await call(method, path, { body: method === 'PATCH' ? { name: 'x' } : undefined }),
        401,
        'unauthorized',
      );
      expectError(
        await call(method, path, { token: key.secret, body: method === 'PATCH' ? { name: 'x' } : undefined }),
        401,
        'unauthorized',
      );
    }
    expect((await call('GET', `${BASE}/${m.id}`, { token: client.accessToken })).body.data).toEqual(m.body);
  });

  describe('PATCH', () => {
    it('updates name, display_configuration and capabilities', async () => {
      const m = await createMethod(client);
      const res = await call('PATCH', `${BASE}/${m.id}`, {
        token: client.accessToken,
        body: {
          name: '  Back office  ',
          display_configuration: { label: 'B', position: 3 },
          capabilities: ['payments'],
        },
      });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({
        name: 'Back office',
        display_configuration: { label: 'B', position: 3 },
        capabilities: ['payments'],
        status: 'active',
      });
      expect(res.body.data.created_at).toBe(m.body.created_at);
      expect(Date.parse(res.body.data.updated_at)).toBeGreaterThan(Date.parse(m.body.updated_at));
      expect((await call('GET', `${BASE}/${m.id}`, { token: client.accessToken })).body.data).toEqual(res.body.data);
      // An empty patch changes nothing it names.
      const empty = await call('PATCH', `${BASE}/${m.id}`, { token: client.accessToken, body: {} });
      expect(empty.status).toBe(200);
      expect(empty.body.data).toMatchObject({ name: 'Back office', capabilities: ['payments'] });
    });

    it('validates the patch', async () => {
      const m = await createMethod(client);
      for (const [body, fields] of [
        [{ capabilities: ['refunds_plus'] }, ['capabilities.0']],
        [{ display_configuration: { secret: 'x' } }, ['display_configuration.secret']],
        [{ name: '' }, ['name']],
        [{ enabled: 'false' }, ['enabled']],
        [{ status: 'active' }, ['status']],
        [{ user_id: other.user.id }, ['user_id']],
        [{ connector_definition_version_id: QR }, ['connector_definition_version_id']],
        [{ configuration: { terminal_id: '' } }, ['configuration.terminal_id']],
      ] as const) {
        const res = await call('PATCH', `${BASE}/${m.id}`, { token: client.accessToken, body });
        expectError(res, 400, 'invalid_request');
        expect(fieldsOf(res)).toEqual(fields);
      }
      expect((await call('GET', `${BASE}/${m.id}`, { token: client.accessToken })).body.data).toEqual(m.body);
    });

    it('rotates credentials: validated, never echoed, re-encrypted', async () => {
      const m = await createMethod(client);
      const before = await methodRow(m.id);

      const bad = randomCredential();
      for (const [credentials, fields] of [
        [{ api_key: 'short' }, ['credentials.api_key']],
        [{ api_key: randomCredential(), extra: bad }, ['credentials.extra']],
        [{}, ['credentials.api_key']],
        [{ token: bad }, ['credentials.api_key', 'credentials.token']],
      ] as const) {
        const res = await call('PATCH', `${BASE}/${m.id}`, { token: client.accessToken, body: { credentials } });
        expectError(res, 400, 'invalid_request');
        expect(fieldsOf(res).sort()).toEqual(fields);
        expect(res.text).not.toContain(bad);
      }
      expect((await methodRow(m.id))!.secrets_ciphertext).toBe(before!.secrets_ciphertext);

      const rotated = randomCredential();
      const res = await call('PATCH', `${BASE}/${m.id}`, {
        token: client.accessToken,
        body: { credentials: { api_key: rotated } },
      });
      expect(res.status).toBe(200);
      expect(res.text).not.toContain(rotated);
      expect(res.text).not.toContain(m.apiKey);
      const after = await methodRow(m.id);
      expect(after!.secrets_ciphertext).not.toBe(before!.secrets_ciphertext);
      expect(String(after!.secrets_ciphertext)).toMatch(/^v1\./);
      expectNoTraceInRow(after!, rotated);
      expectNoTraceInRow(after!, m.apiKey);
      // The configuration survives a credentials rotation.
      expect(await secretsOf(m.id)).toEqual({
        credentials: { api_key: rotated },
        configuration: { terminal_id: 'sandbox-terminal-1' },
      });

      // A configuration change keeps the credentials.
      const cfg = await call('PATCH', `${BASE}/${m.id}`, {
        token: client.accessToken,
        body: { configuration: { terminal_id: 'till-9' } },
      });
      expect(cfg.status).toBe(200);
      expect(cfg.text).not.toContain('till-9');
      expect(await secretsOf(m.id)).toEqual({
        credentials: { api_key: rotated },
        configuration: { terminal_id: 'till-9' },
      });
    });

    it('repairs a method whose stored secrets cannot be opened, when both credentials and configuration are sent', async () => {
      const broken = await createMethod(client, { connector_definition_version_id: QR });
      const donor = await createMethod(client, { connector_definition_version_id: QR });
      // A ciphertext bound to another method fails authentication, as a value sealed under a retired key would.
      const donorRow = await methodRow(donor.id);
      await env.DB.prepare('UPDATE payment_methods SET secrets_ciphertext = ? WHERE id = ?')
        .bind(donorRow!.secrets_ciphertext, broken.id)
        .run();

      for (const body of [
        { credentials: { api_key: randomCredential() } },
        { configuration: { qr_ttl_seconds: 600 } },
      ]) {
        const res = await call('PATCH', `${BASE}/${broken.id}`, { token: client.accessToken, body });
        const error = expectError(res, 422, 'connector_configuration_invalid');
        expect(error).toMatchObject({ category: 'configuration', retryable: false });
        expect(error.message).toContain('credentials');
      }
      // Other fields stay editable.
      expect(
        (await call('PATCH', `${BASE}/${broken.id}`, { token: client.accessToken, body: { name: 'Needs new keys' } }))
          .status,
      ).toBe(200);

      const fresh = randomCredential();
      const fixed = await call('PATCH', `${BASE}/${broken.id}`, {
        token: client.accessToken,
        body: { credentials: { api_key: fresh }, configuration: {} },
      });
      expect(fixed.status).toBe(200);
      expect(fixed.body.data.id).toBe(broken.id);
      expect(fixed.text).not.toContain(fresh);
      expect(await secretsOf(broken.id)).toEqual({
        credentials: { api_key: fresh },
        configuration: { qr_ttl_seconds: 900 },
      });
    });

    it('disables and re-enables: inactive methods disappear from the API key view', async () => {
      const m = await createMethod(client);
      const key = await createKey(client, ['payment_methods:read']);
      await link(client, m.id, key.id);
      expect((await call('GET', `/v1/payment-methods/${m.id}`, { token: key.secret })).status).toBe(200);

      const off = await call('PATCH', `${BASE}/${m.id}`, { token: client.accessToken, body: { enabled: false } });
      expect(off.status).toBe(200);
      expect(off.body.data).toMatchObject({ enabled: false, status: 'inactive' });
      expectError(
        await call('GET', `/v1/payment-methods/${m.id}`, { token: key.secret }),
        404,
        'payment_method_not_found',
      );
      const list = await call('GET', '/v1/payment-methods', { token: key.secret });
      expect(list.body.data.map((x: { id: string }) => x.id)).not.toContain(m.id);
      // The owner still sees it, inactive.
      expect((await call('GET', `${BASE}/${m.id}`, { token: client.accessToken })).body.data.status).toBe('inactive');
      // Still patchable while inactive.
      expect(
        (await call('PATCH', `${BASE}/${m.id}`, { token: client.accessToken, body: { name: 'Paused' } })).body.data,
      ).toMatchObject({ name: 'Paused', status: 'inactive' });

      const on = await call('PATCH', `${BASE}/${m.id}`, { token: client.accessToken, body: { enabled: true } });
      expect(on.body.data).toMatchObject({ enabled: true, status: 'active' });
      const back = await call('GET', `/v1/payment-methods/${m.id}`, { token: key.secret });
      expect(back.status).toBe(200);
      expect(back.body.data.status).toBe('active');
    });
  });

  describe('DELETE', () => {
    it('soft-deletes idempotently: 204 without body, secrets erased, key links disabled', async () => {
      const m = await createMethod(client, { connector_definition_version_id: QR });
      const k1 = await createKey(client, ['payment_methods:read']);
      const k2 = await createKey(client, ['payment_methods:read']);
      await link(client, m.id, k1.id);
      await link(client, m.id, k2.id);

      const first = await call('DELETE', `${BASE}/${m.id}`, { token: client.accessToken });
      expect(first.status).toBe(204);
      expect(first.text).toBe('');
      expect(first.headers.get('x-request-id')).toMatch(/^req_/);
      const second = await call('DELETE', `${BASE}/${m.id}`, { token: client.accessToken });
      expect(second.status).toBe(204);
      expect(second.text).toBe('');

      expectError(await call('GET', `${BASE}/${m.id}`, { token: client.accessToken }), 404, 'payment_method_not_found');
      expectError(
        await call('PATCH', `${BASE}/${m.id}`, { token: client.accessToken, body: { enabled: true } }),
        404,
        'payment_method_not_found',
      );
      expectError(
        await call('PATCH', `${BASE}/${m.id}`, {
          token: client.accessToken,
          body: { credentials: { api_key: randomCredential() } },
        }),
        404,
        'payment_method_not_found',
      );
      expectError(
        await call('POST', `${BASE}/${m.id}/api-keys`, { token: client.accessToken, body: { api_key_id: k1.id } }),
        404,
        'payment_method_not_found',
      );
      expectError(
        await call('POST', `${BASE}/${m.id}/api-keys/${k1.id}/disable`, { token: client.accessToken }),
        404,
        'payment_method_not_found',
      );
      expectError(
        await call('GET', `/v1/payment-methods/${m.id}`, { token: k1.secret }),
        404,
        'payment_method_not_found',
      );
      expectError(
        await call('GET', `/v1/payment-methods/${m.id}`, { token: client.accessToken }),
        404,
        'payment_method_not_found',
      );

      const row = await methodRow(m.id);
      expect(row).not.toBeNull();
      expect(row!.secrets_ciphertext).toBeNull();
      expect(row!.deleted_at).not.toBeNull();
      expect(row!.enabled).toBe(0);
      expectNoTraceInRow(row!, m.apiKey);
      const links = await linkRows(m.id);
      expect(links.map((l) => l.api_key_id).sort()).toEqual([k1.id, k2.id].sort());
      for (const l of links) expect(l.enabled).toBe(0);
    });

    it('a deleted method answers exactly like a random one', async () => {
      const m = await createMethod(client);
      expect((await call('DELETE', `${BASE}/${m.id}`, { token: client.accessToken })).status).toBe(204);
      const deleted = await call('GET', `${BASE}/${m.id}`, { token: client.accessToken });
      const random = await call('GET', `${BASE}/${crypto.randomUUID()}`, { token: client.accessToken });
      expectIndistinguishable(deleted, random);
    });

    it('does not delete another owner’s method, answering like a random id', async () => {
      const m = await createMethod(other);
      const foreign = await call('DELETE', `${BASE}/${m.id}`, { token: client.accessToken });
      const random = await call('DELETE', `${BASE}/${crypto.randomUUID()}`, { token: client.accessToken });
      expectError(foreign, 404, 'payment_method_not_found');
      expectIndistinguishable(foreign, random);
      const row = await methodRow(m.id);
      expect(row!.deleted_at).toBeNull();
      expect(row!.secrets_ciphertext).not.toBeNull();
    });

    it('removes the method from the list', async () => {
      const owner = await seedSession();
      const m = await createMethod(owner);
      expect((await call('DELETE', `${BASE}/${m.id}`, { token: owner.accessToken })).status).toBe(204);
      const list = await call('GET', BASE, { token: owner.accessToken });
      expect(list.body).toEqual({ data: [], pagination: { limit: 50, offset: 0, total: 0, has_more: false } });
    });
  });
});

describe('display_configuration', () => {
  it('refuses a field of the version’s configuration (qr_ttl_seconds on a QR method), where it had no effect', async () => {
    const created = await post(
      client,
      validBody({ connector_definition_version_id: QR, display_configuration: { qr_ttl_seconds: 60, label: 'QR' } }),
    );
    const error = expectError(created, 400, 'invalid_request');
    expect(error.details.fields).toEqual([
      { field: 'display_configuration.qr_ttl_seconds', issue: expect.stringContaining('`configuration`') },
    ]);

    const method = await createMethod(client, {
      connector_definition_version_id: QR,
      configuration: { qr_ttl_seconds: 60 },
    });
    const patched = await call('PATCH', `${BASE}/${method.id}`, {
      token: client.accessToken,
      body: { display_configuration: { qr_ttl_seconds: 120 } },
    });
    expect(expectError(patched, 400, 'invalid_request').details.fields).toEqual([
      { field: 'display_configuration.qr_ttl_seconds', issue: expect.stringContaining('`configuration`') },
    ]);
    // Another version's field is presentation data like any other key.
    const pos = await post(client, validBody({ display_configuration: { qr_ttl_seconds: 60 } }));
    expect(pos.status).toBe(201);
    expect(pos.body.data.display_configuration).toEqual({ qr_ttl_seconds: 60 });
  });
});
