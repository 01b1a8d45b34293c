import { createRoute } from '@hono/zod-openapi';
import { requireAuth } from '../../middleware/auth.ts';
import {
  bearerSecurity,
  dataEnvelope,
  errorResponses,
  jsonBody,
  jsonContent,
  listEnvelope,
  listErrorResponses,
} from '../../lib/openapi.ts';
import {
  CreateWebhookEndpointBody,
  EndpointParams,
  ListWebhookEndpointsQuery,
  UpdateWebhookEndpointBody,
  WebhookEndpointSchema,
  WebhookEndpointTestResultSchema,
  WebhookEndpointWithSecretSchema,
  WebhookPingSchema,
} from './webhook-endpoints.schemas.ts';
import { StandardWebhookHeaders } from '../events/events.schemas.ts';
import { WEBHOOK_RESPONSES } from '../events/events.routes.ts';

const tags = ['Webhooks'];
const userOnly = [requireAuth({ accept: 'user' })];
const notFound = 'Missing and foreign endpoints answer `404 webhook_endpoint_not_found` alike.';

export const createWebhookEndpoint = createRoute({
  operationId: 'createWebhookEndpoint',
  method: 'post',
  path: '/v1/account/webhook-endpoints',
  tags,
  summary: 'Register a webhook endpoint',
  description: [
    'Every event of the owner in this environment whose type is in `enabled_events` is delivered to `url`, besides any payment’s own `webhook_url`: each destination is its own delivery (own attempts, backoff and dead letter) with the same event `id`.',
    'Deliveries are signed (Standard Webhooks, as described under `GET /v1/account/webhook-secret`) with this endpoint’s own secret, returned here only.',
    'At most 16 endpoints per owner and environment (`409 webhook_endpoint_limit_reached`). `user_id` is for admins only.',
  ].join(' '),
  security: bearerSecurity,
  middleware: userOnly,
  request: { body: jsonBody(CreateWebhookEndpointBody) },
  responses: {
    201: jsonContent(
      dataEnvelope(WebhookEndpointWithSecretSchema),
      'The endpoint, with its signing secret (shown this once).',
    ),
    ...errorResponses('unauthorized', 'insufficient_role', 'user_not_found', 'webhook_endpoint_limit_reached'),
  },
});

export const listWebhookEndpoints = createRoute({
  operationId: 'listWebhookEndpoints',
  method: 'get',
  path: '/v1/account/webhook-endpoints',
  tags,
  summary: 'List webhook endpoints',
  description:
    'The owner’s endpoints in this environment, newest first, without their secrets. `user_id` is for admins only.',
  security: bearerSecurity,
  middleware: userOnly,
  request: { query: ListWebhookEndpointsQuery },
  responses: {
    200: jsonContent(listEnvelope(WebhookEndpointSchema), 'A page of endpoints.'),
    ...listErrorResponses('unauthorized', 'insufficient_role', 'user_not_found'),
  },
});

export const getWebhookEndpoint = createRoute({
  operationId: 'getWebhookEndpoint',
  method: 'get',
  path: '/v1/account/webhook-endpoints/{webhook_endpoint_id}',
  tags,
  summary: 'Get a webhook endpoint',
  description: `Its state (\`status\`, \`disabled_reason\`, \`failing_since\`), never its secret. ${notFound}`,
  security: bearerSecurity,
  middleware: userOnly,
  request: { params: EndpointParams },
  responses: {
    200: jsonContent(dataEnvelope(WebhookEndpointSchema), 'The endpoint.'),
    ...errorResponses('unauthorized', 'webhook_endpoint_not_found'),
  },
});

export const updateWebhookEndpoint = createRoute({
  operationId: 'updateWebhookEndpoint',
  method: 'patch',
  path: '/v1/account/webhook-endpoints/{webhook_endpoint_id}',
  tags,
  summary: 'Update a webhook endpoint',
  description: `All fields optional. A new \`url\` also serves the deliveries still being retried; new \`enabled_events\` apply to events from now on. \`disabled: true\` stops deliveries; \`disabled: false\` enables it again (also after an automatic disable), from new events on. ${notFound}`,
  security: bearerSecurity,
  middleware: userOnly,
  request: { params: EndpointParams, body: jsonBody(UpdateWebhookEndpointBody) },
  responses: {
    200: jsonContent(dataEnvelope(WebhookEndpointSchema), 'The updated endpoint.'),
    ...errorResponses('unauthorized', 'webhook_endpoint_not_found'),
  },
});

export const deleteWebhookEndpoint = createRoute({
  operationId: 'deleteWebhookEndpoint',
  method: 'delete',
  path: '/v1/account/webhook-endpoints/{webhook_endpoint_id}',
  tags,
  summary: 'Delete a webhook endpoint',
  description: `Deliveries stop (pending ones are closed as \`endpoint_deleted\`); past deliveries stay listed under their events. Its secret is erased. ${notFound}`,
  security: bearerSecurity,
  middleware: userOnly,
  request: { params: EndpointParams },
  responses: {
    204: { description: 'Deleted.' },
    ...errorResponses('unauthorized', 'webhook_endpoint_not_found'),
  },
});

export const rotateWebhookEndpointSecret = createRoute({
  operationId: 'rotateWebhookEndpointSecret',
  method: 'post',
  path: '/v1/account/webhook-endpoints/{webhook_endpoint_id}/rotate-secret',
  tags,
  summary: 'Rotate a webhook endpoint’s signing secret',
  description: `Replaces the secret, shown in this answer only; the previous one keeps signing alongside (two \`v1,\` signatures) for 24 hours, so a receiver can switch over. A rotation racing another answers with the secret stored when it ended, never one that was not saved. ${notFound}`,
  security: bearerSecurity,
  middleware: userOnly,
  request: { params: EndpointParams },
  responses: {
    200: jsonContent(dataEnvelope(WebhookEndpointWithSecretSchema), 'The endpoint with its new secret.'),
    ...errorResponses('unauthorized', 'webhook_endpoint_not_found'),
  },
});

export const testWebhookEndpoint = createRoute({
  operationId: 'testWebhookEndpoint',
  method: 'post',
  path: '/v1/account/webhook-endpoints/{webhook_endpoint_id}/test',
  tags,
  summary: 'Send a test event to a webhook endpoint',
  description: `Sends a signed \`ping\` now (body \`{ id, type: "ping", created_at, data: { webhook_endpoint: { id } } }\`, same headers, URL checks, 10 s timeout and no redirects as a delivery) and answers with the attempt’s result, whatever the endpoint answered. Works on a disabled endpoint too (check it before enabling it again). The ping is not an event: it is not listed, not retried, and does not count toward the automatic disable. ${notFound}`,
  security: bearerSecurity,
  middleware: userOnly,
  request: { params: EndpointParams },
  responses: {
    200: jsonContent(dataEnvelope(WebhookEndpointTestResultSchema), 'The attempt’s result.'),
    ...errorResponses('unauthorized', 'webhook_endpoint_not_found'),
  },
});

/** The description's `webhooks` entry of the ping, beside the events' (events.routes.ts). */
export const pingWebhook = createRoute({
  operationId: 'ping',
  method: 'post',
  path: 'ping',
  tags,
  summary: 'Test ping to a webhook endpoint',
  description:
    'Sent only by `testWebhookEndpoint`, to that endpoint, signed with its secret like a delivery. Not an event: not listed, not retried; answer it 2xx like any delivery.',
  security: [],
  request: {
    headers: StandardWebhookHeaders,
    body: { required: true, content: { 'application/json': { schema: WebhookPingSchema } } },
  },
  responses: WEBHOOK_RESPONSES,
});
