import { createRoute, z } from '@hono/zod-openapi';
import { createDb } from '../../db/client.ts';
import { requireAuth } from '../../middleware/auth.ts';
import { bearerSecurity, dataEnvelope, errorResponses, jsonContent, Timestamp, type AppOpenAPI, type AppRouteHandler } from '../../lib/openapi.ts';
import { toIsoOrNull } from '../../lib/time.ts';
import { getWebhookSecrets, rotateWebhookSecret, type WebhookSecrets } from '../../services/webhooks/secrets.ts';

const WebhookSecretSchema = z
  .object({
    secret: z.string().openapi({ description: '`whsec_` + base64 of 32 bytes: the Standard Webhooks signing key of this owner and environment.', example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }),
    previous_secret_expires_at: Timestamp.nullable().openapi({ description: 'After a rotation, the previous secret also signs until then (24 hours).' }),
  })
  .openapi('WebhookSecret');

const tags = ['Webhooks'];
const description =
  'Deliveries carry `webhook-id`, `webhook-timestamp` (unix seconds) and `webhook-signature`: `v1,` + base64(HMAC-SHA256(key, "{webhook-id}.{webhook-timestamp}.{raw body}")), key = base64-decoded part after `whsec_`. During a rotation both secrets sign, space-separated. Verify over the raw body, deduplicate by `webhook-id`, persist, then answer 2xx.';

export const getWebhookSecret = createRoute({
  operationId: 'getWebhookSecret',
  method: 'get',
  path: '/v1/account/webhook-secret',
  tags,
  summary: 'Get the webhook signing secret',
  description,
  security: bearerSecurity,
  middleware: [requireAuth({ accept: 'user' })],
  responses: { 200: jsonContent(dataEnvelope(WebhookSecretSchema), 'The signing secret.'), ...errorResponses('unauthorized') },
});

export const rotateWebhookSecretRoute = createRoute({
  operationId: 'rotateWebhookSecret',
  method: 'post',
  path: '/v1/account/webhook-secret/rotate',
  tags,
  summary: 'Rotate the webhook signing secret',
  description: 'Replaces the secret; the previous one keeps signing (alongside) for 24 hours.',
  security: bearerSecurity,
  middleware: [requireAuth({ accept: 'user' })],
  responses: { 200: jsonContent(dataEnvelope(WebhookSecretSchema), 'The new signing secret.'), ...errorResponses('unauthorized') },
});

const view = (secrets: WebhookSecrets) => ({ secret: secrets.current, previous_secret_expires_at: toIsoOrNull(secrets.previousExpiresAt) });

const getHandler: AppRouteHandler<typeof getWebhookSecret> = async (c) =>
  c.json({ data: view(await getWebhookSecrets(c.env, createDb(c.env), c.get('auth').ownerId)) }, 200);

const rotateHandler: AppRouteHandler<typeof rotateWebhookSecretRoute> = async (c) =>
  c.json({ data: view(await rotateWebhookSecret(c.env, createDb(c.env), c.get('auth').ownerId)) }, 200);

export function registerWebhookSecretRoutes(app: AppOpenAPI) {
  app.openapi(getWebhookSecret, getHandler);
  app.openapi(rotateWebhookSecretRoute, rotateHandler);
}
