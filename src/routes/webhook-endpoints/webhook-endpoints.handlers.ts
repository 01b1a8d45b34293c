import type { Context } from 'hono';
import { createDb, type Db } from '../../db/client.ts';
import type { WebhookEndpointRow } from '../../db/schema/index.ts';
import type { AppEnv } from '../../env.ts';
import { ApiError } from '../../lib/errors.ts';
import type { AppRouteHandler } from '../../lib/openapi.ts';
import { toIso, toIsoOrNull } from '../../lib/time.ts';
import { resolveOwner } from '../../services/owners.ts';
import * as endpoints from '../../services/webhooks/endpoints.ts';
import type { WebhookSecrets } from '../../services/webhooks/secrets.ts';
import type * as routes from './webhook-endpoints.routes.ts';

const withSecret = (row: WebhookEndpointRow, secrets: WebhookSecrets) => ({
  ...endpoints.toWebhookEndpoint(row),
  secret: secrets.current,
  previous_secret_expires_at: toIsoOrNull(secrets.previousExpiresAt),
});

export const createWebhookEndpoint: AppRouteHandler<typeof routes.createWebhookEndpoint> = async (c) => {
  const { user_id, ...input } = c.req.valid('json');
  const db = createDb(c.env);
  const owner = await resolveOwner(db, c.get('auth'), user_id);
  const { row, secret } = await endpoints.createEndpoint(c.env, db, owner.id, input);
  return c.json({ data: withSecret(row, secret) }, 201);
};

export const listWebhookEndpoints: AppRouteHandler<typeof routes.listWebhookEndpoints> = async (c) => {
  const { limit, offset, user_id } = c.req.valid('query');
  const db = createDb(c.env);
  const owner = await resolveOwner(db, c.get('auth'), user_id);
  const { rows, total } = await endpoints.listEndpoints(db, { ownerId: owner.id, environment: c.env.ENVIRONMENT }, { limit, offset });
  return c.json({ data: rows.map(endpoints.toWebhookEndpoint), pagination: { limit, offset, total } }, 200);
};

export const getWebhookEndpoint: AppRouteHandler<typeof routes.getWebhookEndpoint> = async (c) => {
  const row = await visibleEndpoint(c, createDb(c.env), c.req.valid('param').webhook_endpoint_id);
  return c.json({ data: endpoints.toWebhookEndpoint(row) }, 200);
};

export const updateWebhookEndpoint: AppRouteHandler<typeof routes.updateWebhookEndpoint> = async (c) => {
  const db = createDb(c.env);
  const row = await visibleEndpoint(c, db, c.req.valid('param').webhook_endpoint_id);
  const updated = await endpoints.updateEndpoint(c.env, db, row, c.req.valid('json'));
  // Deleted meanwhile.
  if (!updated) throw new ApiError('webhook_endpoint_not_found');
  return c.json({ data: endpoints.toWebhookEndpoint(updated) }, 200);
};

export const deleteWebhookEndpoint: AppRouteHandler<typeof routes.deleteWebhookEndpoint> = async (c) => {
  const db = createDb(c.env);
  const row = await visibleEndpoint(c, db, c.req.valid('param').webhook_endpoint_id);
  await endpoints.deleteEndpoint(db, row);
  return c.body(null, 204);
};

export const rotateWebhookEndpointSecret: AppRouteHandler<typeof routes.rotateWebhookEndpointSecret> = async (c) => {
  const db = createDb(c.env);
  const row = await visibleEndpoint(c, db, c.req.valid('param').webhook_endpoint_id);
  const rotated = await endpoints.rotateEndpointSecret(c.env, db, row);
  if (!rotated) throw new ApiError('webhook_endpoint_not_found');
  return c.json({ data: withSecret(rotated.row, rotated.secrets) }, 200);
};

export const testWebhookEndpoint: AppRouteHandler<typeof routes.testWebhookEndpoint> = async (c) => {
  const row = await visibleEndpoint(c, createDb(c.env), c.req.valid('param').webhook_endpoint_id);
  const now = Date.now();
  const { id, attempt } = await endpoints.pingEndpoint(c.env, row, now);
  return c.json(
    {
      data: {
        event_id: id,
        type: 'ping' as const,
        url: row.url,
        succeeded: attempt.succeeded,
        status_code: attempt.statusCode,
        error: attempt.error,
        latency_ms: attempt.latencyMs,
        attempted_at: toIso(now),
      },
    },
    200,
  );
};

async function visibleEndpoint(c: Context<AppEnv>, db: Db, id: string) {
  const auth = c.get('auth');
  const row = await endpoints.findEndpoint(db, { ownerId: auth.ownerId, isAdmin: auth.role === 'admin' }, c.env.ENVIRONMENT, id);
  if (!row) throw new ApiError('webhook_endpoint_not_found');
  return row;
}
