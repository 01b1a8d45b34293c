import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { createRouter } from '../src/lib/openapi.ts';
import { handleError } from '../src/middleware/error-handler.ts';
import { requestContext } from '../src/middleware/request-context.ts';
import { call, createKey, expectError, seedSession, seedUser, type ApiResponse } from './helpers/api.ts';
import { recordResponse } from './helpers/leak-scan.ts';
import { newReference, paymentBody, paymentRowsByReference, setupMerchant } from './helpers/merchant.ts';
import { MAX_JSON_DEPTH } from '../src/lib/strict-json.ts';

/** The conventions every route shares: request ids, the error envelope, the body gate, timestamps, paging. */

const REQUEST_ID = /^req_[0-9a-z]{20}$/;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const KIB = 1024;

/** A syntactically valid JSON object of exactly `bytes` bytes. */
function jsonObjectOfSize(bytes: number): string {
  const shell = '{"email":"a@example.com","password":"","pad":""}';
  return shell.replace('"pad":""', `"pad":"${'x'.repeat(bytes - shell.length)}"`);
}

function expectRequestId(res: ApiResponse) {
  expect(res.headers.get('x-request-id')).toMatch(REQUEST_ID);
}

describe('X-Request-Id', () => {
  it('is on a success, a 4xx, an unknown route, /openapi.json, /docs and a static asset', async () => {
    const session = await seedSession();
    const responses = [
      await call('GET', '/v1/auth/me', { token: session.accessToken }),
      await call('GET', '/v1/auth/me'),
      await call('GET', '/v1/no-such-route'),
      await call('GET', '/openapi.json'),
      await call('GET', '/docs'),
      await call('GET', '/docs/assets/init.js'),
    ];
    expect(responses.map((r) => r.status)).toEqual([200, 401, 404, 200, 200, 200]);
    for (const res of responses) expectRequestId(res);
    const ids = responses.map((r) => r.headers.get('x-request-id'));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('equals the request_id of the error body', async () => {
    const res = await call('GET', '/v1/users/usr_nope');
    const error = expectError(res, 401, 'unauthorized');
    expect(error.request_id).toMatch(REQUEST_ID);
    expect(error.request_id).toBe(res.headers.get('x-request-id'));
  });

  it('is on a missing static asset, answered in the envelope', async () => {
    const res = await call('GET', '/docs/assets/no-such-file.js');
    expectError(res, 404, 'not_found');
  });
});

describe('the error envelope', () => {
  it('has exactly code, message, category, retryable, request_id and details', async () => {
    const res = await call('GET', '/v1/auth/me');
    const error = expectError(res, 401, 'unauthorized');
    expect(Object.keys(res.body)).toEqual(['error']);
    expect(Object.keys(error).sort()).toEqual(['category', 'code', 'details', 'message', 'request_id', 'retryable']);
    expect(error).toMatchObject({ category: 'authentication', retryable: false, details: {} });
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('answers an unknown route with 404 not_found', async () => {
    for (const path of ['/v1/no-such-route', '/v1', '/', '/v1/users/usr_x/nested/deeper']) {
      const error = expectError(await call('GET', path), 404, 'not_found');
      expect(error.category).toBe('not_found');
    }
  });

  it('answers a wrong method on a known path with 404 not_found', async () => {
    expectError(await call('PUT', '/v1/users', { body: {} }), 404, 'not_found');
    expectError(await call('DELETE', '/v1/auth/login'), 404, 'not_found');
    expectError(await call('GET', '/v1/auth/logout'), 404, 'not_found');
    expectError(await call('POST', '/openapi.json', { body: {} }), 404, 'not_found');
  });

  it('never leaks a stack or internals for an unexpected exception', async () => {
    // A test-only app with the same conventions as the Worker and a route that fails unexpectedly.
    const app = createRouter();
    app.use('*', requestContext);
    app.onError(handleError);
    app.get('/boom', () => {
      throw new Error('boom secret-internal-detail');
    });
    const raw = await app.request('/boom', {}, env);
    const text = await raw.text();
    const id = recordResponse('GET /boom (test-only app)', raw.status, text);
    const res: ApiResponse = { status: raw.status, headers: raw.headers, text, body: JSON.parse(text), id };

    const error = expectError(res, 500, 'internal_error');
    expect(error).toMatchObject({ category: 'internal', retryable: true, details: {} });
    expect(text).not.toContain('boom');
    expect(text).not.toContain('secret-internal-detail');
    expect(text).not.toMatch(/stack|at \w+ \(|\.ts:\d+/i);
    expectRequestId(res);
  });
});

describe('the JSON body gate', () => {
  it('refuses malformed JSON with 400 invalid_request', async () => {
    for (const rawBody of ['{"email":', '{email: "a@example.com"}', "{'a':1}", '{"a":1,}', '{"a":1}{"b":2}']) {
      const res = await call('POST', '/v1/auth/login', { rawBody, headers: { 'Content-Type': 'application/json' } });
      const error = expectError(res, 400, 'invalid_request');
      expect(error.category).toBe('validation');
      expect(error.details).toEqual({ fields: [{ field: '(body)', issue: 'Malformed JSON' }] });
    }
  });

  it('refuses JSON that is not an object with 400 invalid_request', async () => {
    for (const rawBody of ['[]', '[{"email":"a@example.com"}]', '"text"', '42', 'null', 'true']) {
      const res = await call('POST', '/v1/auth/login', { rawBody, headers: { 'Content-Type': 'application/json' } });
      const error = expectError(res, 400, 'invalid_request');
      expect(error.details).toEqual({ fields: [{ field: '(body)', issue: 'Expected a JSON object' }] });
    }
  });

  it('refuses invalid UTF-8 with 400 invalid_request', async () => {
    const bytes = new Uint8Array([
      ...new TextEncoder().encode('{"email":"'),
      0xff,
      0xfe,
      0xc3,
      ...new TextEncoder().encode('"}'),
    ]);
    const res = await call('POST', '/v1/auth/login', {
      rawBody: bytes,
      headers: { 'Content-Type': 'application/json' },
    });
    expectError(res, 400, 'invalid_request');
  });

  it('refuses another Content-Type with 415 invalid_request', async () => {
    const cases: Array<[string | undefined, string]> = [
      ['text/plain', '{"email":"a@example.com","password":"x"}'],
      ['application/x-www-form-urlencoded', 'email=a%40example.com&password=x'],
      ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="email"\r\n\r\na\r\n--x--'],
      ['application/jsonp', '{}'],
    ];
    for (const [contentType, rawBody] of cases) {
      const res = await call('POST', '/v1/auth/login', {
        rawBody,
        headers: contentType ? { 'Content-Type': contentType } : {},
      });
      const error = expectError(res, 415, 'invalid_request');
      expect(error.details).toEqual({ fields: [{ field: 'Content-Type', issue: 'Expected application/json' }] });
    }
    // No Content-Type at all.
    const res = await call('POST', '/v1/auth/login', { rawBody: new TextEncoder().encode('{}') });
    expectError(res, 415, 'invalid_request');
  });

  it('accepts application/json with a charset parameter', async () => {
    const user = await seedUser();
    const res = await call('POST', '/v1/auth/login', {
      rawBody: JSON.stringify({ email: user.email, password: user.password }),
      headers: { 'Content-Type': 'application/json; charset=utf-8' },
    });
    expect(res.status).toBe(201);
    expectRequestId(res);
  });

  it('refuses a body over 64 KiB declared by Content-Length with 413 invalid_request', async () => {
    const rawBody = jsonObjectOfSize(64 * KIB + 1);
    const res = await call('POST', '/v1/auth/login', {
      rawBody,
      headers: { 'Content-Type': 'application/json', 'Content-Length': String(rawBody.length) },
    });
    const error = expectError(res, 413, 'invalid_request');
    expect(error.category).toBe('validation');
  });

  it('refuses a streamed body over 64 KiB without Content-Length with 413 invalid_request', async () => {
    const chunk = new TextEncoder().encode('x'.repeat(8 * KIB));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"pad":"'));
      },
      pull(controller) {
        if (sent >= 80 * KIB) {
          controller.enqueue(new TextEncoder().encode('"}'));
          controller.close();
          return;
        }
        sent += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    const res = await call('POST', '/v1/auth/login', {
      rawBody: stream,
      headers: { 'Content-Type': 'application/json' },
    });
    expectError(res, 413, 'invalid_request');
  });

  it('lets a body of exactly 64 KiB through to the route', async () => {
    const rawBody = jsonObjectOfSize(64 * KIB);
    expect(new TextEncoder().encode(rawBody).byteLength).toBe(64 * KIB);
    const res = await call('POST', '/v1/auth/login', { rawBody, headers: { 'Content-Type': 'application/json' } });
    // Past the gate: the route's own validation refuses the unknown `pad` field.
    const error = expectError(res, 400, 'invalid_request');
    expect(JSON.stringify(error.details)).toContain('pad');
  });

  it('refuses a repeated key at any depth with 400 naming its path, before the route runs', async () => {
    const m = await setupMerchant();
    const reference = newReference();
    const cases: Array<[string, string]> = [
      // The issue's example: the last key would win and create a 9999.00 payment.
      [
        `{"amount":{"value":"3.00","currency":"USD"},"amount":{"value":"9999.00","currency":"USD"},"external_reference":"${reference}","payment_method":"${m.pos.id}"}`,
        'amount',
      ],
      [
        `{"amount":{"value":"3.00","value":"9999.00","currency":"USD"},"external_reference":"${reference}","payment_method":"${m.pos.id}"}`,
        'amount.value',
      ],
      // Escapes name the same key: "\u0061mount" is "amount" to every parser.
      [
        `{"amount":{"value":"3.00","currency":"USD"},"\u0061mount":{"value":"9999.00","currency":"USD"},"external_reference":"${reference}","payment_method":"${m.pos.id}"}`,
        'amount',
      ],
      [
        `{"amount":{"value":"3.00","currency":"USD"},"external_reference":"${reference}","payment_method":"${m.pos.id}","metadata":{"a":"1","a":"1"}}`,
        'metadata.a',
      ],
    ];
    for (const [rawBody, field] of cases) {
      const res = await call('POST', '/v1/payments', {
        token: m.key.secret,
        rawBody,
        headers: { 'Content-Type': 'application/json', 'Idempotency-Key': crypto.randomUUID() },
      });
      const error = expectError(res, 400, 'invalid_request');
      expect(error.details, rawBody).toEqual({ fields: [{ field, issue: 'Duplicate key' }] });
    }
    expect(await paymentRowsByReference(reference)).toHaveLength(0);
  });

  it('refuses a __proto__ key anywhere with 400 naming its path (it was silently dropped from metadata)', async () => {
    const m = await setupMerchant();
    const reference = newReference();
    const base = `"amount":{"value":"3.00","currency":"USD"},"external_reference":"${reference}","payment_method":"${m.pos.id}"`;
    const cases: Array<[string, string]> = [
      [`{${base},"metadata":{"__proto__":{"admin":true}}}`, 'metadata.__proto__'],
      [`{"__proto__":{"status":"approved"},${base}}`, '__proto__'],
      [`{${base},"configuration":{"list":[{"ok":1},{"\u005f_proto__":1}]}}`, 'configuration.list.1.__proto__'],
    ];
    for (const [rawBody, field] of cases) {
      const res = await call('POST', '/v1/payments', {
        token: m.key.secret,
        rawBody,
        headers: { 'Content-Type': 'application/json', 'Idempotency-Key': crypto.randomUUID() },
      });
      const error = expectError(res, 400, 'invalid_request');
      expect(error.details, rawBody).toEqual({ fields: [{ field, issue: 'Forbidden key' }] });
    }
    expect(await paymentRowsByReference(reference)).toHaveLength(0);
    // Keys that only look alike are ordinary keys, refused or accepted by the route's own schema.
    const fine = await m.pay({
      ...paymentBody(m.pos.id, '3.00'),
      metadata: { proto: 'x', __proto: 'y', constructor_name: 'z' },
    });
    expect(fine.status, fine.text).toBe(201);
    expect(fine.body.data.metadata).toEqual({ proto: 'x', __proto: 'y', constructor_name: 'z' });
  });

  it(`refuses nesting deeper than ${MAX_JSON_DEPTH} levels with 400, and accepts ${MAX_JSON_DEPTH}`, async () => {
    const nested = (depth: number) =>
      `{"email":"a@example.com","password":"x","pad":${'['.repeat(depth - 1)}1${']'.repeat(depth - 1)}}`;
    const deep = expectError(
      await call('POST', '/v1/auth/login', {
        rawBody: nested(MAX_JSON_DEPTH + 1),
        headers: { 'Content-Type': 'application/json' },
      }),
      400,
      'invalid_request',
    );
    expect(deep.details).toEqual({
      fields: [{ field: '(body)', issue: `At most ${MAX_JSON_DEPTH} levels of nesting` }],
    });
    // At the limit the gate lets it through: the route itself refuses the unknown `pad`.
    const atLimit = expectError(
      await call('POST', '/v1/auth/login', {
        rawBody: nested(MAX_JSON_DEPTH),
        headers: { 'Content-Type': 'application/json' },
      }),
      400,
      'invalid_request',
    );
    expect(atLimit.details).toEqual({ fields: [{ field: 'pad', issue: 'Unknown field' }] });
  });

  it('reads an empty body as {} so the route names the missing fields', async () => {
    const res = await call('POST', '/v1/auth/login', { headers: { 'Content-Type': 'application/json' }, rawBody: '' });
    const error = expectError(res, 400, 'invalid_request');
    const fields = (error.details.fields as Array<{ field: string }>).map((f) => f.field);
    expect(fields).toEqual(expect.arrayContaining(['email', 'password']));
  });
});

describe('timestamps', () => {
  function collectTimestamps(value: unknown, out: Array<[string, unknown]> = []): Array<[string, unknown]> {
    if (Array.isArray(value)) for (const item of value) collectTimestamps(item, out);
    else if (value && typeof value === 'object') {
      for (const [key, inner] of Object.entries(value)) {
        if (key.endsWith('_at') && inner !== null) out.push([key, inner]);
        else collectTimestamps(inner, out);
      }
    }
    return out;
  }

  it('are ISO 8601 UTC with milliseconds in users, sessions and API keys', async () => {
    const admin = await seedSession({ role: 'admin' });
    await createKey(admin, ['payments:read']);
    const bodies = [
      (await call('GET', '/v1/auth/me', { token: admin.accessToken })).body,
      (await call('GET', '/v1/users?limit=5', { token: admin.accessToken })).body,
      (await call('GET', '/v1/account/api-keys', { token: admin.accessToken })).body,
      (await call('POST', '/v1/auth/refresh', { body: { refresh_token: admin.refreshToken } })).body,
    ];
    const timestamps = collectTimestamps(bodies);
    expect(timestamps.map(([key]) => key)).toEqual(expect.arrayContaining(['created_at', 'updated_at']));
    for (const [key, value] of timestamps) {
      expect(value, key).toMatch(ISO_MS);
      expect(new Date(value as string).toISOString()).toBe(value);
    }
  });
});

describe('pagination bounds (GET /v1/users)', () => {
  it('defaults to limit 50, offset 0 and accepts 1 and 100', async () => {
    const admin = await seedSession({ role: 'admin' });
    const byDefault = await call('GET', '/v1/users', { token: admin.accessToken });
    expect(byDefault.status).toBe(200);
    expect(byDefault.body.pagination).toMatchObject({ limit: 50, offset: 0 });
    expect(byDefault.body.pagination.total).toBeGreaterThanOrEqual(1);
    for (const limit of [1, 100]) {
      const res = await call('GET', `/v1/users?limit=${limit}&offset=0`, { token: admin.accessToken });
      expect(res.status).toBe(200);
      expect(res.body.pagination).toMatchObject({ limit, offset: 0 });
      expect(res.body.data.length).toBeLessThanOrEqual(limit);
    }
    const far = await call('GET', '/v1/users?offset=10000', { token: admin.accessToken });
    expect(far.status).toBe(200);
    expect(far.body.data).toEqual([]);
    expect(far.body.pagination).toMatchObject({ offset: 10000, has_more: false });
  });

  it('refuses limit outside 1..100, a negative offset and non-numbers with 400 naming the parameter', async () => {
    const admin = await seedSession({ role: 'admin' });
    const cases: Array<[string, string]> = [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=-1', 'limit'],
      ['limit=abc', 'limit'],
      ['limit=1.5', 'limit'],
      ['offset=-1', 'offset'],
      ['offset=abc', 'offset'],
      // Deeper than 10,000: walked with starting_after instead.
      ['offset=100000', 'offset'],
    ];
    for (const [query, parameter] of cases) {
      const res = await call('GET', `/v1/users?${query}`, { token: admin.accessToken });
      const error = expectError(res, 400, 'invalid_request');
      const fields = (error.details.fields as Array<{ field: string; issue: string }>) ?? [];
      expect(
        fields.map((f) => f.field),
        query,
      ).toContain(`query.${parameter}`);
      // The offending value is never echoed.
      expect(res.text).not.toContain('abc');
    }
  });
});
