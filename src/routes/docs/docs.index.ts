import { etag } from 'hono/etag';
import { BEARER_AUTH, type AppOpenAPI } from '../../lib/openapi.ts';
import { explorer, explorerAsset } from './docs.handlers.ts';
import { OPENAPI_INFO, OPENAPI_TAGS } from './docs.schemas.ts';

/** The served description (/openapi.json) and its explorer (/docs); these routes are not API operations. */
export function registerDocs(app: AppOpenAPI) {
  app.openAPIRegistry.registerComponent('securitySchemes', BEARER_AUTH, {
    type: 'http',
    scheme: 'bearer',
    description: 'An API key (`sk_test_...`, `sk_live_...`) or a user access token (JWT) from `POST /v1/auth/login`.',
  });

  // A strong ETag (SHA-256 of the exact bytes) is the checksum a client keeps of the description it built
  // against; `If-None-Match` answers 304. `no-cache`: always revalidate, never serve a stale contract.
  app.use(
    '/openapi.json',
    etag({ generateDigest: (body) => crypto.subtle.digest('SHA-256', body) }),
    async (c, next) => {
      await next();
      c.header('Cache-Control', 'no-cache');
    },
  );
  app.doc31('/openapi.json', (c) => ({
    openapi: '3.1.0',
    info: OPENAPI_INFO,
    // `x-internal: false`: the audience is merchants (OWASP API9 inventory).
    servers: [
      {
        url: new URL(c.req.url).origin,
        description: `This deployment (${c.get('deps').environment})`,
        'x-internal': false,
      },
    ],
    tags: OPENAPI_TAGS,
  }));

  app.get('/docs', explorer);
  app.get('/docs/assets/*', explorerAsset);
}
