import type { AppOpenAPI } from '../../lib/openapi.ts';
import * as handlers from './account-payment-methods.handlers.ts';
import * as routes from './account-payment-methods.routes.ts';

export function registerAccountPaymentMethodRoutes(app: AppOpenAPI) {
  app.openapi(routes.createAccountPaymentMethod, handlers.createAccountPaymentMethod);
  app.openapi(routes.listAccountPaymentMethods, handlers.listAccountPaymentMethods);
  app.openapi(routes.getAccountPaymentMethod, handlers.getAccountPaymentMethod);
  app.openapi(routes.updateAccountPaymentMethod, handlers.updateAccountPaymentMethod);
  app.openapi(routes.deleteAccountPaymentMethod, handlers.deleteAccountPaymentMethod);
  app.openapi(routes.linkApiKey, handlers.linkApiKey);
  app.openapi(routes.disableApiKeyLink, handlers.disableApiKeyLink);
}
