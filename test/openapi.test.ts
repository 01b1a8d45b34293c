import { beforeAll, describe, expect, it } from 'vitest';
import { PAYMENT_EVENT_TYPES } from '../src/domain/payment-state.ts';
import { HTTP_STATUS } from '../src/http/errors.ts';
import { ERROR_CODES, type ErrorCode } from '../src/lib/errors.ts';
import { call, type ApiResponse } from './helpers/api.ts';

/** The served contract (/openapi.json) and its explorer (/docs). */

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;

interface Operation {
  method: string;
  path: string;
  operationId?: string;
  security?: Array<Record<string, string[]>>;
  responses: Record<
    string,
    {
      description?: string;
      content?: Record<string, { schema?: { $ref?: string }; examples?: Record<string, { value: any }> }>;
    }
  >;
}

const REQUIRED_OPERATION_IDS = [
  'login',
  'refreshSession',
  'logout',
  'getCurrentUser',
  'createUser',
  'listUsers',
  'getUser',
  'updateUser',
  'createApiKey',
  'listApiKeys',
  'revokeApiKey',
  'listPayments',
  'listRefunds',
  'getRefund',
  'listEvents',
  'createWebhookEndpoint',
  'listWebhookEndpoints',
  'getWebhookEndpoint',
  'updateWebhookEndpoint',
  'deleteWebhookEndpoint',
  'rotateWebhookEndpointSecret',
  'testWebhookEndpoint',
];

/**
 * The success status of each kind of operation, as [method, path pattern, status]: logins and creations
 * 201, deletions and logout 204, actions on a resource 200, reads 200. The first match decides. Operations matching none (actions the table does not list) are not checked here.
 */
const SUCCESS_STATUS_RULES: Array<[string, RegExp, number]> = [
  ['post', /^\/v1\/auth\/(login|refresh)$/, 201],
  ['post', /^\/v1\/auth\/logout$/, 204],
  ['delete', /^\/v1\/account\/payment-methods\/\{[^}]+\}$/, 204],
  ['post', /\/(cancel|disable|revoke)$/, 200],
  ['post', /^\/v1\/payments$/, 201],
  ['post', /^\/v1\/payments\/\{[^}]+\}\/refunds$/, 201],
  ['post', /^\/v1\/users$/, 201],
  ['post', /^\/v1\/account\/payment-methods$/, 201],
  ['post', /^\/v1\/account\/api-keys$/, 201],
  ['post', /^\/v1\/account\/payment-methods\/\{[^}]+\}\/api-keys$/, 201],
  ['post', /^\/v1\/account\/webhook-endpoints$/, 201],
  ['delete', /^\/v1\/account\/webhook-endpoints\/\{[^}]+\}$/, 204],
  ['post', /^\/v1\/account\/webhook-endpoints\/\{[^}]+\}\/(rotate-secret|test)$/, 200],
  ['get', /./, 200],
  ['patch', /./, 200],
];

const expectedSuccessStatus = (op: Operation) =>
  SUCCESS_STATUS_RULES.find(([method, pattern]) => method === op.method && pattern.test(op.path))?.[2];

let specResponse: ApiResponse;
let spec: any;
let operations: Operation[];

beforeAll(async () => {
  specResponse = await call('GET', '/openapi.json');
  spec = specResponse.body;
  operations = [];
  for (const [path, item] of Object.entries<Record<string, Operation>>(spec?.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (op) operations.push({ ...op, method, path });
    }
  }
});

const label = (op: Operation) => `${op.method.toUpperCase()} ${op.path} (${op.operationId ?? 'no operationId'})`;
const isProtected = (op: Operation) =>
  Array.isArray(op.security) && op.security.length > 0 && op.security.every((req) => Object.keys(req).length > 0);

