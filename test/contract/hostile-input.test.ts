import { env } from 'cloudflare:workers';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES, type ErrorCode } from '../../src/lib/errors.ts';
import { call, createKey, seedSession, type ApiResponse, type Session } from '../helpers/api.ts';
import { servedConformance, type DescribedOperation } from '../helpers/conformance.ts';
import { createMethod, link, POS } from '../helpers/methods.ts';

/**
 * Hostile input at scale: for every operation of the served /openapi.json, invalid bodies, path
 * parameters, query parameters and headers generated from the operation's own declared schemas, each
 * sent with a valid credential (admin JWT on management routes, an all-scope API key on business
 * routes) so that validation is what answers. Every answer must be a 4xx of the expected kind in the
 * error envelope (never a 5xx, never a success), and no table may gain or lose a row.
 *
 * Bodies are mutated from a valid base body per operation and kept only when the described schema
 * itself says they are invalid (checked with the same JSON Schema validator as response conformance),
 * so a refusal is what the description promises.
 */

const conformance = await servedConformance();
const doc = conformance.document;
// `/openapi.json` reads no input to refuse: its one parameter, If-None-Match, is compared, never parsed.
const operations = conformance.operations.filter((op) => op.operationId !== 'getOpenApiDescription');

const SEED = 0x5eed;
/** Requests per operation, spread over the case kinds that apply to it. */
const RUNS_PER_OPERATION = 30;
const MAX_BODY_BYTES = 64 * 1024;

// ---------------------------------------------------------------------------------------------------
// The merchant the requests act for, and valid base inputs.

let admin: Session;
let apiKey: { id: string; secret: string };
let ids: Record<string, string>;
let tables: { database: string; name: string }[];
/** The control database and both shards: a hostile request must leave every one of them as it was. */
const DATABASES = { DB: env.DB, SHARD_0: env.SHARD_0, SHARD_1: env.SHARD_1 };

/** A valid body per operation with a JSON body; every hostile body is a mutation of it. */
function baseBody(operationId: string): Record<string, unknown> {
  const bodies: Record<string, Record<string, unknown>> = {
    login: { email: 'hostile-nobody@example.com', password: 'hostile-password-0001' },
    refreshSession: { refresh_token: 'rt_hostile_not_a_real_token' },
    logout: {},
    createUser: { email: 'hostile-new-user@example.com', name: 'Hostile', password: 'hostile-password-0002' },
    updateUser: { name: 'Hostile renamed' },
    createApiKey: { name: 'hostile key', scopes: ['payments:read'] },
    createAccountPaymentMethod: {
      connector_definition_version_id: POS,
      name: 'Hostile method',
      credentials: { api_key: 'sbx-hostile-credential-0001' },
    },
    updateAccountPaymentMethod: { name: 'Hostile renamed' },
    enablePaymentMethodForApiKey: { api_key_id: ids.api_key_id! },
    createPayment: {
      amount: { value: '10.00', currency: 'USD' },
      external_reference: 'hostile-order',
      payment_method: ids.payment_method_id!,
    },
    createRefund: { amount: { value: '1.00', currency: 'USD' } },
    simulateRefundFailure: { reason: 'lost_or_stolen_card' },
    simulateDispute: { amount: { value: '1.00', currency: 'USD' }, reason: 'fraudulent' },
    simulateDisputeClose: { outcome: 'won' },
    simulateTerminalStatus: { status: 'online' },
    placeOwner: { shard: 'SHARD_0' },
    createWebhookEndpoint: { url: 'https://hooks.example.com/hostile', enabled_events: ['payment.approved'] },
    updateWebhookEndpoint: { description: 'Hostile renamed' },
    // Each processor's own format: any object passes the description, the connector judges it.
    receiveProcessorNotification: {},
  };
  const body = bodies[operationId];
  if (!body) throw new Error(`no base body for ${operationId}: add one to hostile-input.test.ts`);
  return structuredClone(body);
}

/** Business routes take the API key; management routes the admin's access token; public ones nothing. */
function credentialFor(op: DescribedOperation): string | undefined {
  if (!op.security || op.security.length === 0) return undefined;
  return /^\/v1\/(payments|payment-methods|disputes|test-helpers)(\/|$)/.test(op.path)
    ? apiKey.secret
    : admin.accessToken;
}

const requiresBearer = (op: DescribedOperation) =>
  Array.isArray(op.security) && op.security.length > 0 && op.security.every((req) => Object.keys(req).length > 0);
