import { eq } from 'drizzle-orm';
import { createDb } from '../../db/client.ts';
import { users as usersTable } from '../../db/schema/index.ts';
import { DUMMY_PASSWORD_HASH, hashPassword, verifyPassword } from '../../domain/passwords.ts';
import { sha256Hex } from '../../lib/encoding.ts';
import { ApiError } from '../../lib/errors.ts';
import type { AppRouteHandler } from '../../lib/openapi.ts';
import { requireAuth } from '../../middleware/auth.ts';
import { clientAddress, enforceRateLimit } from '../../middleware/rate-limit.ts';
import * as sessions from '../../services/sessions.ts';
import * as users from '../../services/users.ts';
import type * as routes from './auth.routes.ts';

export const login: AppRouteHandler<typeof routes.login> = async (c) => {
  const { email, password } = c.req.valid('json');
  const normalized = users.normalizeEmail(email);
  await enforceRateLimit(c, [`login:ip:${clientAddress(c)}`, `login:email:${normalized}`]);

  const db = createDb(c.env);
  const user = await users.findUserByEmail(db, normalized);
  const { valid, needsRehash } = await verifyPassword(password, user?.passwordHash ?? DUMMY_PASSWORD_HASH);
  if (!user || !valid) throw new ApiError('invalid_credentials');
  if (needsRehash) {
    await db.update(usersTable).set({ passwordHash: await hashPassword(password) }).where(eq(usersTable.id, user.id)).run();
  }
  return c.json({ data: await sessions.issueSessionTokens(c.env, db, user) }, 201);
};

export const refresh: AppRouteHandler<typeof routes.refresh> = async (c) => {
  const { refresh_token } = c.req.valid('json');
  await enforceRateLimit(c, [`refresh:ip:${clientAddress(c)}`, `refresh:token:${await sha256Hex(refresh_token)}`]);
  const db = createDb(c.env);
  const tokens = await sessions.rotateRefreshToken(c.env, db, refresh_token, (id) => users.findUser(db, id));
  return c.json({ data: tokens }, 201);
};

export const logout: AppRouteHandler<typeof routes.logout> = async (c) => {
  const db = createDb(c.env);
  const { refresh_token } = c.req.valid('json');
  if (refresh_token !== undefined) {
    const sessionId = await sessions.findSessionIdByRefreshToken(db, refresh_token);
    if (sessionId) await sessions.revokeSession(db, sessionId, 'logout');
    return c.body(null, 204);
  }
  // No refresh token: the caller's access token names the session to end.
  await requireAuth({ accept: 'user' })(c, async () => {});
  const auth = c.get('auth');
  if (auth.kind === 'user') await sessions.revokeSession(db, auth.sessionId, 'logout');
  return c.body(null, 204);
};

export const me: AppRouteHandler<typeof routes.me> = async (c) => {
  const user = await users.findUser(createDb(c.env), c.get('auth').ownerId);
  if (!user) throw new ApiError('unauthorized');
  return c.json({ data: users.toUserResource(user) }, 200);
};
