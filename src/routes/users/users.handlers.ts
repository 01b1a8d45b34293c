import type { Deps } from '../../deps.ts';
import type { AuthContext } from '../../domain/caller.ts';
import { ServiceError } from '../../lib/errors.ts';
import { pageOf, paginationOf, type AppRouteHandler } from '../../lib/openapi.ts';
import * as users from '../../services/users.ts';
import type * as routes from './users.routes.ts';

export const createUser: AppRouteHandler<typeof routes.createUser> = async (c) => {
  const row = await users.createUser(c.get('deps'), c.req.valid('json'));
  return c.json({ data: users.toUserResource(row) }, 201);
};

export const listUsers: AppRouteHandler<typeof routes.listUsers> = async (c) => {
  const page = pageOf(c.req.valid('query'));
  const listed = await users.listUsers(c.get('deps'), page);
  return c.json({ data: listed.rows.map(users.toUserResource), pagination: paginationOf(page, listed) }, 200);
};

export const getUser: AppRouteHandler<typeof routes.getUser> = async (c) => {
  const row = await visibleUser(c.get('deps'), c.get('auth'), c.req.valid('param').user_id);
  return c.json({ data: users.toUserResource(row) }, 200);
};

export const updateUser: AppRouteHandler<typeof routes.updateUser> = async (c) => {
  const deps = c.get('deps');
  const auth = c.get('auth');
  const row = await visibleUser(deps, auth, c.req.valid('param').user_id);
  const patch = c.req.valid('json');
  if ((patch.role !== undefined || patch.scopes !== undefined) && auth.role !== 'admin') {
    throw new ServiceError('insufficient_role', 'Only an admin may change role or scopes.');
  }
  const updated = await users.updateUser(deps, row, patch);
  return c.json({ data: users.toUserResource(updated) }, 200);
};

/** Admins see every user; a client sees only itself, and any other id looks like an unknown one. */
async function visibleUser(deps: Deps, auth: AuthContext, userId: string) {
  if (auth.role !== 'admin' && auth.ownerId !== userId) throw new ServiceError('user_not_found');
  const row = await users.loadUser(deps, userId);
  if (!row) throw new ServiceError('user_not_found');
  return row;
}
