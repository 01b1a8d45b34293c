import type { AppOpenAPI } from '../../lib/openapi.ts';
import * as handlers from './test-helpers.handlers.ts';
import * as routes from './test-helpers.routes.ts';

export function registerTestHelperRoutes(app: AppOpenAPI) {
  app.openapi(routes.simulateProcessorNotification, handlers.simulateProcessorNotification);
  app.openapi(routes.simulateRefundFailure, handlers.simulateRefundFailure);
  app.openapi(routes.simulateTerminalStatus, handlers.simulateTerminalStatus);
}
