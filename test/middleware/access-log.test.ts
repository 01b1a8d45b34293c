import { beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, seedUser, type ApiResponse } from '../helpers/api.ts';
import { recordedLogLines } from '../helpers/leak-scan.ts';
import { paymentBody, setupMerchant, type Merchant } from '../helpers/merchant.ts';
import { appOf } from '../../src/app.ts';

const app = appOf('test');

/** The access log (src/middleware/access-log.ts): one line per request, ids and outcome, nothing secret. */

const FIELDS = [
  'credential',
  'credential_id',
  'duration_ms',
  'environment',
  'error_code',
  'event',
  'idempotent_replayed',
  'level',
  'method',
  'owner_id',
  'request_id',
  'route',
  'status',
  'time',
];

interface AccessLine {
  level: string;
  event: string;
  request_id: string;
  environment: string;
  method: string;
  route: string | null;
  status: number;
  duration_ms: number;
  owner_id: string | null;
  credential: 'api_key' | 'user' | null;
  credential_id: string | null;
  error_code: string | null;
  idempotent_replayed: boolean;
}

/** The raw access-log lines of one response, found by its X-Request-Id. */
function rawLinesOf(res: ApiResponse): string[] {
  const requestId = res.headers.get('x-request-id')!;
  return recordedLogLines().filter(
    (line) => line.includes('"event":"request"') && line.includes(`"request_id":"${requestId}"`),
  );
}

function lineOf(res: ApiResponse): AccessLine {
  const lines = rawLinesOf(res);
  expect(lines, 'exactly one access-log line per request').toHaveLength(1);
  const line = JSON.parse(lines[0]!) as AccessLine;
  expect(Object.keys(line).sort()).toEqual(FIELDS);
  expect(line.duration_ms).toBeGreaterThanOrEqual(0);
  expect(line.environment).toBe('test');
  return line;
}

let m: Merchant;
beforeAll(async () => {
  m = await setupMerchant();
});

