import { z } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import { EdgeError, errorEnvelope } from '../http/errors.ts';
import { invalidRequest, type ServiceError } from '../lib/errors.ts';
import { ErrorSchema, operationOf, type AppEnv, type AppOpenAPI, type RequestBody } from '../lib/openapi.ts';
import { MAX_JSON_DEPTH, parseStrictJson, type StrictJsonIssue } from '../lib/strict-json.ts';

export const MAX_BODY_BYTES = 64 * 1024;
const JSON_CONTENT_TYPE = /^application\/json\s*(;.*)?$/i;
/** Without `stream`, every `decode` call is whole: one decoder serves every request. */
const utf8Decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** What an operation declares of its input, read from its route definition. */
interface DeclaredInput {
  body: boolean;
  /** The query parameters it reads; `any` where the sender owns the query string (a processor's notification URL). */
  query: ReadonlySet<string> | 'any';
}

/**
 * One gate for the input of every request, before any route sees it, so that nothing a client sends is
 * silently ignored:
 * - a body: at most 64 KiB (also when the length is not declared), `Content-Type: application/json`, valid
 *   UTF-8 strict JSON (no repeated key, no `__proto__`, no lone surrogate, at most 64 levels deep:
 *   lib/strict-json.ts), a JSON object; and, where the operation declares no body, empty or `{}` (a
 *   merchant sending `{"amount": ...}` to cancel must not believe it asked for a partial cancel);
 * - a query string: only the parameters the operation declares (a misspelt filter or an admin's `user_id`
 *   where none is read must not answer as if it were absent).
 * What an operation declares comes from the route definitions, read once all are registered. The body is
 * handed on in `c.var.body`: its text as sent (a processor notification's signature is checked over it)
 * and the value parsed here; the route's validator reads the same text from Hono's request (`handOn`).
 */
export function inputGate(app: AppOpenAPI): MiddlewareHandler<AppEnv> {
  let declared: Map<string, DeclaredInput> | undefined;
  return async (c, next) => {
    declared ??= declaredInputs(app);
    const operation = operationOf(c);
    const input = operation ? declared.get(`${operation.method} ${operation.path}`) : undefined;
    if (input) refuseUndeclaredQuery(c, input);
    if (c.req.method === 'GET' || c.req.method === 'HEAD' || c.req.method === 'OPTIONS') return next();

    const body = await readBody(c);
    if (input && !input.body && Object.keys(body.value).length > 0) {
      throw invalidRequest('This operation takes no body; send none (or `{}`).', [
        { field: '(body)', issue: 'No body expected' },
      ]);
    }
    c.set('body', body);
    return next();
  };
}

function declaredInputs(app: AppOpenAPI): Map<string, DeclaredInput> {
  const declared = new Map<string, DeclaredInput>();
  for (const definition of app.openAPIRegistry.definitions) {
    if (definition.type !== 'route') continue;
    const { method, path, request } = definition.route;
    declared.set(`${method.toUpperCase()} ${path}`, {
      body: request?.body !== undefined,
      query: queryNames(request?.query),
    });
  }
  return declared;
}

/** A query schema that admits other keys (`z.looseObject`) leaves the query string to its sender. */
function queryNames(schema: unknown): DeclaredInput['query'] {
  if (!(schema instanceof z.ZodObject)) return new Set();
  const { catchall } = schema.def;
  if (catchall !== undefined && !(catchall instanceof z.ZodNever)) return 'any';
  return new Set(Object.keys(schema.shape));
}

function refuseUndeclaredQuery(c: Context<AppEnv>, input: DeclaredInput) {
  const { query } = input;
  // Most requests send no query string: nothing to parse.
  if (query === 'any' || !c.req.url.includes('?')) return;
  const unknown = Object.keys(c.req.queries()).filter((name) => !query.has(name));
  if (unknown.length > 0) {
    throw invalidRequest(
      'Invalid query parameter.',
      unknown.map((name) => ({ field: `query.${name}`, issue: 'Unknown parameter' })),
    );
  }
}

async function readBody(c: Context<AppEnv>): Promise<RequestBody> {
  const declaredLength = c.req.header('content-length');
  if (declaredLength !== undefined && Number(declaredLength) > MAX_BODY_BYTES) throw tooLarge();
  const raw = await readWithin(c.req.raw, declaredLength !== undefined, MAX_BODY_BYTES);
  // An empty body reads as {}, so a route that needs fields names the missing ones.
  if (raw.byteLength === 0) {
    handOn(c, null);
    return { text: '', value: {} };
  }

  if (!JSON_CONTENT_TYPE.test(c.req.header('content-type') ?? '')) throw unsupportedMediaType();
  let text: string;
  try {
    text = utf8Decoder.decode(raw);
  } catch {
    throw malformed();
  }
  handOn(c, text);
  const result = parseStrictJson(text);
  if (!result.ok) throw strictJsonError(result.issue);
  const parsed = result.value;
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw invalidRequest('The body must be a JSON object.', [{ field: '(body)', issue: 'Expected a JSON object' }]);
  }
  return { text, value: parsed as Record<string, unknown> };
}

