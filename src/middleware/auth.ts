import type { MiddlewareHandler } from 'hono';
import type { Scope } from '../domain/scopes.ts';
import { ServiceError } from '../lib/errors.ts';
import type { AppEnv } from '../lib/openapi.ts';
import { authenticateApiKey, authenticateUser } from '../services/authentication.ts';

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
    if (requirement.role === 'admin' && auth.role !== 'admin') throw new ServiceError('insufficient_role');
    if (requirement.scope && !auth.scopes.includes(requirement.scope)) {
      throw new ServiceError('insufficient_scope', `This operation needs the scope \`${requirement.scope}\`.`, {
        details: { required_scope: requirement.scope },
      });
    }
    c.set('auth', auth);
    await next();
  };
}

function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer[ ]+([\x21-\x7e]{1,4096})$/i.exec(header.trim());
  return match ? match[1]! : null;
}
