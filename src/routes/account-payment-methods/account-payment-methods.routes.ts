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
import {
  AccountPaymentMethodSchema,
  ApiKeyLinkSchema,
  CreateAccountPaymentMethodBody,
  LinkApiKeyBody,
  UpdateAccountPaymentMethodBody,
} from './account-payment-methods.schemas.ts';

const tags = ['Account payment methods'];
const userOnly = [requireAuth({ accept: 'user' })];
const MethodParams = z.object({
  payment_method_id: opaqueId(
    'payment_method_id',
    '5b0e7c52-3f57-4b8e-9a55-0e4d7c1b2a91',
    'The payment method (a UUID).',
  ),
});
const LinkParams = MethodParams.extend({
  api_key_id: opaqueId('api_key_id', 'key_7m2x9c4v1b8n3k6q0z5w', 'The API key (`key_...`).'),
});

export const createAccountPaymentMethod = createRoute({
  operationId: 'createAccountPaymentMethod',
  method: 'post',
  path: '/v1/account/payment-methods',
  tags,
  summary: 'Configure a payment method',
  description:
    'Builds a method on a published connector version this deployment offers (`GET /v1/connectors`; the `sandbox` versions are `test` only: in `live` they are `400 invalid_request` naming `connector_definition_version_id`). `credentials` and `configuration` are validated against the version’s schemas (errors name the fields, never their values), encrypted at rest, and never returned. `user_id` is for admins only.',
  security: bearerSecurity,
  middleware: userOnly,
  request: { body: jsonBody(CreateAccountPaymentMethodBody) },
  responses: {
    201: jsonContent(dataEnvelope(AccountPaymentMethodSchema), 'The configured method.'),
    ...errorResponses('unauthorized', 'insufficient_role', 'user_not_found'),
  },
});

export const listAccountPaymentMethods = createRoute({
  operationId: 'listAccountPaymentMethods',
  method: 'get',
  path: '/v1/account/payment-methods',
  tags,
  summary: 'List configured payment methods',
  description:
    'The owner’s methods in this environment, newest first; deleted ones are not listed. `user_id` is for admins only.',
  security: bearerSecurity,
  middleware: userOnly,
  request: {
    query: PaginationQuery.extend({
      user_id: z.string().min(1).max(128).optional().openapi({ description: 'Admins only.' }),
    }),
  },
  responses: {
    200: jsonContent(listEnvelope(AccountPaymentMethodSchema), 'A page of methods.'),
    ...listErrorResponses('unauthorized', 'insufficient_role', 'user_not_found'),
  },
});

export const getAccountPaymentMethod = createRoute({
  operationId: 'getAccountPaymentMethod',
  method: 'get',
  path: '/v1/account/payment-methods/{payment_method_id}',
  tags,
  summary: 'Get a configured payment method',
  description: 'Missing, foreign and deleted methods answer `404 payment_method_not_found` alike.',
  security: bearerSecurity,
  middleware: userOnly,
  request: { params: MethodParams },
  responses: {
    200: jsonContent(dataEnvelope(AccountPaymentMethodSchema), 'The method.'),
    ...errorResponses('unauthorized', 'payment_method_not_found'),
  },
});

export const updateAccountPaymentMethod = createRoute({
  operationId: 'updateAccountPaymentMethod',
  method: 'patch',
  path: '/v1/account/payment-methods/{payment_method_id}',
  tags,
  summary: 'Update a configured payment method',
  description:
    'All fields optional. Rotated `credentials` must match the version’s schema and are never echoed. `enabled: false` → `inactive`; `enabled: true` → `active`. A method on a connector version this deployment does not offer (a `sandbox` method in `live`) takes no change: `422 connector_configuration_invalid`; delete it.',
  security: bearerSecurity,
  middleware: userOnly,
  request: { params: MethodParams, body: jsonBody(UpdateAccountPaymentMethodBody) },
  responses: {
    200: jsonContent(dataEnvelope(AccountPaymentMethodSchema), 'The updated method.'),
    ...errorResponses('unauthorized', 'payment_method_not_found', 'connector_configuration_invalid'),
  },
});

export const deleteAccountPaymentMethod = createRoute({
  operationId: 'deleteAccountPaymentMethod',
  method: 'delete',
  path: '/v1/account/payment-methods/{payment_method_id}',
  tags,
  summary: 'Delete a payment method',
  description:
    'Soft delete, idempotent: credentials and configuration are erased, API key links disabled; past payments keep their reference.',
  security: bearerSecurity,
  middleware: userOnly,
  request: { params: MethodParams },
  responses: {
    204: { description: 'Deleted (or already deleted).' },
    ...errorResponses('unauthorized', 'payment_method_not_found'),
  },
});

export const linkApiKey = createRoute({
  operationId: 'enablePaymentMethodForApiKey',
  method: 'post',
  path: '/v1/account/payment-methods/{payment_method_id}/api-keys',
  tags,
  summary: 'Enable a method for an API key',
  description:
    'The method and the key must share owner and environment and both be active (`409 invalid_state_transition` otherwise; a foreign or unknown key is `404 api_key_not_found`). Enabling adds no scope to the key. Enabling again is harmless.',
  security: bearerSecurity,
  middleware: userOnly,
  request: { params: MethodParams, body: jsonBody(LinkApiKeyBody) },
  responses: {
    201: jsonContent(dataEnvelope(ApiKeyLinkSchema), 'The link, enabled.'),
    ...errorResponses('unauthorized', 'payment_method_not_found', 'api_key_not_found', 'invalid_state_transition'),
  },
});

export const disableApiKeyLink = createRoute({
  operationId: 'disablePaymentMethodForApiKey',
  method: 'post',
  path: '/v1/account/payment-methods/{payment_method_id}/api-keys/{api_key_id}/disable',
  tags,
  summary: 'Disable a method for one API key',
  description: 'Only that key loses the method; other keys linked to it are unchanged. Idempotent.',
  security: bearerSecurity,
  middleware: userOnly,
  request: { params: LinkParams },
  responses: {
    200: jsonContent(dataEnvelope(ApiKeyLinkSchema), 'The link, disabled.'),
    ...errorResponses('unauthorized', 'payment_method_not_found', 'api_key_not_found'),
  },
});
