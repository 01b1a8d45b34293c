import { OpenAPIHono, z, type Hook, type RouteConfig, type RouteHandler } from '@hono/zod-openapi';
import type { Context, Handler, MiddlewareHandler } from 'hono';
import type { RouterRoute } from 'hono/types';
import { matchedRoutes } from 'hono/route';
import { RegExpRouter } from 'hono/router/reg-exp-router';
import type { Page } from '../db/paging.ts';
import type { Deps } from '../deps.ts';
import type { AuthContext } from '../domain/caller.ts';
import type { Env } from '../env.ts';
import { HTTP_STATUS, errorEnvelope } from '../http/errors.ts';
import { ERROR_CATEGORIES, ERROR_CODES, invalidRequest, zodIssuesToFields, type ErrorCode } from './errors.ts';

/** Shared OpenAPI building blocks: envelopes, pagination, error responses, the router factory. */

/** What the HTTP layer keeps per request (Hono's `c.var`). */
export interface AppVariables {
  requestId: string;
  /** This request's dependencies (deps.ts), set first by middleware/request-context.ts. */
  deps: Deps;
  /** Set by middleware/auth.ts on the routes that require a credential. */
  auth: AuthContext;
  /** The error code answered, for the access log (middleware/error-handler.ts, idempotent replays). */
  errorCode?: string;
  /** A request's body as the gate read it (middleware/json-body.ts); unset on GET and HEAD. */
  body?: RequestBody;
  /** The operation the request was routed to, once asked (`operationOf`); null when no route matched. */
  operation?: Operation | null;
}

export interface RequestBody {
  /** The text as sent (a processor's signature is checked over it); empty when no body came. */
  text: string;
  /** The strict JSON object it holds; `{}` for an empty body. */
  value: Record<string, unknown>;
}

export type AppEnv = { Bindings: Env; Variables: AppVariables };

export const BEARER_AUTH = 'bearerAuth';
export const bearerSecurity = [{ [BEARER_AUTH]: [] }];

export const Timestamp = z.string().max(30).openapi({ format: 'date-time', example: '2026-11-21T10:15:30.123Z' });

export const ErrorSchema = z
  .object({
    error: z.object({
      code: z
        .string()
        .max(64)
        .regex(/^[a-z][a-z0-9_]*$/)
        .openapi({ example: 'invalid_request' }),
      message: z.string().max(1000),
      category: z.enum(ERROR_CATEGORIES),
      retryable: z.boolean(),
      request_id: z
        .string()
        .max(64)
        .regex(/^req_[0-9a-z]+$/)
        .openapi({ example: 'req_3kqz7w1v0c9m2x8b' }),
      details: z
        .record(z.string(), z.unknown())
        .openapi({ description: 'What the code says it carries (e.g. `fields`); `{}` otherwise.', example: {} }),
    }),
  })
  // Not `Error`: generated clients would declare a type that shadows the language's own `Error`.
  .openapi('ErrorResponse');

/** A count or position: 0 to 2^31 - 1 (OpenAPI `int32`). */
const PageInt = z.number().int().min(0).max(2_147_483_647).openapi({ format: 'int32' });

export const PaginationSchema = z
  .object({
    limit: PageInt.min(1).max(100).openapi({ example: 50 }),
    offset: PageInt.openapi({
      description: `The \`offset\` asked (0 with \`starting_after\` or \`ending_before\`: a cursor places the page, not a count).`,
      example: 0,
    }),
    total: PageInt.openapi({ description: 'Items matching the query, on every page.', example: 2 }),
    has_more: z.boolean().openapi({
      description:
        'Whether more items lie beyond this page in the direction of the walk: after its last item (offset or `starting_after`), before its first (`ending_before`). Walk on with the last (or first) id while it is true.',
      example: false,
    }),
  })
  .openapi('Pagination');

/**
 * An integer query parameter, written in decimal digits only: `0x10`, `1e2`, ` 1` or an empty value would
 * each read as some number to `Number`, and a value must have one spelling. Described as an integer.
 */
