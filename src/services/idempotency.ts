import type { ShardName } from '../db/shards.ts';
import type { Deps } from '../deps.ts';
import { callerKey, type Caller } from '../domain/caller.ts';
import { idempotencyScope } from '../domain/idempotency.ts';
import type { ErrorOutcome } from '../lib/errors.ts';
import type { OperationInvocation } from './operations/registry.ts';

/** One request for a declared operation, from the route to the idempotency object that runs it. */
export interface OperationRequest {
  caller: Caller;
  /** The `Idempotency-Key`, already checked (middleware/idempotency.ts). */
  key: string;
  invocation: OperationInvocation;
  /**
   * With the body, what makes two requests under one key "the same" (domain/idempotency.ts
   * `requestFingerprint`): the method and path the operation was asked at.
   */
  target: { method: string; path: string };
  /** The caller's owner's shard, from the directory as the route read it (services/shards/owner-deps.ts). */
  shard: ShardName;
}

/**
 * A final answer as the idempotency object keeps it: the presented resource's JSON text (`accepted`: the
 * processor completes the change later, answered 202), or the error.
 */
export type StoredAnswer = { ok: true; body: string; accepted?: true } | { ok: false; error: ErrorOutcome };

export interface OperationAnswer {
  answer: StoredAnswer;
  /** True when the answer is the one stored for an earlier request with this key and body. */
  replayed: boolean;
  /** The D1 bookmark after the operation's writes (docs/read-replication.md). */
  bookmark?: string;
}

/**
 * Runs the operation through the idempotency object of (caller, operation, key), which runs it at most
 * once per key and body and replays its stored answer afterwards.
 */
export function runIdempotently(deps: Deps, request: OperationRequest): Promise<OperationAnswer> {
  const scope = idempotencyScope(callerKey(request.caller), request.invocation.operation, request.key);
  const stub = deps.idempotency.get(deps.idempotency.idFromName(scope));
  return stub.execute(request);
}
