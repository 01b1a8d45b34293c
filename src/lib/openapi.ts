import { OpenAPIHono, z, type Hook, type RouteConfig, type RouteHandler } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { RouterRoute } from 'hono/types';
import { matchedRoutes } from 'hono/route';
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
// No `example`: the explorer's "Try it out" fills each parameter with its example, and both cursors at once are a 400.
const CursorId = (description: string) => z.string().min(1).max(128).optional().openapi({ description });

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
 * The app's router: a stock `OpenAPIHono`. Each route validates its input with @hono/zod-openapi's validators, the JSON
 * body included, which reads the body the input gate already read (middleware/json-body.ts) from Hono's request.
 */
export function createRouter() {
  return new OpenAPIHono<AppEnv>({ strict: true, defaultHook: validationHook });
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
  let operation = routeOperations.get(route);
  if (operation === undefined) {
    operation = describedAs.get(`${route.method} ${route.path}`) ?? {
      method: route.method,
      path: describedPath(route.path),
    };
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

/** The operation of each route registered under a path other than the one described (`openapiPerValue`). */
const describedAs = new Map<string, Operation>();

/**
 * Registers `route` as one route per value of its enum path parameter `param`, and describes it once as declared. For
 * an operation with a parameter where another path of the same method has a fixed segment (`POST
 * .../{payment_id}/{action}` beside `POST .../{payment_id}/dispute`): Hono's `RegExpRouter` cannot hold both, and
 * Hono would route every request of the app with its trie router instead, at about a tenth of a payment read's CPU
 * (bench/RESULTS.md). Each value's route validates the parameter as that value, so the handler reads it as declared.
 */
export function openapiPerValue<R extends RouteConfig>(
  app: AppOpenAPI,
  route: R,
  param: string,
  handler: AppRouteHandler<R>,
): void {
  const { middleware: _middleware, hide: _hide, ...described } = route;
  app.openAPIRegistry.registerPath(described);
  const params = route.request?.params;
  const values = params instanceof z.ZodObject ? params.shape[param] : undefined;
  if (!(params instanceof z.ZodObject) || !(values instanceof z.ZodEnum)) {
    throw new Error(`${route.operationId}: {${param}} is not an enum parameter`);
  }
  const method = route.method.toUpperCase();
  for (const value of values.options as string[]) {
    const path = route.path.replace(`{${param}}`, value);
    const request = { ...route.request, params: params.extend({ [param]: z.literal(value).default(value) }) };
    app.openapi({ ...route, path, request, hide: true }, handler as never);
    describedAs.set(`${method} ${honoPath(path)}`, { method, path: route.path });
  }
}

/** A described path as Hono routes it, as @hono/zod-openapi writes it (`{payment_id}` is `:payment_id`). */
const honoPath = (path: string) => path.replaceAll(/\/{(.+?)}/g, '/:$1');
