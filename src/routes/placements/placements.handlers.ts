import type { ShardName } from '../../db/shards.ts';
import { ServiceError } from '../../lib/errors.ts';
import type { AppRouteHandler } from '../../lib/openapi.ts';
import { toIso } from '../../lib/time.ts';
import { placementOf, type Placement } from '../../services/shards/directory.ts';
import { moveOwner } from '../../services/shards/move-owner.ts';
import { loadUser } from '../../services/users.ts';
import type * as routes from './placements.routes.ts';

const view = (placement: Placement) => ({
  user_id: placement.ownerId,
  shard: placement.shard,
  moving_to: placement.movingTo,
  placed_at: toIso(placement.placedAt),
  updated_at: toIso(placement.updatedAt),
});

export const getPlacement: AppRouteHandler<typeof routes.getPlacement> = async (c) => {
  const deps = c.get('deps');
  const { user_id } = c.req.valid('param');
  if (!(await loadUser(deps, user_id))) throw new ServiceError('user_not_found');
  return c.json({ data: view(await placementOf(deps, user_id)) }, 200);
};

export const placeOwner: AppRouteHandler<typeof routes.placeOwner> = async (c) => {
  const deps = c.get('deps');
  const { user_id } = c.req.valid('param');
  if (!(await loadUser(deps, user_id))) throw new ServiceError('user_not_found');
  const { placement } = await moveOwner({
    deps,
    input: { ownerId: user_id, to: c.req.valid('json').shard as ShardName },
  });
  return c.json({ data: view(placement) }, 200);
};
