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
    "Admins only. The shard database holding the owner's payments, refunds, events, deliveries, webhook endpoints and notifications. An owner is placed when it is created, on the shard with the fewest owners (ties to the lowest index).",
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
    "Admins only; the operator's command `npm run owners:move` calls it. Puts the owner's data on `shard`: an owner not placed yet is placed there; an owner elsewhere is moved: its writes answer `503 owner_moving` (retryable, `Retry-After`) while its rows are copied and checked, its reads keep working, and the answer comes once the directory points at the new shard (it waits for every isolate's cached placement to expire: about a minute). Answering the current shard changes nothing; naming the old shard of an abandoned move ends it. A move already going elsewhere is `409 invalid_state_transition`.",
  security: bearerSecurity,
  middleware: [requireAuth({ accept: 'user', role: 'admin' })],
  request: { params: UserIdParams, body: jsonBody(PlaceOwnerBody) },
  responses: {
    200: jsonContent(dataEnvelope(PlacementSchema), 'The placement after the move.'),
    ...errorResponses('unauthorized', 'insufficient_role', 'user_not_found', 'invalid_state_transition'),
  },
});
