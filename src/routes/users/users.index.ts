import type { AppOpenAPI } from '../../lib/openapi.ts';
import * as handlers from './users.handlers.ts';
import * as routes from './users.routes.ts';

export function registerUserRoutes(app: AppOpenAPI) {
  app.openapi(routes.createUser, handlers.createUser);
  app.openapi(routes.listUsers, handlers.listUsers);
  app.openapi(routes.getUser, handlers.getUser);
  app.openapi(routes.updateUser, handlers.updateUser);
}