/**
 * The route's validators (@hono/zod-openapi) read the body from Hono's request after the gate read its stream: it is
 * handed on as Hono's own body limit does, in a request of the same headers carrying the text read. An empty body is
 * handed on as none, without the `Content-Type` that would describe it, so that it reads as {} whatever that said.
 */
function handOn(c: Context<AppEnv>, text: string | null) {
  if (text !== null) {
    c.req.raw = new Request(c.req.raw, { body: text });
    return;
  }
  const headers = new Headers(c.req.raw.headers);
  headers.delete('content-type');
  c.req.raw = new Request(c.req.raw, { body: new Uint8Array(0), headers });
}

// Parsers' messages quote the input, so none is passed on.
const malformed = () => invalidRequest('The body is not valid JSON.', [{ field: '(body)', issue: 'Malformed JSON' }]);

/** A body that is JSON but could be read two ways (or is absurdly deep): see lib/strict-json.ts. */
function strictJsonError(issue: StrictJsonIssue): ServiceError {
  switch (issue.kind) {
    case 'malformed':
      return malformed();
    case 'too_deep':
      return invalidRequest(`The body is nested more than ${MAX_JSON_DEPTH} levels deep.`, [
        { field: '(body)', issue: `At most ${MAX_JSON_DEPTH} levels of nesting` },
      ]);
    case 'duplicate_key':
      return invalidRequest(
        'The body repeats a key in one object; each key may appear once, so that the body means one thing.',
        [{ field: issue.field, issue: 'Duplicate key' }],
      );
    case 'forbidden_key':
      return invalidRequest('The body has a `__proto__` key, which is refused at any depth.', [
        { field: issue.field, issue: 'Forbidden key' },
      ]);
    case 'lone_surrogate':
      return invalidRequest(
        'The body has a string with half of a UTF-16 surrogate pair (an escape such as `\\ud800` alone), which no UTF-8 text can hold.',
        [{ field: issue.field, issue: 'Lone surrogate' }],
      );
  }
}

const tooLarge = () =>
  new EdgeError(413, `The body exceeds ${MAX_BODY_BYTES} bytes.`, [
    { field: '(body)', issue: `At most ${MAX_BODY_BYTES} bytes` },
  ]);
const unsupportedMediaType = () =>
  new EdgeError(415, 'Content-Type must be application/json.', [
    { field: 'Content-Type', issue: 'Expected application/json' },
  ]);

/**
 * The gate answers 413 and 415 `invalid_request` on every route it guards (every `/v1/` operation but
 * GET), whether or not the route takes a body; this adds those answers to each such operation's
 * description, after the routes are registered.
 */
export function declareBodyGateResponses(app: AppOpenAPI) {
  const gate = { 413: gateResponse(tooLarge()), 415: gateResponse(unsupportedMediaType()) };
  for (const definition of app.openAPIRegistry.definitions) {
    if (definition.type !== 'route') continue;
    const { route } = definition;
    if (
      route.method === 'get' ||
      route.method === 'head' ||
      route.method === 'options' ||
      !route.path.startsWith('/v1/')
    )
      continue;
    route.responses = { ...route.responses, ...gate };
  }
}

function gateResponse(error: ServiceError) {
  return {
    description: `\`${error.code}\`: ${error.message}`,
    content: {
      'application/json': {
        schema: ErrorSchema,
        examples: { [error.code]: { value: errorEnvelope(error, 'req_3kqz7w1v0c9m2x8b') } },
      },
    },
  };
}

/**
 * The body's bytes, refused past `limit`. A body of a declared length (checked against the limit before) is read
 * in one call; one of unknown length (chunked) is read chunk by chunk and refused as soon as it passes the limit.
 */
async function readWithin(request: Request, lengthDeclared: boolean, limit: number): Promise<Uint8Array> {
  if (!lengthDeclared || !request.body) return readCapped(request.body, limit);
  const raw = new Uint8Array(await request.arrayBuffer());
  if (raw.byteLength > limit) throw tooLarge();
  return raw;
}

async function readCapped(body: ReadableStream<Uint8Array> | null, limit: number): Promise<Uint8Array> {
  if (!body) return new Uint8Array(0);
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  const out = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}
