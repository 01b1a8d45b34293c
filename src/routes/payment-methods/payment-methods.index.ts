import type { AppOpenAPI } from '../../lib/openapi.ts';
import * as handlers from './payment-methods.handlers.ts';
import * as routes from './payment-methods.routes.ts';

export function registerPaymentMethodRoutes(app: AppOpenAPI) {
  app.openapi(routes.listPaymentMethods, handlers.listPaymentMethods);
  app.openapi(routes.getPaymentMethod, handlers.getPaymentMethod);
  app.openapi(routes.getPaymentMethodTerminal, handlers.getPaymentMethodTerminal);
}
