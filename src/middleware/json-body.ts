import type { Context, MiddlewareHandler } from 'hono';
import { EdgeError, errorEnvelope } from '../http/errors.ts';
import { invalidRequest, type ServiceError } from '../lib/errors.ts';
import { ErrorSchema, type AppEnv, type AppOpenAPI } from '../lib/openapi.ts';
import { MAX_JSON_DEPTH, parseStrictJson, type StrictJsonIssue } from '../lib/strict-json.ts';

export const MAX_BODY_BYTES = 64 * 1024;
const JSON_CONTENT_TYPE = /^application\/json\s*(;.*)?$/i;

/**
 * One gate for every request body, before any route sees it: at most 64 KiB (also when the length is
 * not declared), `Content-Type: application/json`, valid UTF-8 strict JSON (no repeated key, no
 * `__proto__`, at most 64 levels deep: lib/strict-json.ts), and a JSON object. The raw text is handed on
 * through Hono's body cache (a processor notification's signature is checked over it), and the value
 * parsed here to the route validator, so a body is parsed once.
 */
export const jsonBodyGuard: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (c.req.method === 'GET' || c.req.method === 'HEAD' || c.req.method === 'OPTIONS') return next();

  const declared = c.req.header('content-length');
  if (declared !== undefined && Number(declared) > MAX_BODY_BYTES) throw tooLarge();
  const raw = await readCapped(c.req.raw.body, MAX_BODY_BYTES);
  if (raw.byteLength === 0) {
    // An empty body reads as {}, so a route that needs fields names the missing ones.
    handOn(c, '{}', {});
    return next();
  }

  if (!JSON_CONTENT_TYPE.test(c.req.header('content-type') ?? '')) throw unsupportedMediaType();
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(raw);
  } catch {
    throw malformed();
  }
  const result = parseStrictJson(text);
  if (!result.ok) throw strictJsonError(result.issue);
  const parsed = result.value;
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw invalidRequest('The body must be a JSON object.', [{ field: '(body)', issue: 'Expected a JSON object' }]);
  }
  handOn(c, text, parsed);
  return next();
};

/**
 * The validator reads the body with `c.req.json()`, which would parse the cached text again; this
 * request's `json()` answers with the value checked here instead (JSON.parse's own, lib/strict-json.ts).
 */
function handOn(c: Context<AppEnv>, text: string, parsed: object) {
  (c.req.bodyCache as Record<string, unknown>).text = Promise.resolve(text);
  c.req.json = <T>() => Promise.resolve(parsed as T);
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
