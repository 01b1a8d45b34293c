import type { AppOpenAPI } from '../../lib/openapi.ts';
import * as handlers from './test-helpers.handlers.ts';
import * as routes from './test-helpers.routes.ts';

export function registerTestHelperRoutes(app: AppOpenAPI) {
  // Before the `{action}` route, whose path it shares: `dispute` is not one of its actions.
  app.openapi(routes.simulateDispute, handlers.simulateDispute);
  app.openapi(routes.simulateProcessorNotification, handlers.simulateProcessorNotification);
  app.openapi(routes.simulateDisputeClose, handlers.simulateDisputeClose);
  app.openapi(routes.simulateRefundFailure, handlers.simulateRefundFailure);
  app.openapi(routes.simulateTerminalStatus, handlers.simulateTerminalStatus);
}
