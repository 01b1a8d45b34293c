import type { AppOpenAPI } from '../../lib/openapi.ts';
import * as handlers from './webhook-endpoints.handlers.ts';
import * as routes from './webhook-endpoints.routes.ts';

export function registerWebhookEndpointRoutes(app: AppOpenAPI) {
  app.openapi(routes.createWebhookEndpoint, handlers.createWebhookEndpoint);
  app.openapi(routes.listWebhookEndpoints, handlers.listWebhookEndpoints);
  app.openapi(routes.getWebhookEndpoint, handlers.getWebhookEndpoint);
  app.openapi(routes.updateWebhookEndpoint, handlers.updateWebhookEndpoint);
  app.openapi(routes.deleteWebhookEndpoint, handlers.deleteWebhookEndpoint);
  app.openapi(routes.rotateWebhookEndpointSecret, handlers.rotateWebhookEndpointSecret);
  app.openapi(routes.testWebhookEndpoint, handlers.testWebhookEndpoint);
  app.openAPIRegistry.registerWebhook(routes.pingWebhook);
}
