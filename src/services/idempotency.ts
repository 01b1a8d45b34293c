import type { Deps } from '../deps.ts';
import type { Caller } from '../domain/caller.ts';
import { idempotencyScope, requestFingerprint, type IdempotentOperation } from '../domain/idempotency.ts';
import { REQUEST_ID_PLACEHOLDER, type IdempotentCommand } from '../durable-objects/idempotency-store.ts';

export interface IdempotentRequest {
  caller: Caller;
  operation: IdempotentOperation;
  /** The `Idempotency-Key` header, already checked (middleware/idempotency.ts). */
  key: string;
  method: string;
  path: string;
  /** The validated body the fingerprint covers (null for an operation without one). */
  body: unknown;
  command: IdempotentCommand;
  /** This request's id, put into a stored error body in place of the original request's. */
  requestId: string;
}

export interface IdempotentAnswer {
  status: number;
  text: string;
  headers: Headers;
  /** The error code of an error answer, for the access log. */
  errorCode?: string;
}

/**
 * Runs `command` through the idempotency object of (credential, operation, key) and answers with what it
 * returns: a stored answer is replayed byte for byte (`Idempotent-Replayed: true`); error bodies get
 * this request's id, since every response's `request_id` equals its own `X-Request-Id`.
 */
export async function runIdempotent(deps: Deps, request: IdempotentRequest): Promise<IdempotentAnswer> {
  const { caller } = request;
  const credentialId = caller.kind === 'api_key' ? caller.apiKeyId : `user:${caller.userId}`;
  const fingerprint = await requestFingerprint(request.method, request.path, request.body);
  const stores = deps.idempotency;
  const stub = stores.get(stores.idFromName(idempotencyScope(credentialId, request.operation, request.key)));
  const answer = await stub.execute({ fingerprint, caller, command: request.command });
  const failed = answer.status >= 400;
  const text = failed ? answer.body.replace(REQUEST_ID_PLACEHOLDER, request.requestId) : answer.body;
  const headers = new Headers({ 'Content-Type': 'application/json', ...(answer.headers ?? {}) });
  if (answer.replayed) headers.set('Idempotent-Replayed', 'true');
  return { status: answer.status, text, headers, ...(failed ? { errorCode: errorCodeOf(text) } : {}) };
}

/** The code of an error envelope the operation answered (our own text), for the access log. */
function errorCodeOf(text: string): string | undefined {
  try {
    return (JSON.parse(text) as { error?: { code?: string } }).error?.code;
  } catch {
    return undefined;
  }
}
