import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_SIGNATURE_HEADER, signSandboxNotification } from '../../src/connectors/sandbox/index.ts';
import { paymentMethods } from '../../src/db/schema/index.ts';
import { createDeps } from '../../src/deps.ts';
import type { Env } from '../../src/env.ts';
import worker from '../../src/index.ts';
import { newId } from '../../src/lib/ids.ts';
import { sealSecrets } from '../../src/services/payment-methods/secrets.ts';
import {
  type ApiResponse,
  type CallOptions,
  call,
  expectError,
  apiRequest,
  observedResponse,
  seedUser,
  TEST_PASSWORD,
  type TestUser,
} from '../helpers/api.ts';
import { type Conformance, createConformance, listOperations } from '../helpers/conformance.ts';
import { recordResponse } from '../helpers/leak-scan.ts';
import {
  paymentBody,
  paymentRow,
  SANDBOX_POS,
  SANDBOX_QR,
  sandboxCredential,
  setupMerchant,
} from '../helpers/merchant.ts';
import { dataPlane } from '../helpers/shards.ts';

/**
 * A `live` deployment: the Worker as wrangler.toml's `live` runs it (ENVIRONMENT = live), on the suite's databases.
 * The sandbox moves no money: there it is neither listed nor accepted, and its test helpers do not exist.
 */
const liveEnv: Env = { ...env, ENVIRONMENT: 'live' };

let liveDescription: Conformance;
const problems: string[] = [];

/** As `call` (test/helpers/api.ts), through the live deployment, each answer checked against live's own description. */
async function liveCall<T = any>(method: string, path: string, options: CallOptions = {}): Promise<ApiResponse<T>> {
  const ctx = createExecutionContext();
  // The Worker's own entry (src/index.ts), which picks the app of the deployment's environment.
  const request = apiRequest(method, path, options) as Request<unknown, IncomingRequestCfProperties>;
  const res = await worker.fetch(request, liveEnv, ctx);
  await waitOnExecutionContext(ctx);
  const text = await res.text();
  const id = recordResponse(`${method} ${path} (live)`, res.status, text);
  if (liveDescription) {
    const checked = liveDescription.check(observedResponse(method, path, res, text));
    problems.push(...checked.problems.map((problem) => `${method} ${path} ${res.status}: ${problem}`));
  }
  return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : undefined, id };
}

async function liveSession(user: TestUser) {
  const res = await liveCall('POST', '/v1/auth/login', { body: { email: user.email, password: TEST_PASSWORD } });
  expect(res.status, res.text).toBe(201);
  return res.body.data.access_token as string;
}

/** A sandbox method in `live` as one made before the sandbox became `test` only: its secrets sealed for live. */
async function legacyLiveSandboxMethod(ownerId: string, versionId: string, apiKey: string) {
  const deps = createDeps(liveEnv);
  const id = crypto.randomUUID();
  const now = Date.now();
  await deps.control
    .insert(paymentMethods)
    .values({
      id,
      userId: ownerId,
      environment: 'live',
      connectorVersionId: versionId,
      provider: 'sandbox',
      type: versionId === SANDBOX_QR ? 'qr' : 'pos',
      name: 'Made before',
      enabled: true,
      capabilities: ['payments', 'refunds', 'cancellations'],
      displayConfiguration: {},
      secretsCiphertext: await sealSecrets(deps, id, { credentials: { api_key: apiKey }, configuration: {} }),
      createdAt: now,
      updatedAt: now,
      deletedAt: null,
    })
    .run();
  return id;
}

let testOperations: { method: string; path: string }[];

beforeAll(async () => {
  const described = await liveCall('GET', '/openapi.json');
  expect(described.status).toBe(200);
  liveDescription = createConformance(described.body);
  testOperations = listOperations((await call('GET', '/openapi.json')).body);
});

