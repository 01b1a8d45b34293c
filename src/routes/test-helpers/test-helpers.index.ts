import { openapiPerValue, type AppOpenAPI } from '../../lib/openapi.ts';
import * as handlers from './test-helpers.handlers.ts';
import * as routes from './test-helpers.routes.ts';

export function registerTestHelperRoutes(app: AppOpenAPI) {
  app.openapi(routes.simulateDispute, handlers.simulateDispute);
  // Beside `.../{payment_id}/dispute`: one route per action (lib/openapi.ts).
  openapiPerValue(app, routes.simulateProcessorNotification, 'action', handlers.simulateProcessorNotification);
  app.openapi(routes.simulateDisputeClose, handlers.simulateDisputeClose);
  app.openapi(routes.simulateRefundFailure, handlers.simulateRefundFailure);
  app.openapi(routes.simulateTerminalStatus, handlers.simulateTerminalStatus);
}
