import type { Context, MiddlewareHandler } from 'hono';
import type { AppEnv } from '../env.ts';
import { idempotencyScope, isValidIdempotencyKey, requestFingerprint, type IdempotentOperation } from '../domain/idempotency.ts';
import { REQUEST_ID_PLACEHOLDER, type IdempotentCommand } from '../durable-objects/idempotency-store.ts';
import { ApiError, invalidRequest } from '../lib/errors.ts';
import type { BusinessCaller } from '../services/payments/operation.ts';

/** Refuses a missing or malformed `Idempotency-Key` before anything else about the request is judged. */
export const requireIdempotencyKey: MiddlewareHandler<AppEnv> = async (c, next) => {
  const key = c.req.header('idempotency-key');
  if (key === undefined || key === '') throw new ApiError('idempotency_key_required');
  if (!isValidIdempotencyKey(key)) {
    throw invalidRequest('Invalid Idempotency-Key.', [{ field: 'Idempotency-Key', issue: '1 to 255 printable ASCII characters' }]);
  }
  await next();
};

export function businessCaller(c: Context<AppEnv>): BusinessCaller {
  const auth = c.get('auth');
  return auth.kind === 'api_key'
    ? { kind: 'api_key', apiKeyId: auth.apiKeyId, ownerId: auth.ownerId }
    : { kind: 'user', userId: auth.userId, ownerId: auth.ownerId };
}

/**
 * Runs `command` through the idempotency object of (credential, operation, key) and answers with what it
 * returns: a stored answer is replayed byte for byte (`Idempotent-Replayed: true`); error bodies get
 * this request's id, since every response's `request_id` equals its own `X-Request-Id`.
 */
export async function runIdempotent(c: Context<AppEnv>, operation: IdempotentOperation, command: IdempotentCommand, body: unknown): Promise<Response> {
  const key = c.req.header('idempotency-key')!;
  const caller = businessCaller(c);
  const credentialId = caller.kind === 'api_key' ? caller.apiKeyId : `user:${caller.userId}`;
  const fingerprint = await requestFingerprint(c.req.method, c.req.path, body);
  const stub = c.env.IDEMPOTENCY.get(c.env.IDEMPOTENCY.idFromName(idempotencyScope(credentialId, operation, key)));
  const answer = await stub.execute({ fingerprint, caller, command });
  const text = answer.status >= 400 ? answer.body.replace(REQUEST_ID_PLACEHOLDER, c.get('requestId')) : answer.body;
  if (answer.status >= 400) c.set('errorCode', errorCodeOf(text));
  const headers = new Headers({ 'Content-Type': 'application/json', ...(answer.headers ?? {}) });
  if (answer.replayed) headers.set('Idempotent-Replayed', 'true');
  return new Response(text, { status: answer.status, headers });
}

/** The code of an error envelope the operation answered (our own text), for the access log. */
function errorCodeOf(text: string): string | undefined {
  try {
    return (JSON.parse(text) as { error?: { code?: string } }).error?.code;
  } catch {
    return undefined;
  }
}