const queryInteger = (schema: z.ZodNumber) =>
  z.preprocess((value) => (typeof value === 'string' && /^[0-9]+$/.test(value) ? Number(value) : value), schema);

const DIGITS_ONLY = { error: 'Expected an integer in decimal digits' };

/** The deepest `offset` a list answers: an offset page reads the rows it skips; a cursor page does not. */
export const MAX_OFFSET = 10_000;

/** A cursor: the id of an item of the list, as its `id` reads. */
const CursorId = (description: string) =>
  z.string().min(1).max(128).optional().openapi({ description, example: 'pay_3kqz7w1v0c9m2x8bq4n6' });

export const PaginationQuery = z.object({
  limit: queryInteger(z.number(DIGITS_ONLY).int().min(1).max(100))
    .default(50)
    .openapi({ description: 'Page size, 1 to 100.', example: 50, format: 'int32' }),
  // Deeper than MAX_OFFSET is refused by `pageOf`, whose message names the cursor to use instead; the
  // description declares the maximum.
  offset: queryInteger(z.number(DIGITS_ONLY).int().min(0).max(2_147_483_647))
    .default(0)
    .openapi({
      description: `Items to skip, at most ${MAX_OFFSET.toLocaleString('en-US')} (deeper: \`400 invalid_request\`; walk with \`starting_after\`, which costs the same at any depth). 0 with a cursor.`,
      example: 0,
      format: 'int32',
      maximum: MAX_OFFSET,
    }),
  starting_after: CursorId(
    'The id of an item of this list: the page is the items after it, in the list’s order (older ones, for a newest-first list). Walk forward with the last id of each page while `has_more`. An id that is not an item of this list (another owner’s, another payment’s, unknown) is `400 invalid_request`; not with `ending_before` or `offset`.',
  ),
  ending_before: CursorId(
    'The id of an item of this list: the page is the items just before it, in the list’s order (newer ones, for a newest-first list), still in the list’s order. Walk back with the first id of each page while `has_more`. An id that is not an item of this list is `400 invalid_request`; not with `starting_after` or `offset`.',
  ),
});

/** An offset deeper than `MAX_OFFSET`: the message and the fields name the way on, `starting_after`. */
const offsetTooDeep = () =>
  invalidRequest(
    `offset is at most ${MAX_OFFSET}; page deeper with starting_after (the id of the last item of the page before).`,
    [
      { field: 'query.offset', issue: `At most ${MAX_OFFSET}` },
      { field: 'query.starting_after', issue: `Pages past offset ${MAX_OFFSET} are walked with starting_after` },
    ],
  );

/**
 * The page a list's validated query asks for. Refused with `400 invalid_request`: both cursors at once, a cursor
 * with an offset, and an offset deeper than `MAX_OFFSET` (whose message names `starting_after`, the way on).
 */
export function pageOf(query: z.output<typeof PaginationQuery>): Page {
  const { limit, offset, starting_after, ending_before } = query;
  if (starting_after !== undefined && ending_before !== undefined) {
    throw invalidRequest('Give starting_after or ending_before, not both.', [
      { field: 'query.starting_after', issue: 'Not with ending_before' },
      { field: 'query.ending_before', issue: 'Not with starting_after' },
    ]);
  }
  const cursor = starting_after !== undefined ? 'starting_after' : ending_before !== undefined ? 'ending_before' : null;
  if (cursor !== null && offset > 0) {
    throw invalidRequest(`offset cannot be combined with ${cursor}: the cursor places the page.`, [
      { field: 'query.offset', issue: `Not with ${cursor}` },
    ]);
  }
  if (offset > MAX_OFFSET) throw offsetTooDeep();
  return { limit, offset, startingAfter: starting_after, endingBefore: ending_before };
}

/** A list's `pagination`, as answered. */
export const paginationOf = (page: Page, { total, hasMore }: { total: number; hasMore: boolean }) => ({
  limit: page.limit,
  offset: page.offset,
  total,
  has_more: hasMore,
});

