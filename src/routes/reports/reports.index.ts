import type { AppOpenAPI } from '../../lib/openapi.ts';
import * as handlers from './reports.handlers.ts';
import * as routes from './reports.routes.ts';

export function registerReportRoutes(app: AppOpenAPI) {
  app.openapi(routes.reportPayments, handlers.reportPayments);
}
