import type { AppOpenAPI } from '../../lib/openapi.ts';
import * as handlers from './connectors.handlers.ts';
import * as routes from './connectors.routes.ts';

export function registerConnectorRoutes(app: AppOpenAPI) {
  app.openapi(routes.listConnectors, handlers.listConnectors);
}