describe('a live deployment', () => {
  it('describes no test helper: no operation, tag or schema of theirs in its /openapi.json', async () => {
    const helpers = testOperations.filter(({ path }) => path.startsWith('/v1/test-helpers/'));
    expect(helpers.length).toBeGreaterThanOrEqual(5);
    const live = listOperations(liveDescription.document);
    expect(live.filter(({ path }) => path.startsWith('/v1/test-helpers/'))).toEqual([]);
    // Everything else is described alike.
    expect(live.map(({ method, path }) => `${method} ${path}`)).toEqual(
      testOperations.filter((op) => !helpers.includes(op)).map(({ method, path }) => `${method} ${path}`),
    );
    expect(liveDescription.document.tags.map((tag: { name: string }) => tag.name)).not.toContain('Test helpers');
    expect(
      Object.keys(liveDescription.document.components.schemas).filter((name) => name.startsWith('Simulate')),
    ).toEqual([]);
    expect(liveDescription.document.servers[0].description).toBe('This deployment (live)');
  });

  it('answers every test-helper route with the unknown-route 404 before authentication', async () => {
    const user = await seedUser();
    const token = await liveSession(user);
    const helpers = testOperations.filter(({ path }) => path.startsWith('/v1/test-helpers/'));
    for (const { method, path } of helpers) {
      const concrete = path.replace('{action}', 'approve').replace(/\{[a-z_]+\}/g, 'x1');
      for (const credential of [undefined, 'sk_live_not-a-key', token]) {
        const res = await liveCall(method.toUpperCase(), concrete, {
          ...(credential ? { token: credential } : {}),
          body: path.endsWith('/close') ? { outcome: 'lost' } : {},
        });
        expectError(res, 404, 'not_found');
        expect(res.body.error.message).toBe((await liveCall('GET', '/v1/no/such/route')).body.error.message);
      }
      // The same request in `test` asks for a credential first.
      expectError(await call(method.toUpperCase(), concrete, { body: {} }), 401, 'unauthorized');
    }
  });

  it('lists no sandbox connector (test does)', async () => {
    const token = await liveSession(await seedUser());
    const live = await liveCall('GET', '/v1/connectors?limit=100', { token });
    expect(live.status, live.text).toBe(200);
    const providers = live.body.data.map((definition: { provider: string }) => definition.provider);
    expect(providers).not.toContain('sandbox');
    expect(providers).toEqual(expect.arrayContaining(['stripe', 'mercadopago', 'adyen']));
    expect(live.body.pagination.total).toBe(live.body.data.length);

    const session = await call('POST', '/v1/auth/login', {
      body: { email: (await seedUser()).email, password: TEST_PASSWORD },
    });
    const test = await call('GET', '/v1/connectors?limit=100', { token: session.body.data.access_token });
    expect(test.body.data.map((definition: { provider: string }) => definition.provider)).toContain('sandbox');
    expect(test.body.pagination.total).toBe(live.body.pagination.total + 2);
  });

  it('refuses a payment method on a sandbox version, naming the field', async () => {
    const token = await liveSession(await seedUser());
    for (const version of [SANDBOX_POS, SANDBOX_QR]) {
      const res = await liveCall('POST', '/v1/account/payment-methods', {
        token,
        body: {
          connector_definition_version_id: version,
          name: 'Play money',
          credentials: { api_key: 'abcdefgh-123' },
        },
      });
      const error = expectError(res, 400, 'invalid_request');
      expect(error.details.fields).toEqual([
        { field: 'connector_definition_version_id', issue: 'Not offered in the live environment' },
      ]);
    }
    const listed = await liveCall('GET', '/v1/account/payment-methods', { token });
    expect(listed.body.data).toEqual([]);
  });

  it('a sandbox method left in live asks the sandbox nothing, takes no change, and can be deleted', async () => {
    // Payments are refused by the adapter itself (test/connectors/sandbox.test.ts: every call in `live`); through the
    // API here by the terminal read, which runs in this Worker (a payment's operation runs in the idempotency object,
    // which the suite's workerd binds to the `test` deployment).
    const user = await seedUser();
    const token = await liveSession(user);
    const apiKey = sandboxCredential();
    const methodId = await legacyLiveSandboxMethod(user.id, SANDBOX_POS, apiKey);
    const terminal = await liveCall('GET', `/v1/payment-methods/${methodId}/terminal`, { token });
    expect(expectError(terminal, 422, 'connector_configuration_invalid').details).toEqual({
      processor_code: 'sandbox_not_offered_in_live',
    });

    const changed = await liveCall('PATCH', `/v1/account/payment-methods/${methodId}`, {
      token,
      body: { credentials: { api_key: sandboxCredential() } },
    });
    expectError(changed, 422, 'connector_configuration_invalid');
    expect(changed.body.error.message).toContain('delete the method');
    expectError(
      await liveCall('PATCH', `/v1/account/payment-methods/${methodId}`, { token, body: { name: 'Renamed' } }),
      422,
      'connector_configuration_invalid',
    );

    expect((await liveCall('DELETE', `/v1/account/payment-methods/${methodId}`, { token })).status).toBe(204);
    expect((await liveCall('GET', '/v1/account/payment-methods', { token })).body.data).toEqual([]);
  });

  it('refuses self-signed sandbox news for a sandbox method left in live: nothing applied', async () => {
    // A sandbox merchant with a collected payment, its method and payment then in `live` (as made there before).
    const m = await setupMerchant();
    const paid = await m.pay(paymentBody(m.pos.id, '25.00'));
    expect(paid.body.data.status).toBe('approved');
    const payment = paid.body.data as { id: string; processor_reference: string };
    const liveDeps = createDeps(liveEnv);
    await env.DB.prepare("UPDATE payment_methods SET environment = 'live', secrets_ciphertext = ? WHERE id = ?")
      .bind(
        await sealSecrets(liveDeps, m.pos.id, { credentials: { api_key: m.pos.apiKey }, configuration: {} }),
        m.pos.id,
      )
      .run();
    await dataPlane.prepare("UPDATE payments SET environment = 'live' WHERE id = ?").bind(payment.id).run();
    const before = await paymentRow(payment.id);

    const lost = {
      id: newId('sbxevt'),
      resource: 'dispute',
      reference: payment.processor_reference,
      dispute: {
        id: `sbx_dp_${crypto.randomUUID().replaceAll('-', '').slice(0, 24)}`,
        status: 'lost',
        amount: { minor: 2500, currency: 'USD' },
        reason: 'fraudulent',
        evidence_due_by: null,
        funds_withdrawn_at: Date.now(),
        funds_reinstated_at: null,
      },
    };
    const approve = {
      id: newId('sbxevt'),
      resource: 'payment',
      reference: payment.processor_reference,
      status: 'failed',
    };
    for (const news of [lost, approve]) {
      const raw = JSON.stringify(news);
      const res = await liveCall('POST', `/v1/processor-notifications/${m.pos.id}`, {
        rawBody: raw,
        headers: {
          'Content-Type': 'application/json',
          [SANDBOX_SIGNATURE_HEADER]: await signSandboxNotification({ api_key: m.pos.apiKey }, raw),
        },
      });
      expectError(res, 401, 'unauthorized');
    }
    const after = await paymentRow(payment.id);
    expect(after).toEqual(before);
    const { results } = await dataPlane
      .prepare('SELECT id FROM disputes WHERE payment_id = ?')
      .bind(payment.id)
      .all<{ id: string }>();
    expect(results).toEqual([]);
  });

  it('answered every request as its own description says', () => {
    expect(problems).toEqual([]);
  });
});