/** The body schema where it names fields to break; a processor's notification is any object, so none. */
const bodySchemaOf = (op: DescribedOperation) => {
  const schema = op.requestBody?.content?.['application/json']?.schema;
  return schema && resolve(schema).properties ? schema : undefined;
};
const pathParams = (op: DescribedOperation) => (op.parameters ?? []).filter((p) => p.in === 'path');
const queryParams = (op: DescribedOperation) => (op.parameters ?? []).filter((p) => p.in === 'query');
/** A free-form query (`style: form`, `explode: true`, an object): the sender may add any parameter. */
const takesAnyQuery = (op: DescribedOperation) =>
  queryParams(op).some((p) => p.style === 'form' && p.explode === true && resolve(p.schema ?? {}).type === 'object');
const takesIdempotencyKey = (op: DescribedOperation) =>
  (op.parameters ?? []).some((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key');
const acceptsBody = (op: DescribedOperation) => op.method !== 'get' && op.method !== 'head';

// ---------------------------------------------------------------------------------------------------
// Schemas of the description: refs and allOf resolved enough to walk a body's fields.

interface Walked {
  type?: string | string[];
  properties?: Record<string, unknown>;
  required?: string[];
  additionalProperties?: unknown;
  maxLength?: number;
  minLength?: number;
  minimum?: number;
  maximum?: number;
  enum?: unknown[];
}

function resolve(schema: any): Walked {
  let current = schema;
  for (let hops = 0; current && typeof current === 'object' && typeof current.$ref === 'string'; hops++) {
    if (hops > 20 || !current.$ref.startsWith('#/')) throw new Error(`unresolvable $ref ${current.$ref}`);
    current = current.$ref
      .slice(2)
      .split('/')
      .reduce((node: any, part: string) => node?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
  }
  if (!current || typeof current !== 'object') return {};
  if (!Array.isArray(current.allOf)) return current;
  const parts = current.allOf.map(resolve);
  const merged: any = { ...current };
  delete merged.allOf;
  for (const part of parts) {
    Object.assign(merged, {
      ...part,
      properties: { ...merged.properties, ...part.properties },
      required: [...(merged.required ?? []), ...(part.required ?? [])],
    });
  }
  return merged;
}

type FieldPath = string[];

/** Every field of the base body the schema describes, nested objects included (depth 3). */
function fieldsOf(schema: unknown, value: unknown, prefix: FieldPath = []): Array<{ path: FieldPath; schema: Walked }> {
  const walked = resolve(schema);
  if (prefix.length >= 3 || !walked.properties || !value || typeof value !== 'object') return [];
  const out: Array<{ path: FieldPath; schema: Walked }> = [];
  for (const [name, sub] of Object.entries(walked.properties)) {
    const path = [...prefix, name];
    out.push({ path, schema: resolve(sub) });
    out.push(...fieldsOf(sub, (value as Record<string, unknown>)[name], path));
  }
  return out;
}

/** Objects of the base body (the body itself first) that the schema closes to unknown fields. */
function objectsOf(schema: unknown, value: unknown, prefix: FieldPath = []): FieldPath[] {
  const walked = resolve(schema);
  if (!value || typeof value !== 'object' || Array.isArray(value)) return [];
  const out: FieldPath[] = [prefix];
  for (const [name, sub] of Object.entries(walked.properties ?? {})) {
    if (name in (value as object))
      out.push(...objectsOf(sub, (value as Record<string, unknown>)[name], [...prefix, name]));
  }
  return out;
}

function requiredOf(schema: unknown, value: unknown, prefix: FieldPath = []): FieldPath[] {
  const walked = resolve(schema);
  if (!value || typeof value !== 'object') return [];
  const out: FieldPath[] = (walked.required ?? []).map((name) => [...prefix, name]);
  for (const [name, sub] of Object.entries(walked.properties ?? {})) {
    if (name in (value as object))
      out.push(...requiredOf(sub, (value as Record<string, unknown>)[name], [...prefix, name]));
  }
  return out;
}

function withField(
  body: Record<string, unknown>,
  path: FieldPath,
  value: unknown,
  remove = false,
): Record<string, unknown> {
  const copy = structuredClone(body);
  let node: any = copy;
  for (const part of path.slice(0, -1)) {
    if (!node[part] || typeof node[part] !== 'object') node[part] = {};
    node = node[part];
  }
  const last = path[path.length - 1]!;
  if (remove) delete node[last];
  // defineProperty, so that a key such as `__proto__` is an own, serialized field and not the prototype.
  else Object.defineProperty(node, last, { value, enumerable: true, writable: true, configurable: true });
  return copy;
}

const invalidPer = (op: DescribedOperation, body: unknown) => conformance.validate(body, bodySchemaOf(op)).length > 0;

// ---------------------------------------------------------------------------------------------------
// The cases. Each produces one request and the statuses that may answer it.

interface HostileRequest {
  path: string;
  headers: Record<string, string>;
  token?: string;
  /** JSON-serialized by `call`. */
  body?: unknown;
  /** Sent as-is, with the given Content-Type. */
  rawBody?: BodyInit;
}

interface CaseKind {
  name: string;
  expected: number[];
  arbitrary: fc.Arbitrary<HostileRequest>;
}

const WRONG_VALUES: unknown[] = [0, -1, 1.5, 1e308, true, false, null, '', 'text', [], [1, 'a'], {}, { a: 1 }];
const SQL_LIKE = [
  "' OR '1'='1",
  '1; DROP TABLE payments; --',
  '" OR 1=1 --',
  "pay_1' UNION SELECT * FROM users --",
  "%' OR 1=1 --",
  '1) OR (1=1',
  "'; DELETE FROM api_keys; --",
  "\\' OR 1=1#",
  "x' AND sleep(5)--",
  '0 OR 1=1',
  "admin'--",
  '*',
  '%',
  '_',
];
const NOT_OBJECTS = ['[]', '[{}]', '"text"', '42', '-1.5e300', 'null', 'true', 'false', '[[[[]]]]'];
const MALFORMED = [
  '{',
  '}',
  '{"a":',
  "{'a': 1}",
  '{"a": 1,}',
  '{"a": NaN}',
  '{"a": undefined}',
  '{} {}',
  '{"a": 1} trailing',
  '// comment\n{}',
  '{"a": "\\x41"}',
  '{"a": 01}',
  'nul',
  '\u0000',
  '{"a" 1}',
];
const WRONG_CONTENT_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=hostile',
  'application/xml',
  'text/json',
  'application/json-patch+json',
  'application/jsonp',
  'application',
  'json',
];
const GARBAGE_AUTH_FIXED = [
  'Bearer',
  'Bearer ',
  'Basic dXNlcjpwYXNzd29yZA==',
  'bearer sk_test_',
  'Bearer sk_test_0000000000000000000000000000',
  'Bearer sk_live_0000000000000000000000000000',
  'Bearer eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiJ1c3JfMSIsInJvbGUiOiJhZG1pbiJ9.',
  'Bearer a.b.c',
  `Bearer ${'A'.repeat(5000)}`,
  'Token abc',
  "Bearer sk_test_' OR 1=1 --",
];

const encodeSegment = (value: string) => encodeURIComponent(value);

function pathWith(op: DescribedOperation, overrides: Record<string, string> = {}): string {
  return op.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = overrides[name] ?? ids[name];
    if (value === undefined)
      throw new Error(`no value for path parameter ${name} of ${op.path}: add one to hostile-input.test.ts`);
    return encodeSegment(value);
  });
}

