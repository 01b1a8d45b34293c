import type { MiddlewareHandler } from 'hono';
import { isValidIdempotencyKey } from '../domain/idempotency.ts';
import { ServiceError, invalidRequest } from '../lib/errors.ts';
import type { AppEnv } from '../lib/openapi.ts';

/**
 * Refuses a missing or malformed `Idempotency-Key` before anything else about the request is judged;
 * the operation itself runs through services/idempotency.ts.
 */
export const requireIdempotencyKey: MiddlewareHandler<AppEnv> = async (c, next) => {
  const key = c.req.header('idempotency-key');
  if (key === undefined || key === '') throw new ServiceError('idempotency_key_required');
  if (!isValidIdempotencyKey(key)) {
    throw invalidRequest('Invalid Idempotency-Key.', [
      { field: 'Idempotency-Key', issue: '1 to 255 printable ASCII characters' },
    ]);
  }
  await next();
};
