import { errorEnvelope } from '../../http/errors.ts';
import { READ_BOOKMARK_HEADER } from '../../http/headers.ts';
import { ERROR_CODES } from '../../lib/errors.ts';
import { OWNER_MOVING_RETRY_AFTER_SECONDS } from '../../services/shards/owner-deps.ts';
import { isRead, UNAVAILABLE_RETRY_AFTER_SECONDS } from '../../middleware/request-context.ts';

/**
 * The description as served: what the routes generate, completed with what the HTTP edge does on every
 * operation (the conventions of middleware/, which no single route declares) and with the repairs that
 * make generated clients read it as meant. Runs once per served document; each step is a plain rule over
 * the whole document, so an operation added later is covered without declaring anything.
 */

// biome-ignore lint/suspicious/noExplicitAny: the document is the generator's plain JSON, read and completed by shape; the tests check the result.
type Json = Record<string, any>;

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];
const ERROR_SCHEMA_REF = '#/components/schemas/ErrorResponse';

const header = (name: string) => ({ $ref: `#/components/headers/${name}` });

/**
 * The response headers every answer of their kind carries, declared once (`components.headers`). Optional
 * ones are written out in each response instead: generators type a referenced header as always present.
 */
const HEADERS: Record<string, Json> = {
  RequestId: {
    description:
      'This request’s id, equal to an error’s `request_id`: quote it, with the environment, when reporting a problem.',
    required: true,
    schema: { type: 'string', maxLength: 64, pattern: '^req_[0-9a-z]+$', example: 'req_3kqz7w1v0c9m2x8b' },
  },
  RetryAfter: {
    description: 'Seconds to wait before retrying (the same `Idempotency-Key` and body, for an idempotent operation).',
    required: true,
    schema: { type: 'integer', format: 'int32', minimum: 0, maximum: 86_400, example: UNAVAILABLE_RETRY_AFTER_SECONDS },
  },
};

// Short: written out in every response that carries them (the info description and the parameter say more).
const IDEMPOTENT_REPLAYED = {
  description: '`true` on a stored answer replayed for the same `Idempotency-Key` and body.',
  schema: { type: 'string', enum: ['true'] },
};
const READ_BOOKMARK = {
  description: `What this answer saw: send the latest one back as \`${READ_BOOKMARK_HEADER}\` on a read.`,
  schema: { type: 'string', maxLength: 256 },
};

/** `X-Read-Bookmark` as a request header of every read (middleware/request-context.ts reads it). */
const READ_BOOKMARK_PARAMETER = {
  name: READ_BOOKMARK_HEADER.toLowerCase(),
  in: 'header',
  required: false,
  description: `A bookmark from an earlier answer’s \`${READ_BOOKMARK_HEADER}\` (the latest you received): the read may then be served by a database replica near you that has caught up to it. Without one, the read goes to the primary. A malformed one is \`400 invalid_request\`.`,
  schema: { type: 'string', minLength: 1, maxLength: 256, pattern: '^[A-Za-z0-9._:-]+$' },
  example: '00000002-0000000a-00004fa3-64f1c2d8a6b04e7e9a3c5b7d9e1f2a4c',
};

export function completeDescription<T extends object>(document: T): T {
  const doc = structuredClone(document) as Json;
  doc.components ??= {};
  doc.components.headers = { ...doc.components.headers, ...HEADERS };
  doc.components.parameters = { ...doc.components.parameters, ReadBookmark: READ_BOOKMARK_PARAMETER };
  for (const [path, item] of Object.entries<Json>(doc.paths ?? {})) {
    for (const method of HTTP_METHODS) {
      const operation = item[method];
      if (operation) completeOperation(method, path, operation);
    }
  }
  describedReferences(doc);
  return doc as T;
}

