import type { AppOpenAPI } from '../../lib/openapi.ts';
import { dashboardAsset, dashboardShell } from './dashboard.handlers.ts';

/**
 * The merchant dashboard (dashboard/, docs/dashboard.md): a browser client of the public API, served from the
 * static assets. Not an API operation, so not in /openapi.json.
 */
export function registerDashboard(app: AppOpenAPI) {
  app.get('/dashboard/assets/*', dashboardAsset);
  app.get('/dashboard', dashboardShell);
  app.get('/dashboard/*', dashboardShell);
}
