import type { MiddlewareHandler } from 'hono';
import { encodeBookmark } from '../db/shards.ts';
import { createDeps } from '../deps.ts';
import { READ_BOOKMARK_HEADER } from '../http/headers.ts';
import { invalidRequest } from '../lib/errors.ts';
import { newRequestId } from '../lib/ids.ts';
import type { AppEnv } from '../lib/openapi.ts';
import { handleError } from './error-handler.ts';

/** D1 bookmarks are opaque; ours are refused only when they could not be one (and never echoed). */
const BOOKMARK = /^[A-Za-z0-9._:-]{1,256}$/;

/**
 * What a `503` asks a client to wait before retrying with the same key and body: a processor that just
 * refused work is rarely back within a second, and a checkout should not wait much longer.
 */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/** API reads: they go through a D1 session and take and answer `X-Read-Bookmark` (docs.description.ts too). */
export const isRead = (method: string, path: string) =>
  (method.toUpperCase() === 'GET' || method.toUpperCase() === 'HEAD') && path.startsWith('/v1/');

/**
 * Gives every request its `req_` id and its dependencies (deps.ts, built once here; the owner's shard completes
 * them after authentication, middleware/auth.ts), and sets
 * `X-Request-Id` on every response, errors included (onError runs inside `next()`). API responses are
 * never cached and never sniffed.
 *
 * API reads go through a D1 session (read replication): anchored at the bookmark the client sends in
 * `X-Read-Bookmark` (from a write's or an earlier read's answer), so a replica that has caught up to it
 * may serve them; without one, at the primary, so a client that just wrote always reads its own write.
 * The answer carries the session's bookmark. An idempotent write's answer, fresh or replayed, carries the
 * bookmark of the writes it made (the idempotency object's session).
 */
export const requestContext: MiddlewareHandler<AppEnv> = async (c, next) => {
  const requestId = newRequestId();
  c.set('requestId', requestId);
  const reads = isRead(c.req.method, c.req.path);
  const bookmark = c.req.header(READ_BOOKMARK_HEADER);
  const badBookmark = bookmark !== undefined && !BOOKMARK.test(bookmark);
  // The session itself opens on the owner's shard once the owner is known (middleware/auth.ts, deps.withShard).
  c.set('deps', createDeps(c.env, reads && !badBookmark ? { readSession: bookmark ?? null } : {}));
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
  const deps = c.get('deps');
  const session = deps.d1Session?.getBookmark();
  if (session) trySetHeader(c.res, READ_BOOKMARK_HEADER, encodeBookmark(deps.shard, session));
  if (c.res.status === 503 && !c.res.headers.has('Retry-After'))
    trySetHeader(c.res, 'Retry-After', String(UNAVAILABLE_RETRY_AFTER_SECONDS));
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