/** The valid request the cases start from: real ids, the right credential, a fresh key, the base body. */
function baseRequest(op: DescribedOperation): HostileRequest {
  const headers: Record<string, string> = {};
  if (takesIdempotencyKey(op)) headers['Idempotency-Key'] = `hostile-${crypto.randomUUID()}`;
  const request: HostileRequest = { path: pathWith(op), headers, token: credentialFor(op) };
  if (bodySchemaOf(op)) request.body = baseBody(op.operationId!);
  return request;
}

const deep = (depth: number, container: 'object' | 'array') =>
  container === 'object'
    ? `${'{"d":'.repeat(depth)}1${'}'.repeat(depth)}`
    : `${'['.repeat(depth)}1${']'.repeat(depth)}`;

function caseKinds(op: DescribedOperation): CaseKind[] {
  const kinds: CaseKind[] = [];
  const schema = bodySchemaOf(op);
  const base = () => baseRequest(op);
  const raw = (text: BodyInit, contentType = 'application/json'): HostileRequest => {
    const request = base();
    delete request.body;
    return { ...request, rawBody: text, headers: { ...request.headers, 'Content-Type': contentType } };
  };

  if (schema) {
    const body = baseBody(op.operationId!);
    const fields = fieldsOf(schema, body);
    const objects = objectsOf(schema, body);
    const required = requiredOf(schema, body);
    const strings = fields.filter(
      (f) => f.schema.type === 'string' || (Array.isArray(f.schema.type) && f.schema.type.includes('string')),
    );
    // A body in the processor's own format (any object) has no field to break and no unknown key.
    const closed = resolve(schema).additionalProperties === false;

    if (fields.length > 0) {
      kinds.push({
        name: 'body: wrong type per field',
        expected: [400],
        arbitrary: fc
          .record({ field: fc.constantFrom(...fields), value: fc.constantFrom(...WRONG_VALUES) })
          .map(({ field, value }) => withField(body, field.path, value))
          .filter((candidate) => invalidPer(op, candidate))
          .map((candidate) => ({ ...base(), body: candidate })),
      });
    }
    if (required.length > 0) {
      kinds.push({
        name: 'body: missing required field',
        expected: [400],
        arbitrary: fc
          .constantFrom(...required)
          .map((path) => ({ ...base(), body: withField(body, path, undefined, true) })),
      });
    }
    if (closed) {
      kinds.push({
        name: 'body: unknown field',
        expected: [400],
        arbitrary: fc
          .record({
            at: fc.constantFrom(...objects),
            key: fc.oneof(
              fc.string({ minLength: 1, maxLength: 24 }),
              fc.constantFrom(
                '__proto__',
                'constructor',
                'prototype',
                '$where',
                'toString',
                '',
                ' ',
                'id',
                'user_id',
                'status',
                'role',
              ),
            ),
            value: fc.jsonValue({ maxDepth: 2 }),
          })
          .map(({ at, key, value }) => withField(body, [...at, key], value))
          .filter((candidate) => invalidPer(op, candidate))
          .map((candidate) => ({ ...base(), body: candidate })),
      });
    }
    if (strings.length > 0) {
      kinds.push({
        name: 'body: huge string',
        expected: [400, 413],
        arbitrary: fc
          .record({
            field: fc.constantFrom(...strings),
            extra: fc.oneof(fc.constant(1), fc.integer({ min: 2, max: 5000 }), fc.constant(MAX_BODY_BYTES + 1)),
          })
          .map(({ field, extra }) =>
            withField(body, field.path, 'h'.repeat((field.schema.maxLength ?? MAX_BODY_BYTES) + extra)),
          )
          .filter((candidate) => JSON.stringify(candidate).length > MAX_BODY_BYTES || invalidPer(op, candidate))
          .map((candidate) => ({ ...base(), body: candidate })),
      });
    }
    if (closed || fields.length > 0) {
      kinds.push({
        name: 'body: deeply nested',
        expected: [400, 413],
        arbitrary: fc
          .record({
            at: fc.oneof(fc.constantFrom(...fields.map((f) => f.path)), fc.constant<FieldPath>(['nested'])),
            depth: fc.integer({ min: 200, max: 3000 }),
            container: fc.constantFrom('object' as const, 'array' as const),
          })
          // The shallow twin decides validity; the deep one is spliced in as text (no recursion here).
          .filter(({ at, container }) => invalidPer(op, withField(body, at, JSON.parse(deep(3, container)))))
          .map(({ at, depth, container }) => {
            const marker = `__deep_${crypto.randomUUID()}__`;
            const text = JSON.stringify(withField(body, at, marker)).replace(
              JSON.stringify(marker),
              deep(depth, container),
            );
            return raw(text);
          }),
      });
    }
  }

  if (acceptsBody(op)) {
    const baseText = JSON.stringify(schema ? baseBody(op.operationId!) : {});
    kinds.push({
      name: 'body: not a JSON object',
      expected: [400],
      arbitrary: fc.constantFrom(...NOT_OBJECTS, `[${baseText}]`).map((text) => raw(text)),
    });
    kinds.push({
      name: 'body: malformed JSON',
      expected: [400],
      arbitrary: fc.oneof(
        fc.constantFrom(...MALFORMED).map((text) => raw(text)),
        fc
          .integer({ min: 1, max: Math.max(1, baseText.length - 1) })
          .map((cut) => baseText.slice(0, cut))
          .filter((text) => !parses(text))
          .map((text) => raw(text)),
        // Invalid UTF-8 inside an otherwise well-formed document.
        fc
          .constantFrom([0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80])
          .map((bytes) =>
            raw(new Uint8Array([...new TextEncoder().encode('{"a":"'), ...bytes, ...new TextEncoder().encode('"}')])),
          ),
      ),
    });
    // Bodies that would mean two things (lib/strict-json.ts): a key repeated in one object, or
    // `__proto__`, at any object of the body, refused by the gate on every operation.
    const objectPaths = schema ? objectsOf(schema, baseBody(op.operationId!)) : [[]];
    const injected = (at: FieldPath, members: (existing: Record<string, unknown>) => string) => {
      const body = schema ? baseBody(op.operationId!) : {};
      const marker = `__mark_${crypto.randomUUID()}__`;
      const target = at.reduce<any>((node, part) => node[part], body) as Record<string, unknown>;
      const text = JSON.stringify(withField(body, [...at, marker], 1));
      return raw(text.replace(`"${marker}":1`, members(target)));
    };
    kinds.push({
      name: 'body: repeated key',
      expected: [400],
      arbitrary: fc
        .record({ at: fc.constantFrom(...objectPaths), pick: fc.nat(), value: fc.jsonValue({ maxDepth: 1 }) })
        .map(({ at, pick, value }) =>
          injected(at, (existing) => {
            const keys = Object.keys(existing);
            const key = keys.length > 0 ? keys[pick % keys.length]! : 'k';
            // The repeat comes last, so that a last-key-wins reader would take it.
            return keys.length > 0
              ? JSON.stringify({ [key]: value }).slice(1, -1)
              : `"k":1,"k":${JSON.stringify(value)}`;
          }),
        ),
    });
    kinds.push({
      name: 'body: __proto__ key',
      expected: [400],
      arbitrary: fc
        .record({ at: fc.constantFrom(...objectPaths), value: fc.jsonValue({ maxDepth: 1 }), escaped: fc.boolean() })
        .map(({ at, value, escaped }) =>
          injected(at, () => `"${escaped ? '\\u005f_proto__' : '__proto__'}":${JSON.stringify(value)}`),
        ),
    });
    kinds.push({
      name: 'body: lone surrogate',
      expected: [400],
      arbitrary: fc
        .record({
          at: fc.constantFrom(...objectPaths),
          surrogate: fc.constantFrom('\\ud800', '\\udbff', '\\udc00', '\\udfff'),
          where: fc.constantFrom('value', 'key', 'in a list'),
        })
        .map(({ at, surrogate, where }) =>
          injected(at, () =>
            where === 'key'
              ? `"k${surrogate}":1`
              : where === 'value'
                ? `"k":"x${surrogate}y"`
                : `"k":["ok","${surrogate}"]`,
          ),
        ),
    });
    if (!op.requestBody) {
      // Refused rather than ignored: a cancel with an amount must not read as a full cancel.
      kinds.push({
        name: 'body: where none is declared',
        expected: [400],
        arbitrary: fc
          .oneof(
            fc.constantFrom<Record<string, unknown>>(
              { amount: { value: '1.00', currency: 'USD' }, reason: 'fraud' },
              { secret: 'whsec_chosen' },
              { user_id: 'usr_hostile' },
              { a: null },
            ),
            fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }), fc.jsonValue({ maxDepth: 1 }), { minKeys: 1 }),
          )
          .map((body) => ({ ...base(), body })),
      });
    }
    kinds.push({
      name: 'body: wrong content type',
      expected: [415],
      arbitrary: fc.constantFrom(...WRONG_CONTENT_TYPES).map((type) => raw(baseText, type)),
    });
    kinds.push({
      name: 'body: over 64 KiB',
      expected: [413],
      arbitrary: fc
        .record({
          size: fc.integer({ min: MAX_BODY_BYTES + 1, max: 4 * MAX_BODY_BYTES }),
          padding: fc.constantFrom('string', 'whitespace'),
        })
        .map(({ size, padding }) =>
          raw(padding === 'string' ? `{"pad":"${'p'.repeat(size)}"}` : `{}${' '.repeat(size)}`),
        ),
    });
  }

  const params = pathParams(op);
  if (params.length > 0) {
    const param = fc.constantFrom(...params);
    const withParam = (value: fc.Arbitrary<string>) =>
      fc
        .record({ param, value })
        .filter(
          ({ param: p, value: v }) => !(p.schema?.enum as unknown[] | undefined)?.includes(v) && v !== ids[p.name],
        )
        .map(({ param: p, value: v }) => ({ ...baseRequest(op), path: pathWith(op, { [p.name]: v }) }));
    kinds.push({
      name: 'path: random string',
      expected: [400, 404],
      arbitrary: withParam(fc.string({ minLength: 1, maxLength: 64 })),
    });
    kinds.push({
      name: 'path: SQL-looking',
      expected: [400, 404],
      arbitrary: withParam(
        fc
          .tuple(fc.constantFrom(...SQL_LIKE), fc.constantFrom('', 'pay_', 'usr_', 'key_'))
          .map(([sql, prefix]) => prefix + sql),
      ),
    });
    kinds.push({
      name: 'path: very long',
      expected: [400, 404],
      arbitrary: withParam(fc.integer({ min: 129, max: 8000 }).map((n) => 'L'.repeat(n))),
    });
    kinds.push({
      name: 'path: unicode',
      expected: [400, 404],
      arbitrary: withParam(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 })),
    });
  }

  const query = queryParams(op);
  if (query.length > 0) {
    const bad = query.flatMap((p) => {
      const s = resolve(p.schema ?? {});
      const types = [s.type ?? []].flat();
      const values: string[] = [];
      if (types.includes('integer') || types.includes('number')) {
        values.push('abc', 'NaN', '1e400', '--1', '');
        // Numbers in other spellings than decimal digits.
        if (types.includes('integer')) values.push('0x10', '1e1', ' 1', '1 ', '+1', '1.0', '1_0', '\u0661');
        if (types.includes('integer')) values.push(String((s.minimum ?? 0) + 0.5));
        if (s.minimum !== undefined) values.push(String(s.minimum - 1), String(s.minimum - 1000));
        if (s.maximum !== undefined) values.push(String(s.maximum + 1), String(s.maximum * 1000));
      }
      if (types.includes('string')) {
        if ((s.minLength ?? 0) > 0) values.push('');
        if (s.maxLength !== undefined) values.push('q'.repeat(s.maxLength + 1), 'q'.repeat(s.maxLength + 2000));
      }
      return values.map((value) => ({ name: p.name, value }));
    });
    if (bad.length > 0) {
      kinds.push({
        name: 'query: out of range',
        expected: [400],
        arbitrary: fc.constantFrom(...bad).map(({ name, value }) => {
          const request = baseRequest(op);
          return { ...request, path: `${request.path}?${new URLSearchParams({ [name]: value })}` };
        }),
      });
    }
  }

  if (!takesAnyQuery(op)) {
    const declared = new Set(query.map((p) => p.name));
    kinds.push({
      name: 'query: undeclared parameter',
      expected: [400],
      arbitrary: fc
        .record({
          name: fc.oneof(
            fc.constantFrom('user_id', 'limit', 'offset', 'status', 'expand', 'LIMIT', '__proto__', 'a[b]', 'data.id'),
            fc.string({ minLength: 1, maxLength: 24 }),
            fc.integer({ min: 201, max: 4000 }).map((n) => 'n'.repeat(n)),
          ),
          value: fc.oneof(fc.constant(''), fc.string({ maxLength: 12 })),
        })
        .filter(({ name }) => !declared.has(name))
        .map(({ name, value }) => {
          const request = baseRequest(op);
          return { ...request, path: `${request.path}?${new URLSearchParams({ [name]: value })}` };
        }),
    });
  }

  if (requiresBearer(op)) {
    kinds.push({
      name: 'header: garbage Authorization',
      expected: [401],
      arbitrary: fc
        .oneof(
          fc.constantFrom(...GARBAGE_AUTH_FIXED),
          fc.string({ minLength: 1, maxLength: 200 }).map((s) => `Bearer ${s}`),
          fc.string({ minLength: 1, maxLength: 60 }),
          // The real credential of this route, altered in one character.
          fc.nat().map((n) => {
            const real = credentialFor(op)!;
            // Not the last characters: a base64url signature's final character carries unused bits.
            const at = n % (real.length - 2);
            return `Bearer ${real.slice(0, at)}${real[at] === 'x' ? 'y' : 'x'}${real.slice(at + 1)}`;
          }),
        )
        // A header value may not hold CR, LF or NUL (the Request itself refuses those), nor be only spaces.
        .filter((value) => !/[\r\n\0]/.test(value))
        .map((authorization) => {
          const request = baseRequest(op);
          delete request.token;
          return { ...request, headers: { ...request.headers, Authorization: authorization } };
        }),
    });
  }

  if (takesIdempotencyKey(op)) {
    const control = fc.constantFrom(
      ...[...Array(32).keys()].filter((c) => c !== 0 && c !== 10 && c !== 13).map((c) => String.fromCharCode(c)),
      '\x7f',
    );
    const latin1 = fc.integer({ min: 0x80, max: 0xff }).map((c) => String.fromCharCode(c));
    kinds.push({
      name: 'header: bad Idempotency-Key',
      expected: [400],
      arbitrary: fc
        .oneof(
          fc.integer({ min: 256, max: 4000 }).map((n) => 'k'.repeat(n)),
          fc
            .tuple(
              fc.string({ minLength: 1, maxLength: 20 }),
              fc.oneof(control, latin1),
              fc.string({ minLength: 1, maxLength: 20 }),
            )
            .map(([a, bad, b]) => `k${a}${bad}${b}k`),
          fc.constantFrom('', ' ', '\t'),
        )
        .map((key) => {
          const request = baseRequest(op);
          return { ...request, headers: { ...request.headers, 'Idempotency-Key': key } };
        }),
    });
  }
  return kinds;
}

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------------
// Assertions.

