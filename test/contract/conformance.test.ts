import { beforeAll, describe, expect, it } from 'vitest';
import {
  createConformance,
  servedConformance,
  type Conformance,
  type ObservedResponse,
} from '../helpers/conformance.ts';

/**
 * The response-conformance checker itself (test/helpers/conformance.ts), fed fake responses, so that
 * the suite-wide check (test/setup.ts) cannot pass by checking nothing.
 */

let served: Conformance;
beforeAll(async () => {
  served = await servedConformance();
});

const ISO = '2026-11-21T10:15:30.123Z';
const payment = () => ({
  id: 'pay_3kqz7w1v0c9m2x8bq4n6',
  status: 'approved',
  amount: { value: '25.00', currency: 'USD' },
  external_reference: 'order-1042',
  payment_method: '5b0e7c52-3f57-4b8e-9a55-0e4d7c1b2a91',
  processor_reference: 'sbx_1',
  action: { type: 'none' },
  description: null,
  metadata: null,
  webhook_url: null,
  charged_back_at: null,
  settlement: null,
  settlement_null_reason: 'not_reported',
  cancel_requested_at: null,
  created_at: ISO,
  updated_at: ISO,
});
const envelope = (code: string, category = 'not_found', retryable = false) => ({
  error: { code, message: 'No such payment.', category, retryable, request_id: 'req_abc123', details: {} },
});

function res(
  method: string,
  path: string,
  status: number,
  body: unknown,
  contentType: string | null = 'application/json',
): ObservedResponse {
  return {
    method,
    path,
    status,
    contentType,
    text: body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body),
  };
}
const problemsOf = (response: ObservedResponse) => served.check(response).problems;