describe('/openapi.json', () => {
  it('is OpenAPI 3.1.0 JSON describing this deployment', () => {
    expect(specResponse.status).toBe(200);
    expect(specResponse.headers.get('content-type')).toMatch(/^application\/json/);
    expect(spec.openapi).toBe('3.1.0');
    expect(spec.info).toMatchObject({ title: expect.any(String), version: expect.any(String) });
    expect(spec.servers?.[0]?.url).toBe('http://localhost');
    expect(operations.length).toBeGreaterThanOrEqual(REQUIRED_OPERATION_IDS.length);
  });

  it('declares the bearer security scheme bearerAuth', () => {
    expect(spec.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    for (const op of operations) {
      for (const requirement of op.security ?? []) {
        for (const scheme of Object.keys(requirement))
          expect(spec.components.securitySchemes, label(op)).toHaveProperty(scheme);
      }
    }
  });

  it('gives every operation a unique operationId, including those of the interface', () => {
    const ids = operations.map((op) => op.operationId);
    for (const op of operations) expect(op.operationId, label(op)).toMatch(/^[a-z][A-Za-z0-9]+$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(expect.arrayContaining(REQUIRED_OPERATION_IDS));
  });

  it('declares 400 and 500 on every operation, with the error envelope, its codes as an enum and an example per code', () => {
    // Not `Error`: generated clients would shadow the language's own `Error` type with it.
    expect(spec.components.schemas.Error).toBeUndefined();
    expect(spec.components.schemas.ErrorResponse.properties.error.properties.code).toMatchObject({ type: 'string' });
    for (const op of operations) {
      expect(Object.keys(op.responses), label(op)).toEqual(expect.arrayContaining(['400', '500']));
      for (const [status, response] of Object.entries(op.responses)) {
        if (Number(status) < 400) continue;
        const json = response.content?.['application/json'];
        const [envelope, narrowed, ...more] = (json?.schema as { allOf?: any[] })?.allOf ?? [];
        expect(envelope, `${label(op)} ${status}`).toEqual({ $ref: '#/components/schemas/ErrorResponse' });
        expect(more, `${label(op)} ${status}`).toEqual([]);
        // The enum is exactly the codes the examples show, and generators keep `error` and `code` required.
        expect(narrowed, `${label(op)} ${status}`).toEqual({
          type: 'object',
          required: ['error'],
          properties: {
            error: {
              type: 'object',
              required: ['code'],
              properties: { code: { type: 'string', enum: Object.keys(json?.examples ?? {}) } },
            },
          },
        });
        const examples = Object.values(json?.examples ?? {});
        expect(examples.length, `${label(op)} ${status} examples`).toBeGreaterThan(0);
        for (const { value } of examples) {
          const code = value?.error?.code as ErrorCode;
          expect(ERROR_CODES, `${label(op)} ${status}: unknown code ${code}`).toHaveProperty(code);
          // The example's code really answers with this status.
          const spec = ERROR_CODES[code];
          const allowedStatuses = code === 'invalid_request' ? [400, 413, 415] : [HTTP_STATUS[code]];
          expect(allowedStatuses, `${label(op)} ${status} ${code}`).toContain(Number(status));
          expect(value.error).toMatchObject({
            category: spec.category,
            retryable: spec.retryable,
            request_id: expect.stringMatching(/^req_/),
          });
          expect(Object.keys(value.error).sort()).toEqual([
            'category',
            'code',
            'details',
            'message',
            'request_id',
            'retryable',
          ]);
        }
      }
      const codes400 = Object.keys(op.responses['400']?.content?.['application/json']?.examples ?? {});
      expect(codes400, label(op)).toContain('invalid_request');
      const codes500 = Object.keys(op.responses['500']?.content?.['application/json']?.examples ?? {});
      expect(codes500, label(op)).toContain('internal_error');
    }
  });

  it('declares 401 on every protected operation', () => {
    const protectedOps = operations.filter(isProtected);
    expect(protectedOps.map((op) => op.operationId)).toEqual(
      expect.arrayContaining([
        'getCurrentUser',
        'createUser',
        'listUsers',
        'getUser',
        'updateUser',
        'createApiKey',
        'listApiKeys',
        'revokeApiKey',
      ]),
    );
    for (const op of protectedOps) {
      expect(op.responses, label(op)).toHaveProperty('401');
      expect(Object.keys(op.responses['401']!.content?.['application/json']?.examples ?? {}), label(op)).toContain(
        'unauthorized',
      );
    }
  });

  it('login and refresh need no credential', () => {
    for (const id of ['login', 'refreshSession']) {
      const op = operations.find((o) => o.operationId === id)!;
      expect(op.security ?? [], id).toEqual([]);
    }
  });

  it('uses the success status of its kind for each operation', () => {
    const expected: Record<string, number> = {
      login: 201,
      refreshSession: 201,
      logout: 204,
      getCurrentUser: 200,
      createUser: 201,
      listUsers: 200,
      getUser: 200,
      updateUser: 200,
      createApiKey: 201,
      listApiKeys: 200,
      revokeApiKey: 200,
    };
    // A cancel the processor completes later is 202 besides the 200 of a payment canceled (docs/states.md), and an
    // owner move that starts (or is running) is 202 besides the 200 of nothing to move (docs/SCALE.md).
    const accepted: Record<string, number> = { cancelPayment: 202, placeOwner: 202 };
    for (const op of operations) {
      const successes = Object.keys(op.responses)
        .filter((status) => /^2\d\d$/.test(status))
        .map(Number)
        .filter((status) => status !== accepted[op.operationId!]);
      expect(successes, label(op)).toHaveLength(1);
      const want = expected[op.operationId!] ?? expectedSuccessStatus(op);
      if (expected[op.operationId!] !== undefined)
        expect(expectedSuccessStatus(op), label(op)).toBe(expected[op.operationId!]);
      if (want === undefined) continue;
      expect(successes[0], label(op)).toBe(want);
      const success = op.responses[String(want)]!;
      if (want === 204) expect(success.content, `${label(op)}: 204 has no body`).toBeUndefined();
      else expect(success.content?.['application/json']?.schema, label(op)).toBeDefined();
    }
  });

  it('describes JSON request bodies as application/json', () => {
    for (const op of operations) {
      const body = (op as { requestBody?: { content?: Record<string, unknown> } }).requestBody;
      if (body) expect(Object.keys(body.content ?? {}), label(op)).toEqual(['application/json']);
    }
  });
});

/** A schema or a `$ref` to one, resolved within the served description. */
const resolve = (node: any): any =>
  typeof node?.$ref === 'string'
    ? resolve(
        node.$ref
          .slice(2)
          .split('/')
          .reduce((at: any, part: string) => at?.[part], spec),
      )
    : node;

const headersOf = (op: Operation, status: string) =>
  Object.keys((op.responses[status] as { headers?: Record<string, unknown> } | undefined)?.headers ?? {});
const isIdempotent = (op: Operation) =>
  ((op as { parameters?: any[] }).parameters ?? []).some((p) => p.in === 'header' && p.name === 'idempotency-key');
const isRead = (op: Operation) => op.method === 'get' && op.path.startsWith('/v1/');

describe('/openapi.json declares the headers the service sends', () => {
  it('X-Request-Id, required, on every response of every operation', () => {
    expect(spec.components.headers.RequestId).toMatchObject({ required: true, schema: { pattern: '^req_[0-9a-z]+$' } });
    for (const op of operations) {
      for (const status of Object.keys(op.responses)) {
        const headers = (op.responses[status] as { headers?: Record<string, any> }).headers ?? {};
        expect(headers['X-Request-Id'], `${label(op)} ${status}`).toEqual({ $ref: '#/components/headers/RequestId' });
      }
    }
  });

  it('Idempotent-Replayed on the idempotent operations (and nowhere else), X-Read-Bookmark on them and on every read', () => {
    const idempotent = operations.filter(isIdempotent).map((op) => op.operationId);
    expect(idempotent.sort()).toEqual(['cancelPayment', 'createPayment', 'createRefund']);
    for (const op of operations) {
      for (const status of Object.keys(op.responses)) {
        const headers = headersOf(op, status);
        expect(headers.includes('Idempotent-Replayed'), `${label(op)} ${status}`).toBe(isIdempotent(op));
        expect(headers.includes('X-Read-Bookmark'), `${label(op)} ${status}`).toBe(isIdempotent(op) || isRead(op));
      }
    }
  });

  it('Retry-After, required and in seconds, on every 429 and 503', () => {
    expect(spec.components.headers.RetryAfter).toMatchObject({ required: true, schema: { type: 'integer' } });
    const statuses = operations.flatMap((op) => Object.keys(op.responses).map((status) => ({ op, status })));
    expect(statuses.filter(({ status }) => status === '429' || status === '503').length).toBeGreaterThan(0);
    for (const { op, status } of statuses)
      expect(headersOf(op, status).includes('Retry-After'), `${label(op)} ${status}`).toBe(
        status === '429' || status === '503',
      );
  });

  it('ETag, required, on /openapi.json, which is an operation of its own with its 304', () => {
    const op = operations.find((o) => o.operationId === 'getOpenApiDescription')!;
    expect(op).toMatchObject({ method: 'get', path: '/openapi.json', security: [] });
    for (const status of ['200', '304'])
      expect(resolve((op.responses[status] as any).headers.ETag).required).toBe(true);
    expect(op.responses['304']!.content).toBeUndefined();
    expect(operations.filter((o) => headersOf(o, '200').includes('ETag'))).toEqual([op]);
  });

  it('X-Read-Bookmark as an optional header parameter on every read under /v1, and only there', () => {
    const parameter = spec.components.parameters.ReadBookmark;
    expect(parameter).toMatchObject({ name: 'x-read-bookmark', in: 'header', required: false });
    expect(parameter.schema).toMatchObject({ type: 'string', maxLength: 256 });
    for (const op of operations) {
      const refs = ((op as { parameters?: any[] }).parameters ?? []).filter(
        (p) => p.$ref === '#/components/parameters/ReadBookmark',
      );
      expect(refs.length, label(op)).toBe(isRead(op) ? 1 : 0);
    }
  });
});

describe('/openapi.json describes every webhook the service sends', () => {
  it('one `webhooks` entry per event type and the ping, each a POST of its own body with the Standard Webhooks headers', () => {
    expect(Object.keys(spec.webhooks).sort()).toEqual([...PAYMENT_EVENT_TYPES, 'ping'].sort());
    const ids = new Set<string>();
    for (const [type, item] of Object.entries<any>(spec.webhooks)) {
      expect(Object.keys(item), type).toEqual(['post']);
      const post = item.post;
      ids.add(post.operationId);
      expect(post.description, type).toEqual(expect.any(String));
      const headers = post.parameters.map((p: any) => [p.name, p.in, p.required]);
      expect(headers, type).toEqual([
        ['webhook-id', 'header', true],
        ['webhook-timestamp', 'header', true],
        ['webhook-signature', 'header', true],
      ]);
      expect(post.requestBody.required, type).toBe(true);
      const body = resolve(post.requestBody.content['application/json'].schema);
      // `type` fixed and required, so a generated union over the webhooks is discriminated by it.
      expect(body.properties.type.enum, type).toEqual([type]);
      expect(body.required, type).toEqual(expect.arrayContaining(['id', 'type', 'created_at', 'data']));
      expect(
        Object.keys(post.responses).every((status) => /^2/.test(status)),
        type,
      ).toBe(true);
    }
    expect(ids.size).toBe(Object.keys(spec.webhooks).length);
  });

  it('an event’s body is the payment as GET /v1/payments/{payment_id} shows it, the same as listEvents lists', () => {
    for (const type of PAYMENT_EVENT_TYPES) {
      const body = spec.webhooks[type].post.requestBody.content['application/json'].schema;
      expect(body.properties.data.properties.payment, type).toEqual({ $ref: '#/components/schemas/Payment' });
      const listed = spec.components.schemas.WebhookEvent;
      expect(Object.keys(body.properties).sort(), type).toEqual(Object.keys(listed.properties).sort());
    }
  });
});

describe('/openapi.json as generators read it', () => {
  /** Every schema node of the description, with where it is (examples are values, not walked). */
  function* schemaNodes(node: any, at: string, underExample = false): Generator<[any, string, boolean]> {
    if (Array.isArray(node)) {
      for (const [i, item] of node.entries()) yield* schemaNodes(item, `${at}/${i}`, underExample);
      return;
    }
    if (!node || typeof node !== 'object') return;
    const exemplified = underExample || node.example !== undefined;
    yield [node, at, exemplified];
    for (const [key, value] of Object.entries(node))
      if (key !== 'example' && key !== 'examples') yield* schemaNodes(value, `${at}/${key}`, exemplified);
  }
  const everySchema = () => [...schemaNodes({ c: spec.components, p: spec.paths, w: spec.webhooks }, '')];

  it('uses $ref with a sibling description, never allOf of a $ref and annotations (generators made `Amount & unknown`)', () => {
    for (const [node, at] of everySchema()) {
      if (!Array.isArray(node.allOf)) continue;
      const annotationOnly = node.allOf.filter(
        (part: any) => part && !part.$ref && Object.keys(part).every((k) => ['description', 'example'].includes(k)),
      );
      expect(annotationOnly, at).toEqual([]);
    }
    expect(spec.components.schemas.CreateRefundRequest.properties.amount).toEqual({
      $ref: '#/components/schemas/Amount',
      description: expect.any(String),
    });
    expect(spec.components.schemas.CreateUserRequest.properties.role.$ref).toBe('#/components/schemas/Role');
  });

  it('never lets a parameter be null: `offset` is an integer', () => {
    for (const op of operations) {
      for (const parameter of (op as { parameters?: any[] }).parameters ?? []) {
        const type = resolve(parameter).schema?.type;
        expect(Array.isArray(type) ? type : [type], `${label(op)} ${parameter.name}`).not.toContain('null');
      }
    }
    const offset = (operations.find((o) => o.operationId === 'listPayments') as any).parameters.find(
      (p: any) => p.name === 'offset',
    );
    expect(offset.schema).toMatchObject({ type: 'integer', minimum: 0, example: 0 });
  });

  it('gives every integer and every open record an example, so /docs shows no 2147483647 or additionalProp1', () => {
    const missing: string[] = [];
    for (const [node, at, exemplified] of everySchema()) {
      if (exemplified || node.enum || node.const !== undefined) continue;
      const types = Array.isArray(node.type) ? node.type : [node.type];
      const record = types.includes('object') && node.additionalProperties && !node.properties;
      // A number inside a union of JSON values (metadata) is one of its alternatives, shown by the record's example.
      const alternative = /\/anyOf\/\d+$/.test(at);
      if ((types.includes('integer') || types.includes('number')) && !alternative) missing.push(at);
      if (record) missing.push(at);
    }
    expect(missing).toEqual([]);
  });

  it('describes every path parameter', () => {
    for (const op of operations) {
      for (const parameter of ((op as { parameters?: any[] }).parameters ?? []).map(resolve)) {
        if (parameter.in === 'path') expect(parameter.description, `${label(op)} ${parameter.name}`).toMatch(/\S/);
      }
    }
  });

  it('declares the body of receiveProcessorNotification: the processor’s own JSON object, optional', () => {
    const op = operations.find((o) => o.operationId === 'receiveProcessorNotification') as any;
    expect(op.requestBody.required).toBe(false);
    const schema = resolve(op.requestBody.content['application/json'].schema);
    expect(schema).toMatchObject({
      type: 'object',
      additionalProperties: {},
      description: expect.stringMatching(/processor/),
    });
  });

  it('declares `expires_at` on the payment’s action, the moment a QR stops being payable', () => {
    const action = spec.components.schemas.PaymentAction;
    expect(action.properties.expires_at).toMatchObject({ type: ['string', 'null'], format: 'date-time' });
    expect(action.required ?? []).not.toContain('expires_at');
  });
});

describe('/openapi.json as a client keeps it', () => {
  const sha256Hex = async (text: string) =>
    Array.from(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))), (b) =>
      b.toString(16).padStart(2, '0'),
    ).join('');

  it('carries a strong ETag, the SHA-256 of its exact bytes, stable across requests, and asks for revalidation', async () => {
    const etag = specResponse.headers.get('etag');
    expect(etag).toMatch(/^"[0-9a-f]{64}"$/);
    expect(etag).toBe(`"${await sha256Hex(specResponse.text)}"`);
    expect(specResponse.headers.get('cache-control')).toBe('no-cache');
    const again = await call('GET', '/openapi.json');
    expect(again.headers.get('etag')).toBe(etag);
    expect(again.text).toBe(specResponse.text);
  });

  it('answers 304 without a body to a matching If-None-Match, and the description to any other', async () => {
    const etag = specResponse.headers.get('etag')!;
    for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const res = await call('GET', '/openapi.json', { headers: { 'If-None-Match': ifNoneMatch } });
      expect(res.status, ifNoneMatch).toBe(304);
      expect(res.text).toBe('');
      expect(res.headers.get('etag')).toBe(etag);
      expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    }
    const stale = await call('GET', '/openapi.json', { headers: { 'If-None-Match': `"${'0'.repeat(64)}"` } });
    expect(stale.status).toBe(200);
    expect(stale.text).toBe(specResponse.text);
  });

  it('names its version, which CHANGELOG.md lists first', () => {
    expect(spec.info.version).toMatch(/^\d+\.\d+\.\d+$/);
  });
});

