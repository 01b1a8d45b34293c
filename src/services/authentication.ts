import { and, eq } from 'drizzle-orm';
import { apiKeys, sessions, users } from '../db/schema/index.ts';
import type { Deps } from '../deps.ts';
import { verifyAccessToken } from '../domain/access-tokens.ts';
import { hashApiKeySecret, looksLikeApiKey } from '../domain/api-key-secrets.ts';
import type { AuthContext } from '../domain/caller.ts';
import type { Scope } from '../domain/scopes.ts';
import { IsolateCache } from '../lib/isolate-cache.ts';

/** Refresh `last_used_at` at most once a minute per key, off the response path. */
const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * How long an API key read from D1 is trusted by the isolate that read it. A revocation, a scope change or
 * a demotion of its owner made through another isolate takes effect within this time (docs/conventions.md,
 * "Authentication and how fast changes apply"); made through this isolate, at once (`changed`). Most requests of a busy key
 * then authenticate without a D1 round trip.
 */
export const API_KEY_CACHE_TTL_MS = 10_000;

interface CachedApiKey {
  apiKeyId: string;
  ownerId: string;
  /** Already narrowed to what the owner holds. */
  scopes: Scope[];
  lastUsedAt: number | null;
}

/** Keyed by environment and the key's peppered hash: the secret itself is never held. */
const apiKeysByHash = new IsolateCache<CachedApiKey>(API_KEY_CACHE_TTL_MS, 1_000, (key) => [
  `api_key:${key.apiKeyId}`,
  `owner:${key.ownerId}`,
]);

/**
 * The active key of this environment whose peppered hash matches, or null. The key is found by its hash
 * (a unique index): equality of the hash is the lookup itself, so it is not compared again.
 * `background` takes the `last_used_at` write, which must not delay the answer.
 */
export async function authenticateApiKey(
  deps: Deps,
  secret: string,
  background: (work: Promise<unknown>) => void,
): Promise<AuthContext | null> {
  const { environment } = deps;
  // A key of the other environment is refused before any lookup.
  if (!looksLikeApiKey(secret, environment)) return null;
  const hash = await hashApiKeySecret(deps.apiKeyPepper, secret);
  const cacheKey = `${environment}:${hash}`;
  const now = Date.now();
  const key = await apiKeysByHash.read(
    cacheKey,
    async () => {
      const row = await deps.control
        .select({
          id: apiKeys.id,
          userId: apiKeys.userId,
          scopes: apiKeys.scopes,
          ownerScopes: users.scopes,
          lastUsedAt: apiKeys.lastUsedAt,
        })
        .from(apiKeys)
        .innerJoin(users, eq(users.id, apiKeys.userId))
        .where(and(eq(apiKeys.secretHash, hash), eq(apiKeys.status, 'active'), eq(apiKeys.environment, environment)))
        .get();
      // A key never holds more than its owner holds now: taking a scope from a user takes it from the
      // user's existing keys, as a demotion does for the user's access tokens.
      return (
        row && {
          apiKeyId: row.id,
          ownerId: row.userId,
          scopes: row.scopes.filter((scope) => row.ownerScopes.includes(scope)),
          lastUsedAt: row.lastUsedAt,
        }
      );
    },
    now,
  );
  if (!key) return null;
  if (key.lastUsedAt === null || now - key.lastUsedAt >= LAST_USED_RESOLUTION_MS) {
    key.lastUsedAt = now;
    background(deps.control.update(apiKeys).set({ lastUsedAt: now }).where(eq(apiKeys.id, key.apiKeyId)).run());
  }
  return {
    kind: 'api_key',
    ownerId: key.ownerId,
    apiKeyId: key.apiKeyId,
    role: null,
    scopes: [...key.scopes],
    environment,
  };
}

/** The user of a valid access token whose session is still open, or null. */
export async function authenticateUser(deps: Deps, token: string): Promise<AuthContext | null> {
  const { control: db, environment } = deps;
  const claims = await verifyAccessToken(deps.jwtSigningKey, token, environment);
  if (!claims) return null;
  // Role and scopes come from the user row, not the token, so a demotion takes effect at once; a
  // revoked session (logout, refresh-token reuse) ends its access tokens too.
  const row = await db
    .select({ id: users.id, role: users.role, scopes: users.scopes, revokedAt: sessions.revokedAt })
    .from(users)
    .innerJoin(sessions, and(eq(sessions.id, claims.sid), eq(sessions.userId, users.id)))
    .where(eq(users.id, claims.sub))
    .get();
  if (!row || row.revokedAt !== null) return null;
  return {
    kind: 'user',
    ownerId: row.id,
    userId: row.id,
    sessionId: claims.sid,
    role: row.role,
    scopes: row.scopes,
    environment,
  };
}
