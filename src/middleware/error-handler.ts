import type { Context, ErrorHandler, NotFoundHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { AppEnv } from '../lib/openapi.ts';
import { ServiceError, invalidRequest } from '../lib/errors.ts';
import { EdgeError, errorEnvelope, errorHeaders, statusOf } from '../http/errors.ts';
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

export const handleNotFound: NotFoundHandler<AppEnv> = (c) => respond(c, new ServiceError('not_found'));

function respond(c: Context<AppEnv>, error: ServiceError) {
  c.set('errorCode', error.code);
  for (const [name, value] of Object.entries(errorHeaders(error))) c.header(name, value);
  return c.json(errorEnvelope(error, requestIdOf(c)), statusOf(error) as 400);
}

function requestIdOf(c: Context<AppEnv>): string {
  let id = c.get('requestId');
  if (!id) {
    id = newRequestId();
    c.set('requestId', id);
  }
  return id;
}

function toApiError(err: unknown): ServiceError {
  if (err instanceof ServiceError) return err;
  if (err instanceof HTTPException) {
    if (err.status === 413) return new EdgeError(413, 'The body is too large.');
    if (err.status === 415) return new EdgeError(415, 'Content-Type must be application/json.');
    if (err.status === 400) return invalidRequest('The body is not valid JSON.');
  }
  return new ServiceError('internal_error');
}
