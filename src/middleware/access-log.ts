import type { Context, MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import type { AppEnv } from '../lib/openapi.ts';
import { log } from '../lib/log.ts';

/**
 * The access log: one structured line per request, written after the response, so that an operator
 * given a `req_` id and an environment finds what happened. It names the route pattern (never the raw
 * path with its ids, nor the query string, which may carry a merchant's references), the caller by ids
 * only (owner, API key or session: never a key, token or Authorization header), the status, the time
 * spent and the error code. Never a body.
 */
export const accessLog: MiddlewareHandler<AppEnv> = async (c, next) => {
  const started = Date.now();
  await next();
  const auth = c.get('auth');
  const status = c.res.status;
  log(status >= 500 ? 'error' : 'info', 'request', {
    request_id: c.get('requestId'),
    environment: c.get('deps').environment,
    method: c.req.method,
    route: routePattern(c),
    status,
    // Workers advance the clock only across I/O: this is the time spent waiting (D1, Durable Objects, processors).
    duration_ms: Date.now() - started,
    owner_id: auth?.ownerId ?? null,
    credential: auth?.kind ?? null,
    credential_id: auth ? (auth.kind === 'api_key' ? auth.apiKeyId : auth.sessionId) : null,
    error_code: status >= 400 ? (c.get('errorCode') ?? null) : null,
    idempotent_replayed: c.res.headers.get('Idempotent-Replayed') === 'true',
  });
};

/** Hono's route paths as the description writes them, converted once per route and isolate. */
const described = new Map<string, string>();

/** The matched operation's path as the description writes it (`/v1/payments/{payment_id}`); null when no route matched. */
function routePattern(c: Context<AppEnv>): string | null {
  // Middleware registered with `use` matches every method (`ALL`); the operation is the last route of this method.
  const routes = matchedRoutes(c);
  let path: string | undefined;
  for (const route of routes) if (route.method !== 'ALL') path = route.path;
  if (path === undefined) return null;
  let pattern = described.get(path);
  if (pattern === undefined) {
    pattern = path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    described.set(path, pattern);
  }
  return pattern;
}