describe('access log', () => {
  it('a business call with an API key: route pattern, status, owner and key ids; never the key, the ids in the path or the query', async () => {
    const paid = await m.pay(paymentBody(m.pos.id, '10.00', { external_reference: 'order-for-jane.doe@example.com' }));
    const create = lineOf(paid);
    expect(create).toMatchObject({
      level: 'info',
      event: 'request',
      method: 'POST',
      route: '/v1/payments',
      status: 201,
      owner_id: m.session.user.id,
      credential: 'api_key',
      credential_id: m.key.id,
      error_code: null,
      idempotent_replayed: false,
    });

    const read = await call('GET', `/v1/payments/${paid.body.data.id}`, { token: m.key.secret });
    expect(lineOf(read)).toMatchObject({
      method: 'GET',
      route: '/v1/payments/{payment_id}',
      status: 200,
      credential: 'api_key',
      credential_id: m.key.id,
    });

    const listed = await call('GET', '/v1/payments?external_reference=order-for-jane.doe%40example.com', {
      token: m.key.secret,
    });
    expect(listed.body.data).toHaveLength(1);
    expect(lineOf(listed)).toMatchObject({ route: '/v1/payments', status: 200 });

    for (const res of [paid, read, listed]) {
      const [raw] = rawLinesOf(res);
      expect(raw).not.toContain(m.key.secret);
      expect(raw).not.toMatch(/authorization|bearer/i);
      expect(raw).not.toContain(paid.body.data.id);
      // Neither the body nor the query string: the merchant's reference (here personal data) is in neither line.
      expect(raw).not.toContain('jane.doe');
      expect(raw).not.toContain(m.pos.id);
    }
  });

  it('a user token: the session id, never the token; an error: its code', async () => {
    const missing = await call('GET', '/v1/payments/pay_nope', { token: m.session.accessToken });
    expectError(missing, 404, 'payment_not_found');
    const line = lineOf(missing);
    expect(line).toMatchObject({
      route: '/v1/payments/{payment_id}',
      status: 404,
      owner_id: m.session.user.id,
      credential: 'user',
      error_code: 'payment_not_found',
    });
    expect(line.credential_id).toMatch(/^ses_/);
    const [raw] = rawLinesOf(missing);
    expect(raw).not.toContain(m.session.accessToken);
    expect(raw).not.toContain(m.session.accessToken.split('.')[2]!);
    expect(raw).not.toContain('pay_nope');
  });

  it('refused before any route: the code, no caller; an unknown route: no pattern', async () => {
    const invalid = await call('POST', '/v1/payments', {
      token: m.key.secret,
      rawBody: '{"a":1,"a":2}',
      headers: { 'Content-Type': 'application/json', 'Idempotency-Key': 'k-1' },
    });
    expectError(invalid, 400, 'invalid_request');
    // The body gate answers before authentication: the route is known, the caller is not.
    expect(lineOf(invalid)).toMatchObject({
      route: '/v1/payments',
      status: 400,
      error_code: 'invalid_request',
      owner_id: null,
      credential: null,
      credential_id: null,
    });

    const unauthorized = await call('GET', '/v1/payments', {
      token: 'sk_test_not-a-real-key-000000000000000000000000',
    });
    expect(lineOf(unauthorized)).toMatchObject({
      route: '/v1/payments',
      status: 401,
      error_code: 'unauthorized',
      credential: null,
    });
    expect(rawLinesOf(unauthorized)[0]).not.toContain('not-a-real-key');

    const nowhere = await call('GET', '/v1/no/such/route?token=abc');
    expect(lineOf(nowhere)).toMatchObject({ route: null, status: 404, error_code: 'not_found' });
    expect(rawLinesOf(nowhere)[0]).not.toContain('token=abc');
  });

  it('every declared operation is logged under its own pattern, also one routed per value of a parameter', async () => {
    const operations = app.openAPIRegistry.definitions.flatMap((definition) =>
      definition.type === 'route' ? [definition.route] : [],
    );
    // `.../{payment_id}/dispute` beside `.../{payment_id}/{action}`, routed per action (lib/openapi.ts, openapiPerValue).
    expect(operations.map((route) => route.path)).toContain('/v1/test-helpers/payments/{payment_id}/dispute');
    for (const { method, path } of operations) {
      // No credential: each answers as it refuses (or serves) a stranger; the line names the operation.
      const res = await call(method.toUpperCase(), path.replace('{action}', 'approve').replace(/\{[a-z_]+\}/g, 'x1'));
      expect(lineOf(res), `${method} ${path}`).toMatchObject({ method: method.toUpperCase(), route: path });
    }
  });

  it('a login: neither the email nor the password', async () => {
    const user = await seedUser();
    const login = await call('POST', '/v1/auth/login', { body: { email: user.email, password: user.password } });
    expect(login.status).toBe(201);
    expect(lineOf(login)).toMatchObject({ route: '/v1/auth/login', status: 201, owner_id: null, credential: null });
    const failed = await call('POST', '/v1/auth/login', {
      body: { email: user.email, password: 'wrong-password-123' },
    });
    expect(lineOf(failed)).toMatchObject({ status: 401, error_code: 'invalid_credentials' });
    for (const res of [login, failed]) {
      const [raw] = rawLinesOf(res);
      expect(raw).not.toContain(user.email);
      expect(raw).not.toContain(user.password);
      expect(raw).not.toContain('wrong-password-123');
      expect(raw).not.toContain(login.body.data.refresh_token);
    }
  });

  it('an idempotent replay says so, and a replayed error keeps its code', async () => {
    const key = crypto.randomUUID();
    const body = paymentBody(m.pos.id, '10.54');
    const first = await m.pay(body, key);
    const again = await m.pay(body, key);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(lineOf(first)).toMatchObject({ status: 201, idempotent_replayed: false });
    expect(lineOf(again)).toMatchObject({ status: 201, idempotent_replayed: true });

    const reused = await m.pay({ ...body, description: 'another body' }, key);
    expectError(reused, 409, 'idempotency_key_reused');
    expect(lineOf(reused)).toMatchObject({ status: 409, error_code: 'idempotency_key_reused' });
  });
});
