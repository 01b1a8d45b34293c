import type { Context } from 'hono';
import type { WebhookEndpointRow } from '../../db/schema/index.ts';
import { ServiceError } from '../../lib/errors.ts';
import { pageOf, paginationOf, type AppEnv, type AppRouteHandler } from '../../lib/openapi.ts';
import { toIso, toIsoOrNull } from '../../lib/time.ts';
import { resolveOwner } from '../../services/owners.ts';
import { pingEndpoint } from '../../services/webhooks/endpoints/ping.ts';
import { rotateEndpointSecret } from '../../services/webhooks/endpoints/secrets.ts';
import * as endpoints from '../../services/webhooks/endpoints/store.ts';
import type { WebhookSecrets } from '../../services/webhooks/secrets.ts';
import type * as routes from './webhook-endpoints.routes.ts';

const withSecret = (row: WebhookEndpointRow, secrets: WebhookSecrets) => ({
  ...endpoints.toWebhookEndpoint(row),
  secret: secrets.current,
  previous_secret_expires_at: toIsoOrNull(secrets.previousExpiresAt),
});

export const createWebhookEndpoint: AppRouteHandler<typeof routes.createWebhookEndpoint> = async (c) => {
  const deps = c.get('deps');
  const { user_id, ...input } = c.req.valid('json');
  const { owner, deps: onShard } = await resolveOwner(deps, c.get('auth'), user_id, c.req.method);
  const { row, secret } = await endpoints.createEndpoint(onShard, owner.id, input);
  return c.json({ data: withSecret(row, secret) }, 201);
};

export const listWebhookEndpoints: AppRouteHandler<typeof routes.listWebhookEndpoints> = async (c) => {
  const deps = c.get('deps');
  const query = c.req.valid('query');
  const page = pageOf(query);
  const { owner, deps: onShard } = await resolveOwner(deps, c.get('auth'), query.user_id, c.req.method);
  const listed = await endpoints.listEndpoints(onShard, owner.id, page);
  return c.json({ data: listed.rows.map(endpoints.toWebhookEndpoint), pagination: paginationOf(page, listed) }, 200);
};

export const getWebhookEndpoint: AppRouteHandler<typeof routes.getWebhookEndpoint> = async (c) => {
  const row = await visibleEndpoint(c, c.req.valid('param').webhook_endpoint_id);
  return c.json({ data: endpoints.toWebhookEndpoint(row) }, 200);
};

export const updateWebhookEndpoint: AppRouteHandler<typeof routes.updateWebhookEndpoint> = async (c) => {
  const row = await visibleEndpoint(c, c.req.valid('param').webhook_endpoint_id);
  const updated = await endpoints.updateEndpoint(c.get('deps'), row, c.req.valid('json'));
  // Deleted meanwhile.
  if (!updated) throw new ServiceError('webhook_endpoint_not_found');
  return c.json({ data: endpoints.toWebhookEndpoint(updated) }, 200);
};

export const deleteWebhookEndpoint: AppRouteHandler<typeof routes.deleteWebhookEndpoint> = async (c) => {
  const row = await visibleEndpoint(c, c.req.valid('param').webhook_endpoint_id);
  await endpoints.deleteEndpoint(c.get('deps'), row);
  return c.body(null, 204);
};

export const rotateWebhookEndpointSecret: AppRouteHandler<typeof routes.rotateWebhookEndpointSecret> = async (c) => {
  const row = await visibleEndpoint(c, c.req.valid('param').webhook_endpoint_id);
  const rotated = await rotateEndpointSecret(c.get('deps'), row);
  if (!rotated) throw new ServiceError('webhook_endpoint_not_found');
  return c.json({ data: withSecret(rotated.row, rotated.secrets) }, 200);
};

export const testWebhookEndpoint: AppRouteHandler<typeof routes.testWebhookEndpoint> = async (c) => {
  const row = await visibleEndpoint(c, c.req.valid('param').webhook_endpoint_id);
  const now = Date.now();
  const { id, attempt } = await pingEndpoint(c.get('deps'), row, now);
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

/** The endpoint, with the request's dependencies moved to its owner's shard (an admin's may be another owner's). */
async function visibleEndpoint(c: Context<AppEnv>, id: string) {
  const auth = c.get('auth');
  const found = await endpoints.findEndpoint(
    c.get('deps'),
    { ownerId: auth.ownerId, isAdmin: auth.role === 'admin' },
    id,
    c.req.method,
  );
  if (!found) throw new ServiceError('webhook_endpoint_not_found');
  c.set('deps', found.deps);
  return found.row;
}
