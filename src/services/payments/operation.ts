import type { Caller } from '../../domain/caller.ts';
import type { Environment } from '../../domain/environment.ts';

/**
 * What an idempotent operation is given. An operation validates first, writes the resource it creates
 * (payment, refund reservation, cancellation claim) marked with `attempt`, calls `started`, then calls the
 * processor. Failures thrown before `started` are not kept for the key (nothing happened); non-retryable
 * failures after it are the key's result; retryable ones (processor timeout or unavailable) are not.
 * A retry with the same key and body finds its own resource by `attempt.key` in D1 and resumes it, so
 * nothing depends on the idempotency object having stored anything before its final answer
 * (docs/idempotency.md, "Crashes").
 */
export interface OperationContext {
  caller: Caller;
  environment: Environment;
  /** `key`: the idempotency object's id (credential, operation, Idempotency-Key); `fingerprint`: the request's. */
  attempt: { key: string; fingerprint: string };
  /** The operation wrote its resource: from now on a final failure is the key's answer. */
  started: () => void;
}

export interface OperationResult {
  status: number;
  body: unknown;
}

export const referenceScopeOf = (caller: Caller) =>
  caller.kind === 'api_key' ? `key:${caller.apiKeyId}` : `user:${caller.userId}`;

export const ownerScope = (ctx: OperationContext) => ({ ownerId: ctx.caller.ownerId, environment: ctx.environment });
