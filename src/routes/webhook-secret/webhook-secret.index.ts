import type { AppOpenAPI } from '../../lib/openapi.ts';
import * as handlers from './webhook-secret.handlers.ts';
import * as routes from './webhook-secret.routes.ts';

export function registerWebhookSecretRoutes(app: AppOpenAPI) {
  app.openapi(routes.getWebhookSecret, handlers.getWebhookSecret);
  app.openapi(routes.rotateWebhookSecret, handlers.rotateWebhookSecret);
}
