import { ServiceError } from '../../lib/errors.ts';
import type { AppRouteHandler } from '../../lib/openapi.ts';
import { toIso } from '../../lib/time.ts';
import { placementOf, type Placement } from '../../services/shards/directory.ts';
import { latestMove, type Move, requestMove } from '../../services/shards/move-owner.ts';
import { loadUser } from '../../services/users.ts';
import type * as routes from './placements.routes.ts';

const moveView = (move: Move) => ({
  id: move.id,
  from: move.from,
  to: move.to,
  step: move.step,
  status: move.status,
  reason: move.reason,
  rows_copied: move.rowsCopied,
  flipped_at: move.flippedAt === null ? null : toIso(move.flippedAt),
  created_at: toIso(move.createdAt),
  updated_at: toIso(move.updatedAt),
});

const view = (placement: Placement, move: Move | null) => ({
  user_id: placement.ownerId,
  shard: placement.shard,
  moving_to: placement.movingTo,
  move: move ? moveView(move) : null,
  placed_at: toIso(placement.placedAt),
  updated_at: toIso(placement.updatedAt),
});

export const getPlacement: AppRouteHandler<typeof routes.getPlacement> = async (c) => {
  const deps = c.get('deps');
  const { user_id } = c.req.valid('param');
  if (!(await loadUser(deps, user_id))) throw new ServiceError('user_not_found');
  const placement = await placementOf(deps, user_id);
  return c.json({ data: view(placement, await latestMove(deps, user_id)) }, 200);
};

export const placeOwner: AppRouteHandler<typeof routes.placeOwner> = async (c) => {
  const deps = c.get('deps');
  const { user_id } = c.req.valid('param');
  if (!(await loadUser(deps, user_id))) throw new ServiceError('user_not_found');
  const result = await requestMove({ deps, input: { ownerId: user_id, to: c.req.valid('json').shard } });
  const body = { data: view(result.placement, result.move) };
  return result.kind === 'started' || result.kind === 'joined' ? c.json(body, 202) : c.json(body, 200);
};
