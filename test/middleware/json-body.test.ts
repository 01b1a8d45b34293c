import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_ECHO_ITEMS, MAX_ECHO_LENGTH } from '../../src/lib/echo.ts';
import { call, expectError, seedSession, type ApiResponse } from '../helpers/api.ts';
import { paymentBody, paymentRow, setupMerchant, type Merchant } from '../helpers/merchant.ts';
import { getWebhookSecret } from '../helpers/webhooks.ts';

/**
 * The input gate (middleware/json-body.ts): nothing a client sends is silently ignored. A body sent to an
 * operation that declares none, a query parameter an operation does not declare, an integer spelt other
 * than in decimal digits, a lone surrogate: each is refused with 400 naming it. And what an error repeats
 * of the request is bounded (lib/echo.ts).
 */

let m: Merchant;

beforeAll(async () => {
  m = await setupMerchant();
});

const fieldsOf = (res: ApiResponse) => (res.body.error.details.fields as Array<{ field: string; issue: string }>) ?? [];

async function pendingQr(value = '20.00') {
  const res = await m.pay(paymentBody(m.qr.id, value));
  expect(res.status, res.text).toBe(201);
  expect(res.body.data.status).toBe('pending');
  return res.body.data.id as string;
}

const cancel = (id: string, options: { body?: unknown; rawBody?: string } = {}) =>
  call('POST', `/v1/payments/${id}/cancel`, {
    token: m.key.secret,
    ...options,
    headers: { 'Idempotency-Key': crypto.randomUUID(), 'Content-Type': 'application/json' },
  });

describe('an operation that declares no body', () => {
  it('refuses a cancel with an amount (it canceled the whole payment): 400 naming the body, payment untouched', async () => {
    const id = await pendingQr();
    const res = await cancel(id, { body: { amount: { value: '5.00', currency: 'USD' }, reason: 'fraud' } });
    const error = expectError(res, 400, 'invalid_request');
    expect(error.details).toEqual({ fields: [{ field: '(body)', issue: 'No body expected' }] });
    expect((await paymentRow(id))!.status).toBe('pending');
  });

  it('takes an empty body, or {} (whitespace around it too)', async () => {
    for (const rawBody of ['', '{}', ' { } \n']) {
      const id = await pendingQr();
      const res = await cancel(id, { rawBody });
      expect(res.status, `${JSON.stringify(rawBody)}: ${res.text}`).toBe(200);
      expect(res.body.data.status).toBe('canceled');
    }
  });

  it('refuses one on the test helpers, revoke, the secret rotations, unlink and delete, and changes nothing', async () => {
    const id = await pendingQr();
    const approve = await call('POST', `/v1/test-helpers/payments/${id}/approve`, {
      token: m.key.secret,
      body: { status: 'declined' },
    });
    expect(fieldsOf(expectErrorOf(approve))).toEqual([{ field: '(body)', issue: 'No body expected' }]);
    expect((await paymentRow(id))!.status).toBe('pending');

    const { secret } = await getWebhookSecret(m.session);
    const rotate = await call('POST', '/v1/account/webhook-secret/rotate', {
      token: m.session.accessToken,
      body: { secret: 'whsec_chosen' },
    });
    expectErrorOf(rotate);
    expect((await getWebhookSecret(m.session)).secret).toBe(secret);

    const revoke = await call('POST', `/v1/account/api-keys/${m.key.id}/revoke`, {
      token: m.session.accessToken,
      body: { reason: 'leaked' },
    });
    expectErrorOf(revoke);
    const key = await env.DB.prepare('SELECT status FROM api_keys WHERE id = ?')
      .bind(m.key.id)
      .first<{ status: string }>();
    expect(key!.status).toBe('active');

    const endpoint = await call('POST', '/v1/account/webhook-endpoints', {
      token: m.session.accessToken,
      body: { url: 'https://hooks.example.com/gate', enabled_events: ['*'] },
    });
    expect(endpoint.status, endpoint.text).toBe(201);
    const endpointId = endpoint.body.data.id as string;
    for (const path of [`${endpointId}/rotate-secret`, `${endpointId}/test`]) {
      expectErrorOf(
        await call('POST', `/v1/account/webhook-endpoints/${path}`, { token: m.session.accessToken, body: { x: 1 } }),
      );
    }
    expectErrorOf(
      await call('DELETE', `/v1/account/webhook-endpoints/${endpointId}`, {
        token: m.session.accessToken,
        body: { force: true },
      }),
    );
    const still = await call('GET', `/v1/account/webhook-endpoints/${endpointId}`, { token: m.session.accessToken });
    expect(still.body.data.secret).toBeUndefined();
    expect(still.status).toBe(200);

    expectErrorOf(
      await call('POST', `/v1/account/payment-methods/${m.qr.id}/api-keys/${m.key.id}/disable`, {
        token: m.session.accessToken,
        body: { api_key_id: m.key.id },
      }),
    );
    expect((await m.pay(paymentBody(m.qr.id, '20.00'))).status).toBe(201);
  });

  it('still takes the body an operation declares as optional (logout)', async () => {
    const session = await seedSession();
    const res = await call('POST', '/v1/auth/logout', {
      token: session.accessToken,
      body: { refresh_token: session.refreshToken },
    });
    expect(res.status, res.text).toBe(204);
  });
});