describe('response conformance checker', () => {
  it('loads the served description and finds its operations', () => {
    expect(served.operations.length).toBeGreaterThan(20);
    expect(served.operations.map((op) => op.operationId)).toEqual(
      expect.arrayContaining(['createPayment', 'getPayment', 'logout']),
    );
  });

  it('accepts conforming responses (so the failures below are about what they change)', () => {
    expect(problemsOf(res('GET', '/v1/payments/pay_1', 200, { data: payment() }))).toEqual([]);
    expect(
      problemsOf(res('POST', '/v1/payments', 201, { data: payment() }, 'application/json; charset=UTF-8')),
    ).toEqual([]);
    expect(problemsOf(res('GET', '/v1/payments/pay_1?x=1', 404, envelope('payment_not_found')))).toEqual([]);
    expect(problemsOf(res('POST', '/v1/auth/logout', 204, undefined, null))).toEqual([]);
    expect(problemsOf(res('GET', '/v1/nowhere', 404, envelope('not_found')))).toEqual([]);
    expect(problemsOf(res('GET', '/docs', 200, '<html></html>', 'text/html; charset=utf-8'))).toEqual([]);
  });

  it('catches a status the operation does not declare', () => {
    const problems = problemsOf(res('GET', '/v1/payments/pay_1', 418, envelope('payment_not_found')));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/status 418 is not declared/);
    expect(served.check(res('GET', '/v1/payments/pay_1', 418, envelope('payment_not_found'))).operation).toBe(
      'GET /v1/payments/{payment_id}',
    );
    // A success status of another operation is not declared here either.
    expect(problemsOf(res('GET', '/v1/payments/pay_1', 201, { data: payment() }))[0]).toMatch(
      /status 201 is not declared/,
    );
  });

  it('catches a body that breaks its schema, through $refs into components', () => {
    const numberAmount = { data: { ...payment(), amount: { value: 25, currency: 'USD' } } };
    expect(problemsOf(res('POST', '/v1/payments', 201, numberAmount)).join('\n')).toMatch(/\/data\/amount\/value/);

    const { status: _dropped, ...withoutStatus } = payment();
    expect(problemsOf(res('GET', '/v1/payments/pay_1', 200, { data: withoutStatus })).join('\n')).toMatch(
      /required property "status"/,
    );

    expect(
      problemsOf(res('GET', '/v1/payments/pay_1', 200, { data: { ...payment(), status: 'bogus' } })).join('\n'),
    ).toMatch(/\/data\/status/);
    expect(
      problemsOf(res('GET', '/v1/payments/pay_1', 200, { data: { ...payment(), created_at: 'yesterday' } })).join('\n'),
    ).toMatch(/date-time/);
    expect(
      problemsOf(res('GET', '/v1/payments/pay_1', 200, { data: { ...payment(), description: 7 } })).join('\n'),
    ).toMatch(/\/data\/description/);
    expect(problemsOf(res('GET', '/v1/payments/pay_1', 200, [payment()]))).not.toEqual([]);
  });

  it('catches a field the schema does not declare, but not inside an open record', () => {
    expect(problemsOf(res('GET', '/v1/payments/pay_1', 200, { data: { ...payment(), card_number: '4242' } }))).toEqual([
      '/data/card_number: not declared by the schema',
    ]);
    expect(
      problemsOf(
        res('GET', '/v1/payments/pay_1', 200, {
          data: { ...payment(), amount: { value: '1.00', currency: 'USD', cents: 100 } },
        }),
      ).join('\n'),
    ).toMatch(/\/data\/amount\/cents/);
    expect(problemsOf(res('GET', '/v1/payments/pay_1', 200, { data: payment(), debug: true })).join('\n')).toMatch(
      /\/debug: not declared/,
    );
    expect(
      problemsOf(
        res('GET', '/v1/payments/pay_1', 404, { error: { ...envelope('payment_not_found').error, stack: 'at x' } }),
      ).join('\n'),
    ).toMatch(/\/error\/stack/);
    expect(
      problemsOf(res('GET', '/v1/nowhere', 404, { error: { ...envelope('not_found').error, stack: 'at x' } })).join(
        '\n',
      ),
    ).toMatch(/\/error\/stack/);
    // Open by declaration: metadata and error details take any keys.
    expect(
      problemsOf(res('GET', '/v1/payments/pay_1', 200, { data: { ...payment(), metadata: { anything: 'goes' } } })),
    ).toEqual([]);
    expect(
      problemsOf(
        res('GET', '/v1/payments/pay_1', 404, {
          error: { ...envelope('payment_not_found').error, details: { any: 1 } },
        }),
      ),
    ).toEqual([]);
  });

  it('follows allOf: both parts declare fields', () => {
    const key = {
      id: 'key_1',
      name: 'k',
      prefix: 'sk_test_Xy3q',
      scopes: ['payments:read'],
      environment: 'test',
      status: 'active',
      created_at: ISO,
      last_used_at: null,
      revoked_at: null,
      secret: 'sk_test_secret',
    };
    expect(problemsOf(res('POST', '/v1/account/api-keys', 201, { data: key }))).toEqual([]);
    expect(problemsOf(res('POST', '/v1/account/api-keys', 201, { data: { ...key, secret_hash: 'x' } }))).toEqual([
      '/data/secret_hash: not declared by the schema',
    ]);
    const { secret: _dropped, ...withoutSecret } = key;
    expect(problemsOf(res('POST', '/v1/account/api-keys', 201, { data: withoutSecret })).join('\n')).toMatch(/secret/);
  });

  it('catches a broken error envelope and an error code the operation does not list', () => {
    const { request_id: _dropped, ...noRequestId } = envelope('payment_not_found').error;
    expect(problemsOf(res('GET', '/v1/payments/pay_1', 404, { error: noRequestId })).join('\n')).toMatch(/request_id/);
    expect(
      problemsOf(res('GET', '/v1/payments/pay_1', 404, envelope('payment_not_found', 'nonsense'))).join('\n'),
    ).toMatch(/category/);
    expect(problemsOf(res('GET', '/v1/payments/pay_1', 404, envelope('user_not_found'))).join('\n')).toMatch(
      /user_not_found is not listed for status 404/,
    );
  });

  it('catches an undescribed route unless it is the 404 not_found envelope', () => {
    expect(problemsOf(res('GET', '/v1/nowhere', 200, { data: {} }))).not.toEqual([]);
    expect(problemsOf(res('DELETE', '/v1/payments/pay_1', 200, { data: payment() }))).not.toEqual([]);
    expect(problemsOf(res('GET', '/v1/nowhere', 404, envelope('payment_not_found')))).not.toEqual([]);
    expect(problemsOf(res('GET', '/v1/nowhere', 404, '<h1>Not found</h1>', 'text/html'))).not.toEqual([]);
  });

  it('catches a body where none is declared, a missing body, and an undeclared media type', () => {
    expect(problemsOf(res('POST', '/v1/auth/logout', 204, { ok: true }))[0]).toMatch(/without a body/);
    expect(problemsOf(res('GET', '/v1/payments/pay_1', 200, undefined, null))[0]).toMatch(/body is empty/);
    expect(
      problemsOf(res('GET', '/v1/payments/pay_1', 200, JSON.stringify({ data: payment() }), 'text/plain'))[0],
    ).toMatch(/Content-Type text\/plain/);
    expect(problemsOf(res('GET', '/v1/payments/pay_1', 200, '{"data":', 'application/json'))[0]).toMatch(
      /does not parse/,
    );
  });

  it('checks /docs by status only, and /openapi.json as the operation it is', () => {
    expect(problemsOf(res('GET', '/docs', 500, '', 'text/html'))).not.toEqual([]);
    const description = { openapi: '3.1.0', info: { title: 'Payment Service API', version: '1.2.0' }, paths: {} };
    expect(problemsOf(res('GET', '/openapi.json', 200, description))).toEqual([]);
    expect(problemsOf(res('GET', '/openapi.json', 304, undefined, null))).toEqual([]);
    expect(problemsOf(res('GET', '/openapi.json', 200, '{}')).join('\n')).toMatch(/required property "openapi"/);
  });

  it('catches a contract header sent where it is not declared, a required one missing, and a value its schema refuses', () => {
    const withHeaders = (response: ObservedResponse, headers: Record<string, string>) => ({
      ...response,
      headers: new Headers(headers),
    });
    const read = res('GET', '/v1/payments/pay_1', 200, { data: payment() });
    const created = res('POST', '/v1/payments', 201, { data: payment() });
    const ok = { 'X-Request-Id': 'req_abc123' };
    expect(problemsOf(withHeaders(read, { ...ok, 'X-Read-Bookmark': 'b1', 'Content-Type': 'x/y' }))).toEqual([]);
    expect(problemsOf(withHeaders(created, { ...ok, 'Idempotent-Replayed': 'true', 'X-Read-Bookmark': 'b1' }))).toEqual(
      [],
    );
    expect(problemsOf(withHeaders(read, {}))).toEqual(['header X-Request-Id is declared required but was not sent']);
    expect(problemsOf(withHeaders(read, { ...ok, 'Idempotent-Replayed': 'true' }))).toEqual([
      'header Idempotent-Replayed is sent but not declared for status 200',
    ]);
    expect(problemsOf(withHeaders(read, { 'X-Request-Id': 'request-1' })).join('\n')).toMatch(/header X-Request-Id: /);
    expect(problemsOf(withHeaders(created, { ...ok, 'Idempotent-Replayed': 'yes' })).join('\n')).toMatch(
      /header Idempotent-Replayed: /,
    );
    const unavailable = res('POST', '/v1/payments', 503, envelope('processor_unavailable', 'processor', true));
    expect(problemsOf(withHeaders(unavailable, { ...ok, 'Retry-After': '5' }))).toEqual([]);
    expect(problemsOf(withHeaders(unavailable, ok))).toEqual([
      'header Retry-After is declared required but was not sent',
    ]);
    expect(problemsOf(withHeaders(unavailable, { ...ok, 'Retry-After': 'soon' })).join('\n')).toMatch(
      /header Retry-After: /,
    );
  });

  it('checks a webhook against the `webhooks` entry of its type: its headers and its body', () => {
    const signed = { 'webhook-id': 'evt_1', 'webhook-timestamp': '1795256130', 'webhook-signature': 'v1,abc=' };
    const event = (type: string, body: Record<string, unknown> = {}) =>
      JSON.stringify({ id: 'evt_1', type, created_at: ISO, data: { payment: payment() }, ...body });
    expect(served.checkWebhook({ headers: signed, body: event('payment.approved') }).problems).toEqual([]);
    const ping = { id: 'evt_2', type: 'ping', created_at: ISO, data: { webhook_endpoint: { id: 'we_1' } } };
    expect(served.checkWebhook({ headers: signed, body: JSON.stringify(ping) }).problems).toEqual([]);
    expect(served.checkWebhook({ headers: signed, body: event('payment.teleported') }).problems).toEqual([
      'webhook type payment.teleported is not described in webhooks',
    ]);
    const { 'webhook-signature': _dropped, ...unsigned } = signed;
    expect(served.checkWebhook({ headers: unsigned, body: event('payment.approved') }).problems).toEqual([
      'header webhook-signature is required but was not sent',
    ]);
    expect(
      served.checkWebhook({ headers: signed, body: event('payment.approved', { data: { payment: { id: 1 } } }) })
        .problems,
    ).not.toEqual([]);
    expect(served.checkWebhook({ headers: signed, body: event('payment.approved', { debug: true }) }).problems).toEqual(
      ['/debug: not declared by the schema'],
    );
  });

  it('uses `default` for a status the operation does not list, and refuses a non-OpenAPI document', () => {
    const doc = {
      openapi: '3.1.0',
      paths: {
        '/things/{id}': {
          get: {
            responses: {
              200: {
                description: 'ok',
                content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } },
              },
              default: {
                description: 'error',
                content: { 'application/json': { schema: { type: 'object', required: ['error'] } } },
              },
            },
          },
        },
      },
      components: {
        schemas: {
          Thing: {
            type: 'object',
            properties: { n: { type: 'integer', example: { id: 'same' } } },
            required: ['n'],
            example: { id: 'same' },
          },
        },
      },
    };
    const checker = createConformance(doc);
    expect(checker.check(res('GET', '/things/1', 200, { n: 1 })).problems).toEqual([]);
    expect(checker.check(res('GET', '/things/1', 200, { n: '1' })).problems).not.toEqual([]);
    expect(checker.check(res('GET', '/things/1', 503, { error: 'x' })).problems).toEqual([]);
    expect(checker.check(res('GET', '/things/1', 503, { nope: 1 })).problems).not.toEqual([]);
    expect(() => createConformance({ paths: {} })).toThrow();
  });
});
