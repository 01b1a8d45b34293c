import type { Context, MiddlewareHandler } from 'hono';
import { and, eq } from 'drizzle-orm';
import type { AppEnv, Environment } from '../env.ts';
import { createDb } from '../db/client.ts';
import { apiKeys, sessions, users } from '../db/schema/index.ts';
import { verifyAccessToken } from '../domain/access-tokens.ts';
import { hashApiKeySecret, looksLikeApiKey } from '../domain/api-key-secrets.ts';
import type { Role, Scope } from '../domain/scopes.ts';
import { ApiError } from '../lib/errors.ts';
import { timingSafeEqual, utf8 } from '../lib/encoding.ts';

/**
 * Who is calling, resolved once per request. `ownerId` is the merchant whose data the call may touch;
 * for a user token it is the user, for an API key the key's owner. The environment is the deployment's.
 */
export type AuthContext =
  | { kind: 'user'; ownerId: string; userId: string; sessionId: string; role: Role; scopes: Scope[]; environment: Environment }
  | { kind: 'api_key'; ownerId: string; apiKeyId: string; role: null; scopes: Scope[]; environment: Environment };

export interface AuthRequirement {
  /** `user`: management routes (JWT only). `any`: business routes (API key or JWT). */
  accept: 'user' | 'any';
  scope?: Scope;
  role?: 'admin';
}

/** Refresh `last_used_at` at most once a minute per key, off the response path. */
const LAST_USED_RESOLUTION_MS = 60_000;

export function requireAuth(requirement: AuthRequirement): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const token = bearerToken(c.req.header('authorization'));
    if (!token) throw new ApiError('unauthorized', 'Send a credential as `Authorization: Bearer <credential>`.');
    const auth = token.startsWith('sk_') ? await authenticateApiKey(c, token) : await authenticateUser(c, token);
    if (!auth) throw new ApiError('unauthorized');
    if (requirement.accept === 'user' && auth.kind !== 'user') {
      throw new ApiError('unauthorized', 'This route needs a user access token, not an API key.');
    }
    if (requirement.role === 'admin' && auth.role !== 'admin') throw new ApiError('insufficient_role');
    if (requirement.scope && !auth.scopes.includes(requirement.scope)) {
      throw new ApiError('insufficient_scope', `This operation needs the scope \`${requirement.scope}\`.`, { details: { required_scope: requirement.scope } });
    }
    c.set('auth', auth);
    await next();
  };
}

export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer[ ]+([\x21-\x7e]{1,4096})$/i.exec(header.trim());
  return match ? match[1]! : null;
}

async function authenticateApiKey(c: Context<AppEnv>, secret: string): Promise<AuthContext | null> {
  const environment = c.env.ENVIRONMENT;
  // A key of the other environment is refused before any lookup.
  if (!looksLikeApiKey(secret, environment)) return null;
  const hash = await hashApiKeySecret(c.env.API_KEY_PEPPER, secret);
  const db = createDb(c.env);
  const key = await db
    .select({ id: apiKeys.id, userId: apiKeys.userId, scopes: apiKeys.scopes, ownerScopes: users.scopes, secretHash: apiKeys.secretHash, lastUsedAt: apiKeys.lastUsedAt })
    .from(apiKeys)
    .innerJoin(users, eq(users.id, apiKeys.userId))
    .where(and(eq(apiKeys.secretHash, hash), eq(apiKeys.status, 'active'), eq(apiKeys.environment, environment)))
    .get();
  if (!key || !timingSafeEqual(utf8(key.secretHash), utf8(hash))) return null;

  const now = Date.now();
  if (key.lastUsedAt === null || now - key.lastUsedAt >= LAST_USED_RESOLUTION_MS) {
    c.executionCtx.waitUntil(db.update(apiKeys).set({ lastUsedAt: now }).where(eq(apiKeys.id, key.id)).run());
  }
  // A key never holds more than its owner holds now: taking a scope from a user takes it from the
  // user's existing keys at once, as a demotion does for the user's access tokens.
  const scopes = key.scopes.filter((scope) => key.ownerScopes.includes(scope));
  return { kind: 'api_key', ownerId: key.userId, apiKeyId: key.id, role: null, scopes, environment };
}

async function authenticateUser(c: Context<AppEnv>, token: string): Promise<AuthContext | null> {
  const environment = c.env.ENVIRONMENT;
  const claims = await verifyAccessToken(c.env.JWT_SIGNING_KEY, token, environment);
  if (!claims) return null;
  // Role and scopes come from the user row, not the token, so a demotion takes effect at once; a
  // revoked session (logout, refresh-token reuse) ends its access tokens too.
  const row = await createDb(c.env)
    .select({ id: users.id, role: users.role, scopes: users.scopes, revokedAt: sessions.revokedAt })
    .from(users)
    .innerJoin(sessions, and(eq(sessions.id, claims.sid), eq(sessions.userId, users.id)))
    .where(eq(users.id, claims.sub))
    .get();
  if (!row || row.revokedAt !== null) return null;
  return { kind: 'user', ownerId: row.id, userId: row.id, sessionId: claims.sid, role: row.role, scopes: row.scopes, environment };
}
