import type { AppOpenAPI } from '../../lib/openapi.ts';
import * as handlers from './events.handlers.ts';
import * as routes from './events.routes.ts';

export function registerEventRoutes(app: AppOpenAPI) {
  app.openapi(routes.listEvents, handlers.listEvents);
  app.openapi(routes.listPaymentEvents, handlers.listPaymentEvents);
  app.openapi(routes.redeliverPaymentEvent, handlers.redeliverPaymentEvent);
  for (const webhook of routes.eventWebhooks) app.openAPIRegistry.registerWebhook(webhook);
}
