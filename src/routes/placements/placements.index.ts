import type { AppOpenAPI } from '../../lib/openapi.ts';
import * as handlers from './placements.handlers.ts';
import * as routes from './placements.routes.ts';

export function registerPlacementRoutes(app: AppOpenAPI) {
  app.openapi(routes.getPlacement, handlers.getPlacement);
  app.openapi(routes.placeOwner, handlers.placeOwner);
}
