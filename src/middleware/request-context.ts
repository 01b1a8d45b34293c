import type { MiddlewareHandler } from 'hono';
import { createDeps } from '../deps.ts';
import { READ_BOOKMARK_HEADER } from '../http/headers.ts';
import { invalidRequest } from '../lib/errors.ts';
import { newRequestId } from '../lib/ids.ts';
import type { AppEnv } from '../lib/openapi.ts';
import { handleError } from './error-handler.ts';

/** D1 bookmarks are opaque; ours are refused only when they could not be one (and never echoed). */
const BOOKMARK = /^[A-Za-z0-9._:-]{1,256}$/;

/**
 * Gives every request its `req_` id and its dependencies (deps.ts, built once here), and sets
 * `X-Request-Id` on every response, errors included (onError runs inside `next()`). API responses are
 * never cached and never sniffed.
 *
 * API reads go through a D1 session (read replication): anchored at the bookmark the client sends in
 * `X-Read-Bookmark` (from a write's or an earlier read's answer), so a replica that has caught up to it
 * may serve them; without one, at the primary, so a client that just wrote always reads its own write.
 * The answer carries the session's bookmark.
 */
export const requestContext: MiddlewareHandler<AppEnv> = async (c, next) => {
  const requestId = newRequestId();
  c.set('requestId', requestId);
  const reads = (c.req.method === 'GET' || c.req.method === 'HEAD') && c.req.path.startsWith('/v1/');
  const bookmark = c.req.header(READ_BOOKMARK_HEADER);
  const badBookmark = bookmark !== undefined && !BOOKMARK.test(bookmark);
  c.set('deps', createDeps(c.env, reads && !badBookmark ? { d1Session: bookmark ?? 'first-primary' } : {}));
  if (badBookmark) {
    c.res = await handleError(
      invalidRequest(`Invalid ${READ_BOOKMARK_HEADER}.`, [
        { field: READ_BOOKMARK_HEADER, issue: 'a bookmark from an earlier answer of this API' },
      ]),
      c,
    );
  } else {
    await next();
  }
  const after = c.get('deps').d1Session?.getBookmark();
  if (after) trySetHeader(c.res, READ_BOOKMARK_HEADER, after);
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
