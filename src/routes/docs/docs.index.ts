import { BEARER_AUTH, type AppOpenAPI } from '../../lib/openapi.ts';
import { description, explorer, explorerAsset } from './docs.handlers.ts';
import * as routes from './docs.routes.ts';

/** The served description (/openapi.json, an operation of its own) and its explorer (/docs, which is not). */
export function registerDocs(app: AppOpenAPI) {
  app.openAPIRegistry.registerComponent('securitySchemes', BEARER_AUTH, {
    type: 'http',
    scheme: 'bearer',
    description: 'An API key (`sk_test_...`, `sk_live_...`) or a user access token (JWT) from `POST /v1/auth/login`.',
  });

  app.openapi(routes.getOpenApiDescription, description(app));

  app.get('/docs', explorer);
  app.get('/docs/assets/*', explorerAsset);
}
