import type { Context } from 'hono';
import { normalizeEmail } from '../../domain/accounts.ts';
import { DUMMY_PASSWORD_HASH, verifyPassword } from '../../domain/passwords.ts';
import { sha256Hex } from '../../lib/encoding.ts';
import { ServiceError } from '../../lib/errors.ts';
import type { AppEnv, AppRouteHandler } from '../../lib/openapi.ts';
import { requireAuth } from '../../middleware/auth.ts';
import { enforceRateLimit } from '../../services/rate-limit.ts';
import * as sessions from '../../services/sessions.ts';
import * as users from '../../services/users.ts';
import type * as routes from './auth.routes.ts';

function clientAddress(c: Context<AppEnv>): string {
  // Set by Cloudflare's edge on every request; a client cannot forge it there.
  return c.req.header('cf-connecting-ip') ?? 'unknown';
}

export const login: AppRouteHandler<typeof routes.login> = async (c) => {
  const deps = c.get('deps');
  const { email, password } = c.req.valid('json');
  const normalized = normalizeEmail(email);
  await enforceRateLimit(deps, [`login:ip:${clientAddress(c)}`, `login:email:${normalized}`]);

  const user = await users.loadUserByEmail(deps, normalized);
  const { valid, needsRehash } = await verifyPassword(password, user?.passwordHash ?? DUMMY_PASSWORD_HASH);
  if (!user || !valid) throw new ServiceError('invalid_credentials');
  if (needsRehash) await users.rehashPassword(deps, user, password);
  return c.json({ data: await sessions.issueSessionTokens(deps, user) }, 201);
};

export const refresh: AppRouteHandler<typeof routes.refresh> = async (c) => {
  const deps = c.get('deps');
  const { refresh_token } = c.req.valid('json');
  await enforceRateLimit(deps, [`refresh:ip:${clientAddress(c)}`, `refresh:token:${await sha256Hex(refresh_token)}`]);
  return c.json({ data: await sessions.rotateRefreshToken(deps, refresh_token) }, 201);
};

export const logout: AppRouteHandler<typeof routes.logout> = async (c) => {
  const deps = c.get('deps');
  const { refresh_token } = c.req.valid('json');
  if (refresh_token !== undefined) {
    const sessionId = await sessions.loadSessionIdByRefreshToken(deps, refresh_token);
    if (sessionId) await sessions.revokeSession(deps, sessionId, 'logout');
    return c.body(null, 204);
  }
  // No refresh token: the caller's access token names the session to end.
  await requireAuth({ accept: 'user' })(c, async () => {});
  const auth = c.get('auth');
  if (auth.kind === 'user') await sessions.revokeSession(deps, auth.sessionId, 'logout');
  return c.body(null, 204);
};

export const me: AppRouteHandler<typeof routes.me> = async (c) => {
  const user = await users.loadUser(c.get('deps'), c.get('auth').ownerId);
  if (!user) throw new ServiceError('unauthorized');
  return c.json({ data: users.toUserResource(user) }, 200);
};