const CreatedBound = (description: string) =>
  z.iso
    .datetime({ offset: true })
    .max(40)
    .optional()
    .openapi({
      description: `${description} ISO 8601 date-time with \`Z\` or an offset.`,
      example: '2026-11-01T00:00:00.000Z',
    });

/** `created_gte` / `created_lt` of the filtered lists: a half-open range, compared as stored (epoch ms). */
export const CreatedRangeQuery = {
  created_gte: CreatedBound('Only items created at or after this instant.'),
  created_lt: CreatedBound('Only items created before this instant.'),
};

/**
 * Pagination plus filters. A misspelt filter never answers with the unfiltered list: the gate refuses
 * every parameter an operation does not declare (middleware/json-body.ts).
 */
export const filteredListQuery = <S extends z.ZodRawShape>(filters: S) => PaginationQuery.extend(filters);

export function dataEnvelope<T extends z.ZodType>(schema: T) {
  return z.object({ data: schema });
}

export function listEnvelope<T extends z.ZodType>(schema: T) {
  return z.object({ data: z.array(schema).max(100), pagination: PaginationSchema });
}

export function jsonContent<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { 'application/json': { schema } } };
}

export function jsonBody<T extends z.ZodType>(schema: T, description?: string) {
  return { required: true, ...(description ? { description } : {}), content: { 'application/json': { schema } } };
}

/**
 * The error responses of a route, grouped by status, each code with an example. Every route lists the
 * codes it can answer with; `invalid_request` and `internal_error` apply to every route and are added here.
 * The examples are the list: the served description turns them into each response's `code` enum
 * (routes/docs/docs.description.ts), so a response added elsewhere (the body gate's) gets one too.
 */
export function errorResponses(...codes: ErrorCode[]) {
  const all = new Set<ErrorCode>(['invalid_request', 'internal_error', ...codes]);
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of all) {
    const status = HTTP_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<
    number,
    {
      description: string;
      content: { 'application/json': { schema: typeof ErrorSchema; examples: Record<string, { value: unknown }> } };
    }
  > = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    responses[status] = {
      description: list.map((code) => `\`${code}\``).join(', '),
      content: {
        'application/json': {
          schema: ErrorSchema,
          examples: Object.fromEntries(list.map((code) => [code, { value: exampleError(code) }])),
        },
      },
    };
  }
  return responses;
}

/**
 * The error responses of a list (`errorResponses`): its `invalid_request` example is the refusal of an offset past
 * `MAX_OFFSET`, which names the cursor to walk with instead.
 */
export function listErrorResponses(...codes: ErrorCode[]) {
  const responses = errorResponses(...codes);
  const { message, details } = offsetTooDeep();
  responses[400]!.content['application/json'].examples.invalid_request = {
    value: errorEnvelope({ code: 'invalid_request', message, details }, EXAMPLE_REQUEST_ID),
  };
  return responses;
}

/** `details` of the examples, where a code carries some. */
const EXAMPLE_DETAILS: Partial<Record<ErrorCode, Record<string, unknown>>> = {
  invalid_request: { fields: [{ field: 'amount.value', issue: 'Invalid decimal amount' }] },
  external_reference_conflict: { payment_id: 'pay_3kqz7w1v0c9m2x8bq4n6' },
  webhook_endpoint_limit_reached: { limit: 16 },
};

const EXAMPLE_REQUEST_ID = 'req_3kqz7w1v0c9m2x8b';

function exampleError(code: ErrorCode) {
  return errorEnvelope(
    { code, message: ERROR_CODES[code].message, details: EXAMPLE_DETAILS[code] ?? {} },
    EXAMPLE_REQUEST_ID,
  );
}

const TARGET_LABEL: Record<string, string> = {
  json: 'body',
  query: 'query parameter',
  param: 'path parameter',
  header: 'header',
};

