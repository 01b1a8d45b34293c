import { beforeAll, describe, expect, it } from 'vitest';
import { call, createKey, expectError, seedSession, type Session } from '../helpers/api.ts';
import { fieldsOf, POS, QR, randomCredential } from '../helpers/methods.ts';

const CURRENCIES = ['USD', 'EUR', 'BRL', 'ARS', 'MXN', 'CLP', 'COP', 'UYU'];

let session: Session;

beforeAll(async () => {
  session = await seedSession();
});

interface ConnectorVersionResource {
  id: string;
  version: string;
  status: string;
  capabilities: string[];
  currencies: string[];
  credentials_schema: Record<string, any>;
  configuration_schema: Record<string, any>;
}

interface ConnectorResource {
  id: string;
  provider: string;
  name: string;
  type: string;
  versions: ConnectorVersionResource[];
}

async function allConnectors(): Promise<ConnectorResource[]> {
  const res = await call('GET', '/v1/connectors?limit=100', { token: session.accessToken });
  expect(res.status).toBe(200);
  return res.body.data;
}

describe('GET /v1/connectors', () => {
  it('lists connectors in a page', async () => {
    const res = await call('GET', '/v1/connectors', { token: session.accessToken });
    expect(res.status).toBe(200);
    expect(res.body.pagination).toMatchObject({ limit: 50, offset: 0 });
    expect(res.body.pagination.total).toBeGreaterThanOrEqual(2);
    expect(res.body.data).toHaveLength(Math.min(50, res.body.pagination.total));
    for (const c of res.body.data as ConnectorResource[]) {
      expect(Object.keys(c).sort()).toEqual(['id', 'name', 'provider', 'type', 'versions']);
      for (const v of c.versions) {
        expect(Object.keys(v).sort()).toEqual([
          'capabilities',
          'configuration_schema',
          'credentials_schema',
          'currencies',
          'id',
          'status',
          'version',
        ]);
      }
    }

    const total = res.body.pagination.total;
    const first = await call('GET', '/v1/connectors?limit=1&offset=0', { token: session.accessToken });
    const second = await call('GET', '/v1/connectors?limit=1&offset=1', { token: session.accessToken });
    expect(first.body.pagination).toEqual({ limit: 1, offset: 0, total, has_more: true });
    expect(second.body.pagination).toEqual({ limit: 1, offset: 1, total, has_more: total > 2 });
    expect(first.body.data).toHaveLength(1);
    expect(second.body.data).toHaveLength(1);
    expect(first.body.data[0].id).not.toBe(second.body.data[0].id);
    expect([first.body.data[0], second.body.data[0]]).toEqual(res.body.data.slice(0, 2));

    const beyond = await call('GET', `/v1/connectors?offset=${total}`, { token: session.accessToken });
    expect(beyond.body).toEqual({ data: [], pagination: { limit: 50, offset: total, total, has_more: false } });
  });

  it('validates limit and offset', async () => {
    for (const q of ['limit=0', 'limit=101', 'limit=abc', 'offset=-1']) {
      const res = await call('GET', `/v1/connectors?${q}`, { token: session.accessToken });
      expectError(res, 400, 'invalid_request');
      expect(fieldsOf(res)[0]).toMatch(/^query\.(limit|offset)$/);
    }
  });

  it('includes the sandbox POS and QR definitions, each with a published version', async () => {
    const sandbox = (await allConnectors()).filter((c) => c.provider === 'sandbox');
    expect(sandbox.map((c) => c.type).sort()).toEqual(['pos', 'qr']);
    for (const c of sandbox) {
      const published = c.versions.filter((v) => v.status === 'published');
      expect(published.length).toBeGreaterThanOrEqual(1);
      for (const v of published) {
        expect(new Set(v.capabilities)).toEqual(new Set(['payments', 'refunds', 'cancellations']));
        expect(new Set(v.currencies)).toEqual(new Set(CURRENCIES));
      }
    }
    const versionIds = sandbox.flatMap((c) => c.versions.map((v) => v.id));
    expect(versionIds).toContain(POS);
    expect(versionIds).toContain(QR);
    expect(sandbox.find((c) => c.type === 'pos')!.versions.map((v) => v.id)).toContain(POS);
    expect(sandbox.find((c) => c.type === 'qr')!.versions.map((v) => v.id)).toContain(QR);
  });

  it('describes credentials as a JSON Schema requiring api_key of at least 8 characters', async () => {
    for (const c of (await allConnectors()).filter((x) => x.provider === 'sandbox')) {
      const schema = c.versions[0]!.credentials_schema;
      expect(schema.type).toBe('object');
      expect(schema.required).toEqual(['api_key']);
      expect(schema.properties.api_key).toMatchObject({ type: 'string', minLength: 8 });
      expect(schema.additionalProperties).toBe(false);
      expect(typeof schema.$schema).toBe('string');
      // The magic value that simulates a rejected key is documented where merchants read the schema.
      expect(schema.properties.api_key.description).toContain('invalid-credentials');
    }
  });

  it('describes configuration with its defaults', async () => {
    const connectors = (await allConnectors()).filter((x) => x.provider === 'sandbox');
    const qr = connectors.find((c) => c.type === 'qr')!.versions.find((v) => v.id === QR)!.configuration_schema;
    expect(qr.type).toBe('object');
    expect(qr.properties.qr_ttl_seconds).toMatchObject({ type: 'integer', default: 900, minimum: 60 });
    expect(qr.required ?? []).not.toContain('qr_ttl_seconds');
    const pos = connectors.find((c) => c.type === 'pos')!.versions.find((v) => v.id === POS)!.configuration_schema;
    expect(pos.properties.terminal_id).toMatchObject({ type: 'string', default: 'sandbox-terminal-1' });
    expect(pos.required ?? []).toEqual([]);
    for (const schema of [qr, pos]) {
      expect(schema.additionalProperties).toBe(false);
      for (const property of Object.values(schema.properties as Record<string, { description?: string }>))
        expect(property.description).toBeTruthy();
    }
  });

  it('lists what a method can then be built on', async () => {
    const qr = (await allConnectors()).find((c) => c.provider === 'sandbox' && c.type === 'qr')!;
    const res = await call('POST', '/v1/account/payment-methods', {
      token: session.accessToken,
      body: {
        connector_definition_version_id: qr.versions[0]!.id,
        name: 'From the catalogue',
        credentials: { api_key: randomCredential() },
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      type: qr.type,
      provider: qr.provider,
      capabilities: qr.versions[0]!.capabilities,
    });
  });

  it('needs a user token', async () => {
    expectError(await call('GET', '/v1/connectors'), 401, 'unauthorized');
    expectError(await call('GET', '/v1/connectors', { token: 'garbage' }), 401, 'unauthorized');
    const key = await createKey(session);
    expectError(await call('GET', '/v1/connectors', { token: key.secret }), 401, 'unauthorized');
  });
});
