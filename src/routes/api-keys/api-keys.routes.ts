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
import { ApiKeySchema, CreateApiKeyBody, CreatedApiKeySchema, ListApiKeysQuery } from './api-keys.schemas.ts';

const tags = ['API keys'];
const userOnly = [requireAuth({ accept: 'user' })];

export const createApiKey = createRoute({
  operationId: 'createApiKey',
  method: 'post',
  path: '/v1/account/api-keys',
  tags,
  summary: 'Create an API key',
  description: [
    'Creates a key for this deployment’s environment (`sk_test_...` on test, `sk_live_...` on live).',
    'The `secret` is in this response only; afterwards only its keyed hash exists.',
    'The scopes must be among the owner’s own scopes (`403 insufficient_scope` otherwise); a key acts with at most its owner’s current scopes, so a scope later taken from the owner stops working on its keys at once.',
    '`user_id` (admins only, `403 insufficient_role` for a client) creates the key for another owner.',
  ].join(' '),
  security: bearerSecurity,
  middleware: userOnly,
  request: { body: jsonBody(CreateApiKeyBody) },
  responses: {
    201: jsonContent(dataEnvelope(CreatedApiKeySchema), 'The key, with its secret shown once.'),
    ...errorResponses('unauthorized', 'insufficient_role', 'insufficient_scope', 'user_not_found'),
  },
});

export const listApiKeys = createRoute({
  operationId: 'listApiKeys',
  method: 'get',
  path: '/v1/account/api-keys',
  tags,
  summary: 'List API keys',
  description:
    'The caller’s keys in this environment, newest first, revoked ones included; never their secrets. `user_id` is for admins only.',
  security: bearerSecurity,
  middleware: userOnly,
  request: { query: PaginationQuery.extend(ListApiKeysQuery.shape) },
  responses: {
    200: jsonContent(listEnvelope(ApiKeySchema), 'A page of keys.'),
    ...listErrorResponses('unauthorized', 'insufficient_role', 'user_not_found'),
  },
});

export const revokeApiKey = createRoute({
  operationId: 'revokeApiKey',
  method: 'post',
  path: '/v1/account/api-keys/{api_key_id}/revoke',
  tags,
  summary: 'Revoke an API key',
  description:
    'The key stops working at once (`401 unauthorized`). Idempotent. Another owner’s key answers like an unknown one.',
  security: bearerSecurity,
  middleware: userOnly,
  request: {
    params: z.object({ api_key_id: opaqueId('api_key_id', 'key_7m2x9c4v1b8n3k6q0z5w', 'The API key (`key_...`).') }),
  },
  responses: {
    200: jsonContent(dataEnvelope(ApiKeySchema), 'The revoked key.'),
    ...errorResponses('unauthorized', 'api_key_not_found'),
  },
});
