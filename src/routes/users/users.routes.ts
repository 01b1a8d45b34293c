import { createRoute, z } from '@hono/zod-openapi';
import { requireAuth } from '../../middleware/auth.ts';
import {
  bearerSecurity,
  dataEnvelope,
  errorResponses,
  jsonBody,
  jsonContent,
  listEnvelope,
  listErrorResponses,
  opaqueId,
  PaginationQuery,
} from '../../lib/openapi.ts';
import { CreateUserBody, UpdateUserBody, UserSchema } from './users.schemas.ts';

const tags = ['Users'];
const UserIdParams = z.object({ user_id: opaqueId('user_id', 'usr_4n8d2k7q1x9m3v5b0c6z', 'The user (`usr_...`).') });

export const createUser = createRoute({
  operationId: 'createUser',
  method: 'post',
  path: '/v1/users',
  tags,
  summary: 'Create a user (admin)',
  description:
    'Admins only. `role` defaults to `client`, `scopes` to all five business scopes. The password is never returned.',
  security: bearerSecurity,
  middleware: [requireAuth({ accept: 'user', role: 'admin' })],
  request: { body: jsonBody(CreateUserBody) },
  responses: {
    201: jsonContent(dataEnvelope(UserSchema), 'The created user.'),
    ...errorResponses('unauthorized', 'insufficient_role', 'email_taken'),
  },
});

export const listUsers = createRoute({
  operationId: 'listUsers',
  method: 'get',
  path: '/v1/users',
  tags,
  summary: 'List users (admin)',
  description: 'Admins only, newest first.',
  security: bearerSecurity,
  middleware: [requireAuth({ accept: 'user', role: 'admin' })],
  request: { query: PaginationQuery },
  responses: {
    200: jsonContent(listEnvelope(UserSchema), 'A page of users.'),
    ...listErrorResponses('unauthorized', 'insufficient_role'),
  },
});

export const getUser = createRoute({
  operationId: 'getUser',
  method: 'get',
  path: '/v1/users/{user_id}',
  tags,
  summary: 'Get a user',
  description: 'A `client` sees only itself: any other id answers `404 user_not_found`, exactly like an unknown id.',
  security: bearerSecurity,
  middleware: [requireAuth({ accept: 'user' })],
  request: { params: UserIdParams },
  responses: {
    200: jsonContent(dataEnvelope(UserSchema), 'The user.'),
    ...errorResponses('unauthorized', 'user_not_found'),
  },
});

export const updateUser = createRoute({
  operationId: 'updateUser',
  method: 'patch',
  path: '/v1/users/{user_id}',
  tags,
  summary: 'Update a user',
  description:
    'All fields optional. Only an `admin` may change `role` or `scopes` (`403 insufficient_role` otherwise, even for the same value). A `client` may update only itself.',
  security: bearerSecurity,
  middleware: [requireAuth({ accept: 'user' })],
  request: { params: UserIdParams, body: jsonBody(UpdateUserBody) },
  responses: {
    200: jsonContent(dataEnvelope(UserSchema), 'The updated user.'),
    ...errorResponses('unauthorized', 'insufficient_role', 'user_not_found', 'email_taken'),
  },
});
