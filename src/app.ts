import type { Environment } from './domain/environment.ts';
import { createRouter, type AppOpenAPI } from './lib/openapi.ts';
import { accessLog } from './middleware/access-log.ts';
import { handleError, handleNotFound } from './middleware/error-handler.ts';
import { declareBodyGateResponses, inputGate } from './middleware/json-body.ts';
import { requestContext } from './middleware/request-context.ts';
import { registerDocs } from './routes/docs/docs.index.ts';
import { registerDashboard } from './routes/dashboard/dashboard.index.ts';
import { registerAuthRoutes } from './routes/auth/auth.index.ts';
import { registerUserRoutes } from './routes/users/users.index.ts';
import { registerPlacementRoutes } from './routes/placements/placements.index.ts';
import { registerApiKeyRoutes } from './routes/api-keys/api-keys.index.ts';
import { registerConnectorRoutes } from './routes/connectors/connectors.index.ts';
import { registerAccountPaymentMethodRoutes } from './routes/account-payment-methods/account-payment-methods.index.ts';
import { registerPaymentMethodRoutes } from './routes/payment-methods/payment-methods.index.ts';
import { registerPaymentRoutes } from './routes/payments/payments.index.ts';
import { registerDisputeRoutes } from './routes/disputes/disputes.index.ts';
import { registerEventRoutes } from './routes/events/events.index.ts';
import { registerReportRoutes } from './routes/reports/reports.index.ts';
import { registerProcessorNotificationRoutes } from './routes/processor-notifications/processor-notifications.index.ts';
import { registerTestHelperRoutes } from './routes/test-helpers/test-helpers.index.ts';
import { registerWebhookSecretRoutes } from './routes/webhook-secret/webhook-secret.index.ts';
import { registerWebhookEndpointRoutes } from './routes/webhook-endpoints/webhook-endpoints.index.ts';

/**
 * The whole HTTP surface of a deployment serving `environment`: conventions first (request id, access log, input
 * gate, error envelope), then the routes.
 */
export function createApp(environment: Environment) {
  const app = createRouter();
  app.use('*', requestContext);
  app.use('*', accessLog);
  app.use('/v1/*', inputGate(app));
  app.onError(handleError);
  app.notFound(handleNotFound);

  registerAuthRoutes(app);
  registerUserRoutes(app);
  registerPlacementRoutes(app);
  registerApiKeyRoutes(app);
  registerConnectorRoutes(app);
  registerAccountPaymentMethodRoutes(app);
  registerPaymentMethodRoutes(app);
  registerPaymentRoutes(app);
  registerDisputeRoutes(app);
  registerEventRoutes(app);
  registerReportRoutes(app);
  registerWebhookSecretRoutes(app);
  registerWebhookEndpointRoutes(app);
  registerProcessorNotificationRoutes(app);
  // A live deployment has no simulator (as Stripe's live mode has no test helpers): there the helpers are neither
  // described nor routed, so they answer the unknown-route 404 before anything asks for a credential.
  if (environment === 'test') registerTestHelperRoutes(app);
  registerDocs(app);
  registerDashboard(app);
  declareBodyGateResponses(app);
  return app;
}

const apps = new Map<Environment, AppOpenAPI>();

/** The app of a deployment's environment, built when first asked for: a deployment only ever asks for its own. */
export function appOf(environment: Environment): AppOpenAPI {
  let app = apps.get(environment);
  if (!app) {
    app = createApp(environment);
    apps.set(environment, app);
  }
  return app;
}
