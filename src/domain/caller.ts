import type { Environment } from './environment.ts';
import type { Role, Scope } from './scopes.ts';

/**
 * Who is calling, resolved once per request (middleware/auth.ts). `ownerId` is the merchant whose data
 * the call may touch; for a user token it is the user, for an API key the key's owner. The environment
 * is the deployment's.
 */
export type AuthContext =
  | {
      kind: 'user';
      ownerId: string;
      userId: string;
      sessionId: string;
      role: Role;
      scopes: Scope[];
      environment: Environment;
    }
  | { kind: 'api_key'; ownerId: string; apiKeyId: string; role: null; scopes: Scope[]; environment: Environment };

/**
 * Who runs a business operation or read (payments, refunds, payment methods): an API key or a user, on
 * behalf of an owner. Plain data, so it can cross into the idempotency Durable Object.
 */
export type Caller =
  | { kind: 'api_key'; apiKeyId: string; ownerId: string }
  | { kind: 'user'; userId: string; ownerId: string };

export function callerOf(auth: AuthContext): Caller {
  return auth.kind === 'api_key'
    ? { kind: 'api_key', apiKeyId: auth.apiKeyId, ownerId: auth.ownerId }
    : { kind: 'user', userId: auth.userId, ownerId: auth.ownerId };
}

/**
 * The data a caller may touch: one owner's, in this deployment's environment. Every owner-scoped read and
 * write takes it (services/payments, services/webhooks...).
 */
export interface OwnerScope {
  ownerId: string;
  environment: Environment;
}

export const ownerScopeOf = (caller: { ownerId: string }, environment: Environment): OwnerScope => ({
  ownerId: caller.ownerId,
  environment,
});

/**
 * One name per credential: an API key's id (`key_...`), or `user:` and the user's id for a user token. It
 * scopes idempotency keys (one Durable Object per caller, operation and key) and external references
 * (unique per caller: `payments.reference_scope`).
 */
export const callerKey = (caller: Caller): string =>
  caller.kind === 'api_key' ? caller.apiKeyId : `user:${caller.userId}`;
