import type { AppOpenAPI } from '../../lib/openapi.ts';
import * as handlers from './processor-notifications.handlers.ts';
import * as routes from './processor-notifications.routes.ts';

export function registerProcessorNotificationRoutes(app: AppOpenAPI) {
  app.openapi(routes.receiveProcessorNotification, handlers.receiveProcessorNotification);
}
