import type { MiddlewareHandler } from 'hono';
import { operationOf, type AppEnv } from '../lib/openapi.ts';
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
    route: operationOf(c)?.path ?? null,
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
