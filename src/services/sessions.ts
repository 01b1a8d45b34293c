import { and, eq, isNull } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { refreshTokens, sessions, type UserRow } from '../db/schema/index.ts';
import type { Env } from '../env.ts';
import { ACCESS_TOKEN_TTL_SECONDS, signAccessToken } from '../domain/access-tokens.ts';
import { ApiError } from '../lib/errors.ts';
import { bytesToBase64Url, sha256Hex } from '../lib/encoding.ts';
import { newId } from '../lib/ids.ts';
import { log } from '../lib/log.ts';
import { toUserResource } from './users.ts';

/**
 * Sessions and their refresh tokens. A refresh token is opaque (256 random bits), stored only as its
 * SHA-256, valid 30 days and exchangeable once: the exchange and the minting of its successor happen in
 * one D1 batch (one transaction), conditioned on the token being unused, so concurrent exchanges of the
 * same token mint at most one successor. Presenting a token that was already exchanged is treated as
 * theft: the whole session (every token of the chain, and its access tokens) is revoked.
 */
export const REFRESH_TOKEN_TTL_MS = 30 * 24 * 60 * 60 * 1000;

const newRefreshToken = () => `rt_${bytesToBase64Url(crypto.getRandomValues(new Uint8Array(32)))}`;

export async function issueSessionTokens(env: Env, db: Db, user: UserRow) {
  const now = Date.now();
  const sessionId = newId('ses');
  const refreshToken = newRefreshToken();
  await db.batch([
    db.insert(sessions).values({ id: sessionId, userId: user.id, createdAt: now }),
    db.insert(refreshTokens).values({
      id: newId('rtk'),
      sessionId,
      tokenHash: await sha256Hex(refreshToken),
      createdAt: now,
      expiresAt: now + REFRESH_TOKEN_TTL_MS,
    }),
  ]);
  return tokenResponse(env, user, sessionId, refreshToken, now);
}

async function tokenResponse(env: Env, user: UserRow, sessionId: string, refreshToken: string, now: number) {
  const accessToken = await signAccessToken(
    env.JWT_SIGNING_KEY,
    { sub: user.id, sid: sessionId, role: user.role, scopes: user.scopes, env: env.ENVIRONMENT },
    now,
  );
  return {
    access_token: accessToken,
    refresh_token: refreshToken,
    token_type: 'Bearer' as const,
    expires_in: ACCESS_TOKEN_TTL_SECONDS,
    user: toUserResource(user),
  };
}

export async function rotateRefreshToken(env: Env, db: Db, presented: string, loadUser: (id: string) => Promise<UserRow | undefined>) {
  const now = Date.now();
  const found = await db
    .select({ token: refreshTokens, session: sessions })
    .from(refreshTokens)
    .innerJoin(sessions, eq(sessions.id, refreshTokens.sessionId))
    .where(eq(refreshTokens.tokenHash, await sha256Hex(presented)))
    .get();
  if (!found || found.session.revokedAt !== null || found.token.expiresAt <= now) throw new ApiError('invalid_refresh_token');
  if (found.token.usedAt !== null) {
    await revokeSession(db, found.session.id, 'refresh_token_reuse');
    throw new ApiError('invalid_refresh_token');
  }

  const successorId = newId('rtk');
  const successor = newRefreshToken();
  const [, inserted] = await db.$client.batch([
    db.$client
      .prepare('UPDATE refresh_tokens SET used_at = ?1, replaced_by = ?2 WHERE id = ?3 AND used_at IS NULL')
      .bind(now, successorId, found.token.id),
    db.$client
      .prepare(
        `INSERT INTO refresh_tokens (id, session_id, token_hash, created_at, expires_at)
         SELECT ?1, ?2, ?3, ?4, ?5
         WHERE EXISTS (SELECT 1 FROM refresh_tokens WHERE id = ?6 AND replaced_by = ?1)
           AND EXISTS (SELECT 1 FROM sessions WHERE id = ?2 AND revoked_at IS NULL)`,
      )
      .bind(successorId, found.session.id, await sha256Hex(successor), now, now + REFRESH_TOKEN_TTL_MS, found.token.id),
  ]);
  if (!inserted || inserted.meta.changes !== 1) {
    // Another exchange of this same token won the race: that is a reuse too.
    await revokeSession(db, found.session.id, 'refresh_token_reuse');
    throw new ApiError('invalid_refresh_token');
  }

  const user = await loadUser(found.session.userId);
  if (!user) throw new ApiError('invalid_refresh_token');
  return tokenResponse(env, user, found.session.id, successor, now);
}

export async function revokeSession(db: Db, sessionId: string, reason: 'logout' | 'refresh_token_reuse') {
  const result = await db
    .update(sessions)
    .set({ revokedAt: Date.now(), revokedReason: reason })
    .where(and(eq(sessions.id, sessionId), isNull(sessions.revokedAt)))
    .run();
  if (reason === 'refresh_token_reuse' && result.meta.changes > 0) {
    log('warn', 'session_revoked', { session_id: sessionId, reason });
  }
}

/** The session a refresh token belongs to, whatever the token's state; for logout. */
export async function findSessionIdByRefreshToken(db: Db, presented: string): Promise<string | null> {
  const row = await db
    .select({ sessionId: refreshTokens.sessionId })
    .from(refreshTokens)
    .where(eq(refreshTokens.tokenHash, await sha256Hex(presented)))
    .get();
  return row?.sessionId ?? null;
}
