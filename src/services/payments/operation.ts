import type { Caller } from '../../domain/caller.ts';
import type { Environment } from '../../domain/environment.ts';

/**
 * What an idempotent operation is given. An operation validates first, then calls `remember` with the
 * id of the resource it creates (before calling the processor), then calls the processor. Failures
 * thrown before `remember` are not kept for the key (nothing happened); non-retryable failures after it
 * are the key's result; retryable ones (processor timeout or unavailable) are not, so a retry with the
 * same key resumes the same attempt through `resumeId`.
 */
export interface OperationContext {
  caller: Caller;
  environment: Environment;
  resumeId: string | null;
  remember: (resourceId: string) => Promise<void>;
}

export interface OperationResult {
  status: number;
  body: unknown;
}

export const referenceScopeOf = (caller: Caller) => (caller.kind === 'api_key' ? `key:${caller.apiKeyId}` : `user:${caller.userId}`);

export const ownerScope = (ctx: OperationContext) => ({ ownerId: ctx.caller.ownerId, environment: ctx.environment });