/** Rows per table of the control database and of each shard, in one statement per database. */
async function rowCounts(): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const [database, d1] of Object.entries(DATABASES)) {
    const mine = tables.filter((t) => t.database === database);
    const row = await d1
      .prepare(`SELECT ${mine.map((t, i) => `(SELECT count(*) FROM "${t.name}") AS t${i}`).join(', ')}`)
      .first<Record<string, number>>();
    mine.forEach((t, i) => {
      counts[`${database}.${t.name}`] = row![`t${i}`]!;
    });
  }
  return counts;
}

function expectEnvelope(res: ApiResponse, label: string) {
  expect(res.headers.get('content-type'), label).toMatch(/^application\/json/);
  expect(Object.keys(res.body ?? {}), label).toEqual(['error']);
  const error = res.body.error;
  expect(Object.keys(error).sort(), label).toEqual([
    'category',
    'code',
    'details',
    'message',
    'request_id',
    'retryable',
  ]);
  const spec = ERROR_CODES[error.code as ErrorCode];
  expect(spec, `${label}: unknown code ${error.code}`).toBeDefined();
  expect(error.category, label).toBe(spec.category);
  expect(error.retryable, label).toBe(spec.retryable);
  expect(typeof error.message === 'string' && error.message.length > 0, label).toBe(true);
  expect(error.request_id, label).toBe(res.headers.get('x-request-id'));
  expect(error.details !== null && typeof error.details === 'object' && !Array.isArray(error.details), label).toBe(
    true,
  );
}