describe('/docs', () => {
  let docs: ApiResponse;
  beforeAll(async () => {
    docs = await call('GET', '/docs');
  });

  it('serves the explorer as HTML', () => {
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-type')).toMatch(/^text\/html/);
    expect(docs.text).toContain('id="swagger-ui"');
  });

  it('sends a strict Content-Security-Policy', () => {
    const csp = docs.headers.get('content-security-policy') ?? '';
    const directives = new Map(
      csp
        .split(';')
        .map((d) => d.trim().split(/\s+/))
        .filter((parts) => parts[0])
        .map(([name, ...sources]) => [name!.toLowerCase(), sources]),
    );
    expect(directives.get('default-src')).toEqual(["'none'"]);
    expect(directives.get('script-src')).toEqual(["'self'"]);
    expect(directives.get('object-src') ?? directives.get('default-src')).toEqual(["'none'"]);
    expect(csp).not.toContain("'unsafe-inline'");
    expect(csp).not.toContain("'unsafe-eval'");
    expect(csp).not.toMatch(/https?:|\*/);
    expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
    expect(docs.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('has no inline script and no URL to another host', () => {
    const scripts = [...docs.text.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script\s*>/gi)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [tag, attributes, content] of scripts) {
      expect(attributes, tag).toMatch(/\bsrc\s*=/i);
      expect(content!.trim(), tag).toBe('');
    }
    expect(docs.text).not.toMatch(/\bon[a-z]+\s*=/i); // no inline event handlers
    expect(docs.text).not.toMatch(/<style\b/i);
    for (const [url] of docs.text.matchAll(/(?:https?:)?\/\/[^\s"'<>)]+/gi)) {
      expect(new URL(url, 'http://localhost').host, url).toBe('localhost');
    }
  });

  it('loads only assets that the Worker itself serves', async () => {
    const refs = [...docs.text.matchAll(/\b(?:src|href)\s*=\s*"([^"]+)"/gi)].map((m) => m[1]!);
    expect(refs.some((r) => r.endsWith('.js'))).toBe(true);
    expect(refs.some((r) => r.endsWith('.css'))).toBe(true);
    for (const ref of refs) {
      expect(ref, ref).toMatch(/^\/docs\/assets\//);
      const res = await call('GET', ref);
      expect(res.status, ref).toBe(200);
      expect(res.headers.get('content-type'), ref).toMatch(ref.endsWith('.css') ? /^text\/css/ : /javascript/);
      expect(res.text.length, ref).toBeGreaterThan(0);
    }
  });

  it('points the explorer at this deployment’s /openapi.json', async () => {
    const init = await call('GET', '/docs/assets/init.js');
    expect(init.status).toBe(200);
    expect(init.text).toContain("url: '/openapi.json'");
    expect(init.text).not.toMatch(/https?:\/\//);
  });
});
