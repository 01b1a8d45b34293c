import type { MiddlewareHandler } from 'hono';
import { createDeps } from '../deps.ts';
import { newRequestId } from '../lib/ids.ts';
import type { AppEnv } from '../lib/openapi.ts';

/**
 * Gives every request its `req_` id and its dependencies (deps.ts, built once here), and sets
 * `X-Request-Id` on every response, errors included (onError runs inside `next()`). API responses are
 * never cached and never sniffed.
 */
export const requestContext: MiddlewareHandler<AppEnv> = async (c, next) => {
  const requestId = newRequestId();
  c.set('requestId', requestId);
  c.set('deps', createDeps(c.env));
  await next();
  // Responses passed through from the assets binding have immutable headers; copy them once.
  if (!trySetHeader(c.res, 'X-Request-Id', requestId)) {
    c.res = new Response(c.res.body, c.res);
    c.res.headers.set('X-Request-Id', requestId);
  }
  if (c.req.path.startsWith('/v1/')) {
    c.res.headers.set('Cache-Control', 'no-store');
    c.res.headers.set('X-Content-Type-Options', 'nosniff');
  }
};

function trySetHeader(res: Response, name: string, value: string): boolean {
  try {
    res.headers.set(name, value);
    return true;
  } catch {
    return false;
  }
}
