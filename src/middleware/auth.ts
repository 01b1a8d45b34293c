import type { MiddlewareHandler } from 'hono';
import type { Scope } from '../domain/scopes.ts';
import type { Env } from '../env.ts';
import { ServiceError } from '../lib/errors.ts';
import type { AppEnv } from '../lib/openapi.ts';
import { authenticateApiKey, authenticateUser } from '../services/authentication.ts';
import { ownerDeps } from '../services/shards/owner-deps.ts';

export interface AuthRequirement {
  /** `user`: management routes (JWT only). `any`: business routes (API key or JWT). */
  accept: 'user' | 'any';
  scope?: Scope;
  role?: 'admin';
}

/** Resolves the caller (`c.var.auth`, domain/caller.ts) and refuses it unless it meets `requirement`. */
export function requireAuth(requirement: AuthRequirement): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const token = bearerToken(c.req.header('authorization'));
    if (!token) throw new ServiceError('unauthorized', 'Send a credential as `Authorization: Bearer <credential>`.');
    const deps = c.get('deps');
    const auth = token.startsWith('sk_')
      ? await authenticateApiKey(deps, token, (work) => c.executionCtx.waitUntil(work))
      : await authenticateUser(deps, token);
    if (!auth) throw new ServiceError('unauthorized');
    if (requirement.accept === 'user' && auth.kind !== 'user') {
      throw new ServiceError('unauthorized', 'This route needs a user access token, not an API key.');
    }
    if (auth.kind === 'api_key') await limitApiKey(c.env, auth.apiKeyId);
    if (requirement.role === 'admin' && auth.role !== 'admin') throw new ServiceError('insufficient_role');
    if (requirement.scope && !auth.scopes.includes(requirement.scope)) {
      throw new ServiceError('insufficient_scope', `This operation needs the scope \`${requirement.scope}\`.`, {
        details: { required_scope: requirement.scope },
      });
    }
    c.set('auth', auth);
    // The request's dependencies on the owner's shard: the same object, its shard chosen (deps.ts, withShard).
    c.set('deps', await ownerDeps(deps, auth.ownerId, c.req.method));
    await next();
  };
}

/**
 * The `simple.period` of every deployment's `API_KEY_RATE_LIMIT` in wrangler.toml (test/middleware/auth-rate-limit
 * checks it): the binding cannot tell how long until its window lets the key through, and a period is the most.
 */
export const API_KEY_RATE_LIMIT_PERIOD_SECONDS = 10;

/**
 * Requests per API key (docs/limits.md), counted after authentication so that the key's id, not a secret someone
 * may be guessing, is the counter. The Workers Rate Limiting binding counts where the request lands and keeps its
 * counters in memory there: no D1 or Durable Object round trip on the request path.
 */
async function limitApiKey(env: Env, apiKeyId: string): Promise<void> {
  const { success } = await env.API_KEY_RATE_LIMIT.limit({ key: apiKeyId });
  if (success) return;
  const retryAfter = API_KEY_RATE_LIMIT_PERIOD_SECONDS;
  throw new ServiceError('rate_limited', 'Too many requests with this API key; retry after the indicated wait.', {
    retryAfterSeconds: retryAfter,
    details: { retry_after_seconds: retryAfter },
  });
}

function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer[ ]+([\x21-\x7e]{1,4096})$/i.exec(header.trim());
  return match ? match[1]! : null;
}