async function send(op: DescribedOperation, request: HostileRequest): Promise<ApiResponse> {
  return call(op.method.toUpperCase(), request.path, {
    headers: request.headers,
    ...(request.token ? { token: request.token } : {}),
    ...(request.rawBody !== undefined
      ? { rawBody: request.rawBody }
      : request.body !== undefined
        ? { body: request.body }
        : {}),
  });
}

/** Requests sent, by operation and case kind. */
const coverage = new Map<string, Map<string, number>>();

// ---------------------------------------------------------------------------------------------------

beforeAll(async () => {
  admin = await seedSession({ role: 'admin' });
  const key = await createKey(admin);
  apiKey = { id: key.id, secret: key.secret };
  const method = await createMethod(admin);
  await link(admin, method.id, apiKey.id);
  const payment = await call('POST', '/v1/payments', {
    token: apiKey.secret,
    headers: { 'Idempotency-Key': `hostile-setup-${crypto.randomUUID()}` },
    body: {
      amount: { value: '10.00', currency: 'USD' },
      external_reference: 'hostile-setup',
      payment_method: method.id,
    },
  });
  if (payment.status !== 201) throw new Error(`payment creation failed: ${payment.status} ${payment.text}`);
  const events = await call('GET', `/v1/payments/${payment.body.data.id}/events`, { token: apiKey.secret });
  const refund = await call('POST', `/v1/payments/${payment.body.data.id}/refunds`, {
    token: apiKey.secret,
    headers: { 'Idempotency-Key': `hostile-setup-${crypto.randomUUID()}` },
    body: { amount: { value: '1.00', currency: 'USD' } },
  });
  if (refund.status !== 201) throw new Error(`refund failed: ${refund.status} ${refund.text}`);
  const endpoint = await call('POST', '/v1/account/webhook-endpoints', {
    token: admin.accessToken,
    body: { url: 'https://hooks.example.com/hostile', enabled_events: ['*'] },
  });
  if (endpoint.status !== 201) throw new Error(`webhook endpoint failed: ${endpoint.status} ${endpoint.text}`);
  const dispute = await call('POST', `/v1/test-helpers/payments/${payment.body.data.id}/dispute`, {
    token: apiKey.secret,
  });
  if (dispute.status !== 200) throw new Error(`dispute failed: ${dispute.status} ${dispute.text}`);
  ids = {
    user_id: admin.user.id,
    api_key_id: apiKey.id,
    payment_method_id: method.id,
    payment_id: payment.body.data.id,
    event_id: events.body?.data?.[0]?.id ?? 'evt_hostile_none',
    refund_id: refund.body.data.id,
    dispute_id: dispute.body.data.id,
    webhook_endpoint_id: endpoint.body.data.id,
    action: 'expire',
  };
  tables = [];
  for (const [database, d1] of Object.entries(DATABASES)) {
    const { results } = await d1
      .prepare(
        "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE '_cf_%' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'd1_%migrations' ORDER BY name",
      )
      .all<{ name: string }>();
    tables.push(...results.map((r) => ({ database, name: r.name })));
  }
});