function completeOperation(method: string, path: string, operation: Json) {
  const read = isRead(method, path);
  const idempotent = (operation.parameters ?? []).some(
    (p: Json) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key',
  );
  if (read) operation.parameters = [...(operation.parameters ?? []), { $ref: '#/components/parameters/ReadBookmark' }];
  if (!read && (operation.security ?? []).length > 0) declareOwnerMoving(operation);
  for (const parameter of operation.parameters ?? []) neverNull(parameter);

  for (const [status, response] of Object.entries<Json>(operation.responses ?? {})) {
    const headers: Json = { 'X-Request-Id': header('RequestId') };
    if (idempotent) headers['Idempotent-Replayed'] = IDEMPOTENT_REPLAYED;
    if (read || idempotent) headers[READ_BOOKMARK_HEADER] = READ_BOOKMARK;
    if (status === '429' || status === '503') headers['Retry-After'] = header('RetryAfter');
    response.headers = { ...headers, ...response.headers };
    if (Number(status) >= 400) narrowErrorCodes(response);
  }
}

/**
 * Every authenticated write may meet its owner being moved between shards (services/shards/owner-deps.ts): a
 * retryable `503 owner_moving`, declared here once for all of them rather than on each route.
 */
function declareOwnerMoving(operation: Json) {
  const example = errorEnvelope(
    {
      code: 'owner_moving',
      message: ERROR_CODES.owner_moving.message,
      details: { retry_after_seconds: OWNER_MOVING_RETRY_AFTER_SECONDS },
    },
    'req_3kqz7w1v0c9m2x8b',
  );
  operation.responses ??= {};
  operation.responses['503'] ??= {
    description: '',
    content: { 'application/json': { schema: { $ref: ERROR_SCHEMA_REF }, examples: {} } },
  };
  const response = operation.responses['503'];
  const json = response.content['application/json'];
  json.examples = { ...json.examples, owner_moving: { value: example } };
  response.description = [response.description, '`owner_moving`'].filter(Boolean).join(', ');
}

/**
 * A query, path or header value is text: it is never JSON `null`. The generator infers `null` from a
 * coercing schema that would accept it (`z.coerce.number()` turns null into 0), which clients read as
 * "may send null".
 */
function neverNull(parameter: Json) {
  const type = parameter.schema?.type;
  if (!Array.isArray(type) || !type.includes('null')) return;
  const rest = type.filter((t: string) => t !== 'null');
  parameter.schema.type = rest.length === 1 ? rest[0] : rest;
}

/**
 * The error envelope's `code` is open (`ErrorResponse`: new codes may come with new operations), but each
 * response lists the codes it can carry (its examples, built by lib/openapi.ts `errorResponses`): that
 * list becomes its enum, so a generated client can switch over exactly those.
 */
function narrowErrorCodes(response: Json) {
  const json = response.content?.['application/json'];
  if (json?.schema?.$ref !== ERROR_SCHEMA_REF || !json.examples) return;
  const codes = [...new Set(Object.values<Json>(json.examples).map((example) => example.value?.error?.code as string))];
  json.schema = {
    // Said again beside `allOf`: diff tools read a response that loses its top-level `type` as a breaking change.
    type: 'object',
    allOf: [
      { $ref: ERROR_SCHEMA_REF },
      {
        type: 'object',
        required: ['error'],
        properties: {
          error: { type: 'object', required: ['code'], properties: { code: { type: 'string', enum: codes } } },
        },
      },
    ],
  };
}

/** Keywords that only describe: an `allOf` of a `$ref` and these adds nothing to the referenced schema. */
const ANNOTATIONS = new Set([
  'description',
  'example',
  'examples',
  'title',
  'deprecated',
  'readOnly',
  'writeOnly',
  'default',
]);

/**
 * The generator describes a referenced schema used with a description of its own as
 * `allOf: [{ $ref }, { description }]`, which generators type as `Amount & unknown`. OpenAPI 3.1 lets a
 * `$ref` carry annotations beside it, so the pair becomes `{ $ref, description }`. Examples are values,
 * not schemas: they are not walked.
 */
function describedReferences(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) describedReferences(item);
    return;
  }
  if (!node || typeof node !== 'object') return;
  const schema = node as Json;
  const [first, second, ...more] = Array.isArray(schema.allOf) ? schema.allOf : [];
  if (
    more.length === 0 &&
    typeof first?.$ref === 'string' &&
    Object.keys(first).length === 1 &&
    second &&
    Object.keys(second).every((key) => ANNOTATIONS.has(key))
  ) {
    delete schema.allOf;
    Object.assign(schema, { $ref: first.$ref }, second);
  }
  for (const [key, value] of Object.entries(schema))
    if (key !== 'example' && key !== 'examples') describedReferences(value);
}
