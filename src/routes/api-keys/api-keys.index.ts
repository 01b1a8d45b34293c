import type { AppOpenAPI } from '../../lib/openapi.ts';
import * as handlers from './api-keys.handlers.ts';
import * as routes from './api-keys.routes.ts';

export function registerApiKeyRoutes(app: AppOpenAPI) {
  app.openapi(routes.createApiKey, handlers.createApiKey);
  app.openapi(routes.listApiKeys, handlers.listApiKeys);
  app.openapi(routes.revokeApiKey, handlers.revokeApiKey);
}
