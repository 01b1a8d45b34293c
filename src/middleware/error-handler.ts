import type { Context, ErrorHandler, NotFoundHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { AppEnv } from '../lib/openapi.ts';
import { ApiError, invalidRequest } from '../lib/errors.ts';
import { newRequestId } from '../lib/ids.ts';
import { log } from '../lib/log.ts';

/** Every error leaves as the envelope; anything unexpected becomes `internal_error` with no internals. */
export const handleError: ErrorHandler<AppEnv> = (err, c) => {
  const apiError = toApiError(err);
  if (apiError.code === 'internal_error') {
    log('error', 'unhandled_error', {
      request_id: requestIdOf(c),
      error_name: err.name,
      error_message: err.message,
      path: c.req.path,
    });
  }
  return respond(c, apiError);
};

export const handleNotFound: NotFoundHandler<AppEnv> = (c) => respond(c, new ApiError('not_found'));

function respond(c: Context<AppEnv>, error: ApiError) {
  c.set('errorCode', error.code);
  for (const [name, value] of Object.entries(error.headers)) c.header(name, value);
  return c.json(error.toBody(requestIdOf(c)), error.status as 400);
}

function requestIdOf(c: Context<AppEnv>): string {
  let id = c.get('requestId');
  if (!id) {
    id = newRequestId();
    c.set('requestId', id);
  }
  return id;
}

function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof HTTPException) {
    if (err.status === 413) return invalidRequest('The body is too large.', [], 413);
    if (err.status === 415) return invalidRequest('Content-Type must be application/json.', [], 415);
    if (err.status === 400) return invalidRequest('The body is not valid JSON.');
  }
  return new ApiError('internal_error');
}
