import { OpenAPIHono, z, type Hook, type RouteConfig, type RouteHandler } from '@hono/zod-openapi';
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
      details: z.record(z.string(), z.unknown()),
    }),
  })
  .openapi('Error');

/** A count or position: 0 to 2^31 - 1 (OpenAPI `int32`). */
const PageInt = z.number().int().min(0).max(2_147_483_647).openapi({ format: 'int32' });

export const PaginationSchema = z
  .object({ limit: PageInt.min(1).max(100), offset: PageInt, total: PageInt })
  .openapi('Pagination');

export const PaginationQuery = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(100)
    .default(50)
    .openapi({ description: 'Page size, 1 to 100.', example: 50, format: 'int32' }),
  offset: z.coerce
    .number()
    .int()
    .min(0)
    .max(2_147_483_647)
    .default(0)
    .openapi({ description: 'Items to skip.', example: 0, format: 'int32' }),
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
 * Pagination plus filters. Unknown parameters are refused (`400 invalid_request` naming them), so a
 * misspelt filter never answers with the unfiltered list.
 */
export const filteredListQuery = <S extends z.ZodRawShape>(filters: S) =>
  z.strictObject({ ...PaginationQuery.shape, ...filters });

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

/** `details` of the examples, where a code carries some. */
const EXAMPLE_DETAILS: Partial<Record<ErrorCode, Record<string, unknown>>> = {
  invalid_request: { fields: [{ field: 'amount.value', issue: 'Invalid decimal amount' }] },
  external_reference_conflict: { payment_id: 'pay_3kqz7w1v0c9m2x8bq4n6' },
  webhook_endpoint_limit_reached: { limit: 16 },
};

function exampleError(code: ErrorCode) {
  return errorEnvelope(
    { code, message: ERROR_CODES[code].message, details: EXAMPLE_DETAILS[code] ?? {} },
    'req_3kqz7w1v0c9m2x8b',
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

export function createRouter() {
  return new OpenAPIHono<AppEnv>({ strict: true, defaultHook: validationHook });
}

export type AppOpenAPI = ReturnType<typeof createRouter>;

export type AppRouteHandler<R extends RouteConfig> = RouteHandler<R, AppEnv>;

/** Path identifiers are opaque; anything unknown, malformed or foreign is answered as not found. */
export const opaqueId = (name: string, example: string) =>
  z
    .string()
    .min(1)
    .max(128)
    .openapi({ param: { name, in: 'path' }, example });
