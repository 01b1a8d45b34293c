import { and, eq, isNull, sql } from 'drizzle-orm';
import { insertRowIf } from '../db/conditional-insert.ts';
import { refreshTokens, sessions, type UserRow } from '../db/schema/index.ts';
import type { Deps } from '../deps.ts';
import { ACCESS_TOKEN_TTL_SECONDS, signAccessToken } from '../domain/access-tokens.ts';
import { ServiceError } from '../lib/errors.ts';
import { bytesToBase64Url, sha256Hex } from '../lib/encoding.ts';
import { newId } from '../lib/ids.ts';
import { log } from '../lib/log.ts';
import { loadUser, toUserResource } from './users.ts';

/**
 * Sessions and their refresh tokens. A refresh token is opaque (256 random bits), stored only as its
 * SHA-256, valid 30 days and exchangeable once: the exchange and the minting of its successor happen in
 * one D1 batch (one transaction), conditioned on the token being unused, so concurrent exchanges of the
 * same token mint at most one successor. Presenting a token that was already exchanged is treated as
 * theft: the whole session (every token of the chain, and its access tokens) is revoked.
 */
export const REFRESH_TOKEN_TTL_MS = 30 * 24 * 60 * 60 * 1000;

const newRefreshToken = () => `rt_${bytesToBase64Url(crypto.getRandomValues(new Uint8Array(32)))}`;

export async function issueSessionTokens(deps: Deps, user: UserRow) {
  const { control: db } = deps;
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
  return tokenResponse(deps, user, sessionId, refreshToken, now);
}

async function tokenResponse(deps: Deps, user: UserRow, sessionId: string, refreshToken: string, now: number) {
  const accessToken = await signAccessToken(
    deps.jwtSigningKey,
    { sub: user.id, sid: sessionId, role: user.role, scopes: user.scopes, env: deps.environment },
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

export async function rotateRefreshToken(deps: Deps, presented: string) {
  const { control: db } = deps;
  const now = Date.now();
  const found = await db
    .select({ token: refreshTokens, session: sessions })
    .from(refreshTokens)
    .innerJoin(sessions, eq(sessions.id, refreshTokens.sessionId))
    .where(eq(refreshTokens.tokenHash, await sha256Hex(presented)))
    .get();
  if (!found || found.session.revokedAt !== null || found.token.expiresAt <= now)
    throw new ServiceError('invalid_refresh_token');
  if (found.token.usedAt !== null) {
    await revokeSession(deps, found.session.id, 'refresh_token_reuse');
    throw new ServiceError('invalid_refresh_token');
  }

  const successorId = newId('rtk');
  const successor = newRefreshToken();
  // The successor exists only if this exchange marked the token used (it names the successor) and the
  // session is still open, both decided inside the batch.
  const [, inserted] = await db.batch([
    db
      .update(refreshTokens)
      .set({ usedAt: now, replacedBy: successorId })
      .where(and(eq(refreshTokens.id, found.token.id), isNull(refreshTokens.usedAt))),
    insertRowIf(
      db,
      refreshTokens,
      {
        id: successorId,
        sessionId: found.session.id,
        tokenHash: await sha256Hex(successor),
        createdAt: now,
        expiresAt: now + REFRESH_TOKEN_TTL_MS,
      },
      sql`exists (select 1 from ${refreshTokens} where ${refreshTokens.id} = ${found.token.id} and ${refreshTokens.replacedBy} = ${successorId})
        and exists (select 1 from ${sessions} where ${sessions.id} = ${found.session.id} and ${sessions.revokedAt} is null)`,
    ),
  ]);
  if ((inserted as D1Result).meta.changes !== 1) {
    // Another exchange of this same token won the race: that is a reuse too.
    await revokeSession(deps, found.session.id, 'refresh_token_reuse');
    throw new ServiceError('invalid_refresh_token');
  }

  const user = await loadUser(deps, found.session.userId);
  if (!user) throw new ServiceError('invalid_refresh_token');
  return tokenResponse(deps, user, found.session.id, successor, now);
}

export async function revokeSession(
  { control: db }: Deps,
  sessionId: string,
  reason: 'logout' | 'refresh_token_reuse',
) {
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
export async function loadSessionIdByRefreshToken({ control: db }: Deps, presented: string): Promise<string | null> {
  const row = await db
    .select({ sessionId: refreshTokens.sessionId })
    .from(refreshTokens)
    .where(eq(refreshTokens.tokenHash, await sha256Hex(presented)))
    .get();
  return row?.sessionId ?? null;
}