export const validationHook: Hook<unknown, AppEnv, string, unknown> = (result) => {
  if (!result.success) {
    const target = (result as { target?: string }).target ?? 'json';
    const prefix = target === 'json' ? undefined : target;
    throw invalidRequest(
      `Invalid ${TARGET_LABEL[target] ?? target}.`,
      zodIssuesToFields(result.error as z.ZodError, prefix),
    );
  }
};

/**
 * The router. An operation's JSON body is validated against its declared schema from `c.var.body`, the
 * value the gate already parsed strictly (middleware/json-body.ts), instead of by @hono/zod-openapi's
 * validator, which would read and parse the body again through Hono's request. The operation is still
 * described with its body; only the running route leaves the body to the gate and this check.
 */
export function createRouter() {
  // One regular expression per method matches every route. Hono's default would fall back to its trie router when
  // two paths put a fixed segment and a parameter at the same place, which cost a tenth of a payment read's CPU
  // (bench/RESULTS.md); such operations share one route instead (`registerOnOnePath`). A path the
  // expression cannot hold is refused when it is registered, so the Worker does not start with it.
  const app = new OpenAPIHono<AppEnv>({ strict: true, defaultHook: validationHook, router: new RegExpRouter() });
  const register = app.openapi;
  app.openapi = ((route: RouteConfig, handler: Handler<AppEnv>, hook?: unknown) => {
    const schema = (route.request?.body?.content?.['application/json'] as { schema?: unknown } | undefined)?.schema;
    if (!(schema instanceof z.ZodType)) return register(route, handler, hook as never);
    if (hook !== undefined) throw new Error(`${route.operationId}: a route with a JSON body takes the default hook`);
    const { middleware: _middleware, hide, ...described } = route;
    if (!hide) app.openAPIRegistry.registerPath(described);
    const { body: _body, ...request } = route.request!;
    const validated: Handler<AppEnv> = async (c, next) => {
      const result = await parseBody(schema, c.get('body')?.value ?? {});
      validationHook({ ...result, target: 'json' } as Parameters<typeof validationHook>[0], c);
      c.req.addValidatedData('json', result.data as object);
      return handler(c, next);
    };
    return register({ ...route, hide: true, request }, validated);
  }) as typeof app.openapi;
  return app;
}

/**
 * A body parsed synchronously: no body schema has an asynchronous check, and a synchronous parse spares the
 * promise per check. A schema that gains one is parsed asynchronously (zod refuses it synchronously).
 */
async function parseBody(schema: z.ZodType, value: unknown) {
  try {
    return schema.safeParse(value);
  } catch (error) {
    if (error instanceof z.core.$ZodAsyncError) return schema.safeParseAsync(value);
    throw error;
  }
}

/** An operation as the description names it (`POST /v1/payments/{payment_id}/cancel`). */
export type Operation = Readonly<{ method: string; path: string }>;

/**
 * The operation a request was routed to, as the description names it (`POST /v1/payments/{payment_id}/cancel`
 * is `{ method: 'POST', path: '/v1/payments/{payment_id}/cancel' }`); null when no route matched. Found once per
 * request (the input gate and the access log both ask).
 */
export function operationOf(c: Context<AppEnv>): Operation | null {
  let operation = c.get('operation');
  if (operation === undefined) {
    operation = routedOperation(c);
    c.set('operation', operation);
  }
  return operation;
}

/** Each route's operation, built once per route and isolate (Hono's routes are fixed once registered). */
const routeOperations = new Map<RouterRoute, Operation>();

function routedOperation(c: Context): Operation | null {
  // Middleware registered with `use` matches every method (`ALL`); the operation is the route of this method.
  const route = matchedRoutes(c).find((matched) => matched.method !== 'ALL');
  if (route === undefined) return null;
  const shared = onePathOperations.get(route);
  if (shared) return pickOperation(shared, c).operation;
  let operation = routeOperations.get(route);
  if (operation === undefined) {
    operation = { method: route.method, path: describedPath(route.path) };
    routeOperations.set(route, operation);
  }
  return operation;
}

/** A Hono path (`/v1/payments/:payment_id`) as the description writes it (`/v1/payments/{payment_id}`). */
const describedPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

