import type { Deps } from '../../deps.ts';
import { ServiceError } from '../../lib/errors.ts';
import { placementOf } from './directory.ts';

/** How long a write refused during a move is asked to wait: a move copies an owner in seconds (move-owner.ts). */
export const OWNER_MOVING_RETRY_AFTER_SECONDS = 5;

/**
 * The invocation on the owner's shard (the directory, cached per isolate). While the owner is being moved, its
 * writes are refused with a retryable `owner_moving` (the copy must not miss them) and its reads keep going to the
 * shard that still has everything; a retry after the move lands on the new shard.
 */
export async function ownerDeps(deps: Deps, ownerId: string, method: string): Promise<Deps> {
  const placement = await placementOf(deps, ownerId);
  if (placement.movingTo !== null && method !== 'GET' && method !== 'HEAD') throw ownerMoving();
  return deps.withShard(placement.shard);
}

export const ownerMoving = () =>
  new ServiceError('owner_moving', undefined, {
    retryAfterSeconds: OWNER_MOVING_RETRY_AFTER_SECONDS,
    details: { retry_after_seconds: OWNER_MOVING_RETRY_AFTER_SECONDS },
  });