describe('hostile input, generated from /openapi.json', () => {
  it('covers a described surface, with valid base bodies', () => {
    expect(operations.length).toBeGreaterThan(20);
    expect(tables.map((t) => t.name)).toEqual(
      expect.arrayContaining(['users', 'api_keys', 'payment_methods', 'payments', 'refunds', 'sessions']),
    );
    for (const op of operations) {
      if (!bodySchemaOf(op)) continue;
      // The mutations start from a body the description accepts, so each one breaks exactly what it says.
      expect(conformance.validate(baseBody(op.operationId!), bodySchemaOf(op)), op.operationId).toEqual([]);
    }
  });

  for (const [index, op] of operations.entries()) {
    const label = `${op.method.toUpperCase()} ${op.path}`;
    it(`${label} (${op.operationId}): refuses every invalid input with a 4xx envelope and writes nothing`, async () => {
      const kinds = caseKinds(op);
      expect(kinds.length, label).toBeGreaterThan(0);
      const runs = Math.max(2, Math.ceil(RUNS_PER_OPERATION / kinds.length));
      const counted = new Map<string, number>();
      coverage.set(label, counted);
      for (const [k, kind] of kinds.entries()) {
        await fc.assert(
          fc.asyncProperty(kind.arbitrary, async (request) => {
            const before = await rowCounts();
            const res = await send(op, request);
            counted.set(kind.name, (counted.get(kind.name) ?? 0) + 1);
            const what = `${label} [${kind.name}] -> ${res.status} ${res.text.slice(0, 300)}`;
            expect(res.status, what).toBeLessThan(500);
            expect(kind.expected, what).toContain(res.status);
            expectEnvelope(res, what);
            // Whatever was sent, an error repeats little of it (lib/echo.ts).
            expect(res.text.length, what).toBeLessThan(16 * 1024);
            expect(await rowCounts(), `${what}: rows changed`).toEqual(before);
          }),
          { seed: SEED + index * 100 + k, numRuns: runs },
        );
      }
    });
  }

  it('sent every applicable case kind to every operation', () => {
    let total = 0;
    const summary: string[] = [];
    for (const op of operations) {
      const label = `${op.method.toUpperCase()} ${op.path}`;
      const counted = coverage.get(label);
      expect(counted, label).toBeDefined();
      const expectedKinds = caseKinds(op).map((k) => k.name);
      expect([...counted!.keys()].sort(), label).toEqual([...expectedKinds].sort());
      const sent = [...counted!.values()].reduce((a, b) => a + b, 0);
      expect(sent, label).toBeGreaterThanOrEqual(RUNS_PER_OPERATION);
      total += sent;
      summary.push(`${label}: ${expectedKinds.length} kinds, ${sent} requests`);
    }
    console.log(`hostile input: ${operations.length} operations, ${total} requests\n${summary.join('\n')}`);
  });
});