export type AppOpenAPI = ReturnType<typeof createRouter>;

export type AppRouteHandler<R extends RouteConfig> = RouteHandler<R, AppEnv>;

/** Path identifiers are opaque; anything unknown, malformed or foreign is answered as not found. */
export const opaqueId = (name: string, example: string, description: string) =>
  z
    .string()
    .min(1)
    .max(128)
    .openapi({ param: { name, in: 'path' }, example, description });

/** One of the operations sharing a run-time route (`registerOnOnePath`). */
interface OnePathOperation {
  operation: Operation;
  /** Where its path has a fixed segment and the shared route a parameter: the segment's index and text. */
  fixed: { index: number; segment: string }[];
  /** Its handlers as Hono runs them: its middleware, its validators, its handler. */
  handlers: Handler<AppEnv>[];
}

/** By the shared route. */
const onePathOperations = new Map<RouterRoute, OnePathOperation[]>();

/**
 * Registers operations whose paths differ only where the last has a parameter and the others a fixed segment
 * (`POST /v1/test-helpers/payments/{payment_id}/dispute` and `.../{payment_id}/{action}`), which one regular
 * expression cannot route apart (createRouter). Each is described as declared; at run time one route of the last,
 * most general path hands a request to the first operation whose fixed segments its path has, and runs that
 * operation's own middleware, validation and handler. Each `register` declares one operation on the router given.
 */
export function registerOnOnePath(app: AppOpenAPI, registrations: ((router: AppOpenAPI) => void)[]): void {
  const declared = registrations.map((register) => {
    const router = createRouter();
    register(router);
    const definitions = router.openAPIRegistry.definitions.filter((definition) => definition.type === 'route');
    const [first] = router.routes;
    if (
      definitions.length !== 1 ||
      first === undefined ||
      router.routes.some((route) => route.path !== first.path || route.method !== first.method)
    ) {
      throw new Error('registerOnOnePath: each registration declares exactly one operation');
    }
    const { method, path } = first;
    for (const definition of definitions) app.openAPIRegistry.registerPath(definition.route);
    return { method, path, handlers: router.routes.map((route) => route.handler as Handler<AppEnv>) };
  });
  const general = declared.at(-1)!;
  const generalSegments = general.path.split('/');
  const operations = declared.map(({ method, path, handlers }): OnePathOperation => {
    const segments = path.split('/');
    const fixed = segments.flatMap((segment, index) =>
      segment === generalSegments[index] ? [] : [{ index, segment }],
    );
    if (
      method !== general.method ||
      segments.length !== generalSegments.length ||
      fixed.some(({ index, segment }) => segment.startsWith(':') || !generalSegments[index]!.startsWith(':'))
    ) {
      throw new Error(
        `registerOnOnePath: ${method} ${path} is not ${general.method} ${general.path} with fixed segments`,
      );
    }
    return { operation: { method, path: describedPath(path) }, fixed, handlers };
  });
  // The request's operation was picked once, by its path (operationOf, kept in the context for the input gate).
  const run: MiddlewareHandler<AppEnv> = (c, next) => {
    const picked = operationOf(c);
    return runHandlers(operations.find(({ operation }) => operation === picked)!.handlers, c, next);
  };
  app.on(general.method, general.path, run);
  onePathOperations.set(app.routes.at(-1)!, operations);
}

function pickOperation(operations: OnePathOperation[], c: Context): OnePathOperation {
  const segments = c.req.path.split('/');
  return operations.find(({ fixed }) => fixed.every(({ index, segment }) => segments[index] === segment))!;
}

/** Runs handlers in order as Hono's own composition does; an error thrown goes up to the app's error handler. */
async function runHandlers(handlers: Handler<AppEnv>[], c: Context<AppEnv>, next: () => Promise<void>) {
  const step = async (index: number): Promise<void> => {
    const handler = handlers[index];
    if (handler === undefined) return next();
    const res = await handler(c, () => step(index + 1));
    if (res instanceof Response && !c.finalized) c.res = res;
  };
  await step(0);
}
