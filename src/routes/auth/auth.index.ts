import type { AppOpenAPI } from '../../lib/openapi.ts';
import * as handlers from './auth.handlers.ts';
import * as routes from './auth.routes.ts';

export function registerAuthRoutes(app: AppOpenAPI) {
  app.openapi(routes.login, handlers.login);
  app.openapi(routes.refresh, handlers.refresh);
  app.openapi(routes.logout, handlers.logout);
  app.openapi(routes.me, handlers.me);
}
