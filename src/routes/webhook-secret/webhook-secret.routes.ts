import { createRoute, z } from '@hono/zod-openapi';
import { bearerSecurity, dataEnvelope, errorResponses, jsonContent } from '../../lib/openapi.ts';
import { requireAuth } from '../../middleware/auth.ts';
import { WebhookSecretSchema } from './webhook-secret.schemas.ts';

const tags = ['Webhooks'];
const description =
  'Deliveries carry `webhook-id`, `webhook-timestamp` (unix seconds) and `webhook-signature`: `v1,` + base64(HMAC-SHA256(key, "{webhook-id}.{webhook-timestamp}.{raw body}")), key = base64-decoded part after `whsec_`. During a rotation both secrets sign, space-separated. Verify over the raw body, deduplicate by `webhook-id`, persist, then answer 2xx.';

export const getWebhookSecret = createRoute({
  operationId: 'getWebhookSecret',
  method: 'get',
  path: '/v1/account/webhook-secret',
  tags,
  summary: 'Get the webhook signing secret',
  description: `${description} \`user_id\` is for admins only: that owner’s secret.`,
  security: bearerSecurity,
  middleware: [requireAuth({ accept: 'user' })],
  request: {
    query: z.object({
      user_id: z.string().min(1).max(128).optional().openapi({ description: 'Admins only: this owner’s secret.' }),
    }),
  },
  responses: {
    200: jsonContent(dataEnvelope(WebhookSecretSchema), 'The signing secret.'),
    ...errorResponses('unauthorized', 'insufficient_role', 'user_not_found'),
  },
});

export const rotateWebhookSecret = createRoute({
  operationId: 'rotateWebhookSecret',
  method: 'post',
  path: '/v1/account/webhook-secret/rotate',
  tags,
  summary: 'Rotate the webhook signing secret',
  description: 'Replaces the secret; the previous one keeps signing (alongside) for 24 hours.',
  security: bearerSecurity,
  middleware: [requireAuth({ accept: 'user' })],
  responses: {
    200: jsonContent(dataEnvelope(WebhookSecretSchema), 'The new signing secret.'),
    ...errorResponses('unauthorized'),
  },
});
