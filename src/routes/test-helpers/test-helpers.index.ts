import { registerOnOnePath, type AppOpenAPI } from '../../lib/openapi.ts';
import * as handlers from './test-helpers.handlers.ts';
import * as routes from './test-helpers.routes.ts';

export function registerTestHelperRoutes(app: AppOpenAPI) {
  // `.../{payment_id}/dispute` and `.../{payment_id}/{action}` run behind one route: `dispute` is not an action.
  registerOnOnePath(app, [
    (router) => router.openapi(routes.simulateDispute, handlers.simulateDispute),
    (router) => router.openapi(routes.simulateProcessorNotification, handlers.simulateProcessorNotification),
  ]);
  app.openapi(routes.simulateDisputeClose, handlers.simulateDisputeClose);
  app.openapi(routes.simulateRefundFailure, handlers.simulateRefundFailure);
  app.openapi(routes.simulateTerminalStatus, handlers.simulateTerminalStatus);
}
