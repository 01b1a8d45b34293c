import type { AppRouteHandler } from '../../lib/openapi.ts';
import { toIsoOrNull } from '../../lib/time.ts';
import { resolveOwner } from '../../services/owners.ts';
import * as secrets from '../../services/webhooks/secrets.ts';
import type * as routes from './webhook-secret.routes.ts';

const view = (current: secrets.WebhookSecrets) => ({
  secret: current.current,
  previous_secret_expires_at: toIsoOrNull(current.previousExpiresAt),
});

export const getWebhookSecret: AppRouteHandler<typeof routes.getWebhookSecret> = async (c) => {
  const deps = c.get('deps');
  const { owner, deps: onShard } = await resolveOwner(deps, c.get('auth'), c.req.valid('query').user_id, 'GET');
  return c.json({ data: view(await secrets.getWebhookSecrets(onShard, owner.id)) }, 200);
};

export const rotateWebhookSecret: AppRouteHandler<typeof routes.rotateWebhookSecret> = async (c) =>
  c.json({ data: view(await secrets.rotateWebhookSecret(c.get('deps'), c.get('auth').ownerId)) }, 200);
