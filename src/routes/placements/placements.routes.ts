import { createRoute, z } from '@hono/zod-openapi';
import { requireAuth } from '../../middleware/auth.ts';
import { bearerSecurity, dataEnvelope, errorResponses, jsonBody, jsonContent, opaqueId } from '../../lib/openapi.ts';
import { PlaceOwnerBody, PlacementSchema } from './placements.schemas.ts';

const tags = ['Users'];
const UserIdParams = z.object({ user_id: opaqueId('user_id', 'usr_4n8d2k7q1x9m3v5b0c6z', 'The user (`usr_...`).') });

export const getPlacement = createRoute({
  operationId: 'getPlacement',
  method: 'get',
  path: '/v1/users/{user_id}/placement',
  tags,
  summary: "Where a user's data lives (admin)",
  description:
    "Admins only. The shard database holding the owner's payments, refunds, events, deliveries, webhook endpoints and notifications, and its latest move with how far it got. An owner is placed when it is created, on the shard with the fewest owners (ties to the lowest index).",
  security: bearerSecurity,
  middleware: [requireAuth({ accept: 'user', role: 'admin' })],
  request: { params: UserIdParams },
  responses: {
    200: jsonContent(dataEnvelope(PlacementSchema), 'The placement.'),
    ...errorResponses('unauthorized', 'insufficient_role', 'user_not_found'),
  },
});

export const placeOwner = createRoute({
  operationId: 'placeOwner',
  method: 'put',
  path: '/v1/users/{user_id}/placement',
  tags,
  summary: "Place or move a user's data (admin)",
  description:
    "Admins only; the operator's command `npm run owners:move` calls it. Puts the owner's data on `shard`. An owner not placed yet is placed there (200). An owner already there, with no move running, is answered as it is (200). An owner elsewhere is moved by a durable job, and this answers `202` at once with the move (`move.id`, `from`, `to`, `step`); follow it with `GET` until `move.status` is `done`. While it runs the owner's writes answer `503 owner_moving` (retryable, `Retry-After`) and its reads keep working; the job waits for every isolate's cached placement to expire, copies and checks the owner's rows, flips the directory, and deletes the old copy (docs/SCALE.md, \"Moves\"). The same move requested again joins the running one (202, the same `move.id`; a job that gave up is started again). Naming the origin before the flip cancels the move (200, `move.status: canceled`); after the flip, moving back is a new move. A move running to another shard is `409 invalid_state_transition`.",
  security: bearerSecurity,
  middleware: [requireAuth({ accept: 'user', role: 'admin' })],
  request: { params: UserIdParams, body: jsonBody(PlaceOwnerBody) },
  responses: {
    200: jsonContent(
      dataEnvelope(PlacementSchema),
      'Nothing to move: placed now, already there, or the running move was canceled (`move.status: canceled`).',
    ),
    202: jsonContent(dataEnvelope(PlacementSchema), 'A move started, or the same move was running: `move` is it.'),
    ...errorResponses(
      'unauthorized',
      'insufficient_role',
      'user_not_found',
      'invalid_state_transition',
      'concurrent_update',
    ),
  },
});
