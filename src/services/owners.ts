import type { UserRow } from '../db/schema/index.ts';
import type { Deps } from '../deps.ts';
import type { AuthContext } from '../domain/caller.ts';
import { ServiceError } from '../lib/errors.ts';
import { ownerDeps } from './shards/owner-deps.ts';
import { loadUser } from './users.ts';

/**
 * The owner a management call acts for: the caller itself, or, for an admin only, the `user_id` it
 * names. A client naming any `user_id` is refused, so the field cannot be used to reach another owner.
 * With it, the invocation on that owner's shard (a `method` that writes is refused while the owner moves).
 */
export async function resolveOwner(
  deps: Deps,
  auth: AuthContext,
  requestedUserId: string | undefined,
  method: string,
): Promise<{ owner: UserRow; deps: Deps }> {
  if (requestedUserId !== undefined && auth.role !== 'admin') {
    throw new ServiceError('insufficient_role', 'Only an admin may act for another user (`user_id`).');
  }
  const owner = await loadUser(deps, requestedUserId ?? auth.ownerId);
  if (!owner) throw new ServiceError(requestedUserId !== undefined ? 'user_not_found' : 'unauthorized');
  return { owner, deps: owner.id === auth.ownerId ? deps : await ownerDeps(deps, owner.id, method) };
}
