import type { AppOpenAPI } from '../../lib/openapi.ts';
import * as handlers from './disputes.handlers.ts';
import * as routes from './disputes.routes.ts';

export function registerDisputeRoutes(app: AppOpenAPI) {
  app.openapi(routes.listDisputes, handlers.listDisputes);
  app.openapi(routes.getDispute, handlers.getDispute);
  app.openapi(routes.listPaymentDisputes, handlers.listPaymentDisputes);
}
