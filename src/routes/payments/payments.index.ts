import type { AppOpenAPI } from '../../lib/openapi.ts';
import * as handlers from './payments.handlers.ts';
import * as routes from './payments.routes.ts';

export function registerPaymentRoutes(app: AppOpenAPI) {
  app.openapi(routes.createPayment, handlers.createPayment);
  app.openapi(routes.listPayments, handlers.listPayments);
  app.openapi(routes.getPayment, handlers.getPayment);
  app.openapi(routes.cancelPayment, handlers.cancelPayment);
  app.openapi(routes.createRefund, handlers.createRefund);
  app.openapi(routes.listRefunds, handlers.listRefunds);
  app.openapi(routes.getRefund, handlers.getRefund);
}