/** A 400 `invalid_request` naming the body. */
function expectErrorOf(res: ApiResponse): ApiResponse {
  const error = expectError(res, 400, 'invalid_request');
  expect(error.details, res.text).toEqual({ fields: [{ field: '(body)', issue: 'No body expected' }] });
  return res;
}

describe('query parameters an operation does not declare', () => {
  it('are refused with 400 naming each, on reads and writes alike', async () => {
    const id = await pendingQr();
    const read = await call('GET', `/v1/payments/${id}?expand=refunds&amount=1`, { token: m.key.secret });
    expectError(read, 400, 'invalid_request');
    expect(fieldsOf(read)).toEqual([
      { field: 'query.expand', issue: 'Unknown parameter' },
      { field: 'query.amount', issue: 'Unknown parameter' },
    ]);
    const write = await call('POST', `/v1/payments/${id}/cancel?amount=5.00`, {
      token: m.key.secret,
      headers: { 'Idempotency-Key': crypto.randomUUID() },
    });
    expect(fieldsOf(write)).toEqual([{ field: 'query.amount', issue: 'Unknown parameter' }]);
    expect((await paymentRow(id))!.status).toBe('pending');
    // The declared ones still work.
    expect((await call('GET', '/v1/payments?limit=1', { token: m.key.secret })).status).toBe(200);
  });
});

describe('integer query parameters', () => {
  it('are decimal digits only: hexadecimal, exponents, signs, spaces and fractions are refused', async () => {
    for (const value of ['0x10', '1e2', '%201', '+1', '%2B1', '1%20', '1.0', '', '%D9%A1']) {
      const res = await call('GET', `/v1/payments?limit=${value}`, { token: m.key.secret });
      expectError(res, 400, 'invalid_request');
      expect(fieldsOf(res), value).toEqual([{ field: 'query.limit', issue: 'Expected an integer in decimal digits' }]);
    }
    const padded = await call('GET', '/v1/payments?limit=010&offset=0', { token: m.key.secret });
    expect(padded.status, padded.text).toBe(200);
    expect(padded.body.pagination).toMatchObject({ limit: 10, offset: 0 });
  });
});

describe('a lone UTF-16 surrogate', () => {
  it('is refused anywhere in a body, naming its key path; a whole pair is taken', async () => {
    const body = (metadata: string) =>
      `{"amount":{"value":"3.00","currency":"USD"},"external_reference":"order-${crypto.randomUUID()}","payment_method":"${m.pos.id}","metadata":${metadata}}`;
    const pay = (rawBody: string) =>
      call('POST', '/v1/payments', {
        token: m.key.secret,
        rawBody,
        headers: { 'Content-Type': 'application/json', 'Idempotency-Key': crypto.randomUUID() },
      });
    for (const [metadata, field] of [
      ['{"note":"x\\ud800y"}', 'metadata.note'],
      ['{"note":"\\udfff"}', 'metadata.note'],
      ['{"x\\udbff":"y"}', 'metadata.x\ufffd'],
    ] as const) {
      const res = await pay(body(metadata));
      const error = expectError(res, 400, 'invalid_request');
      expect(error.details, metadata).toEqual({ fields: [{ field, issue: 'Lone surrogate' }] });
    }
    const pair = await pay(body('{"note":"x\\ud83d\\ude00y"}'));
    expect(pair.status, pair.text).toBe(201);
    expect(pair.body.data.metadata).toEqual({ note: 'x😀y' });
    expect(
      (await call('GET', `/v1/payments/${pair.body.data.id}`, { token: m.key.secret })).body.data.metadata,
    ).toEqual({ note: 'x😀y' });
  });
});

describe('what an error repeats of the request', () => {
  it('is cut: a 9,000-character metadata key comes back as its first 200 characters and an ellipsis', async () => {
    const key = `k${'x'.repeat(8999)}`;
    const res = await m.pay(paymentBody(m.pos.id, '3.00', { metadata: { [key]: 'v' } }));
    expectError(res, 400, 'invalid_request');
    const [issue] = fieldsOf(res);
    expect(issue!.field).toBe(`${`metadata.${key}`.slice(0, MAX_ECHO_LENGTH)}…`);
    expect(res.text).not.toContain('x'.repeat(MAX_ECHO_LENGTH));
    expect(res.text.length).toBeLessThan(2_000);
  });

  it('is cut for a query parameter name too, and shown without control characters', async () => {
    const name = `q${'n'.repeat(9_000)}`;
    const long = await call('GET', `/v1/payments?${name}=1`, { token: m.key.secret });
    expect(fieldsOf(long)[0]!.field).toBe(`${`query.${name}`.slice(0, MAX_ECHO_LENGTH)}…`);
    const control = await call('GET', `/v1/payments?a%1B%5B31mb%0Ac=1`, { token: m.key.secret });
    expect(fieldsOf(control)[0]!.field).toBe('query.a\ufffd[31mb\ufffdc');
  });

  it('is a bounded list: 2,000 unknown fields are named up to 50, with how many more', async () => {
    const body = Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [`unknown_${i}`, i]));
    const res = await call('POST', '/v1/auth/login', { body });
    const error = expectError(res, 400, 'invalid_request');
    expect((error.details.fields as unknown[]).length).toBe(MAX_ECHO_ITEMS);
    expect(error.details.fields_omitted).toBeGreaterThanOrEqual(2_000 - MAX_ECHO_ITEMS);
  });
});
