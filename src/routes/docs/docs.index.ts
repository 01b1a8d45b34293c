import { swaggerUI } from '@hono/swagger-ui';
import { etag } from 'hono/etag';
import type { AppOpenAPI } from '../../lib/openapi.ts';
import { BEARER_AUTH } from '../../lib/openapi.ts';

export const OPENAPI_INFO = {
  title: 'Payment Service API',
  // Raised with every API change, with its CHANGELOG.md entry (README "Compatibility and deprecation").
  version: '1.1.0',
  description: [
    'One normalized API in front of several payment processors.',
    '',
    '- Amounts are `{ "value": "<decimal string>", "currency": "<ISO 4217>" }`; the value is never a number.',
    '- Single resources come as `{ "data": ... }`, lists as `{ "data": [...], "pagination": { "limit", "offset", "total" } }`,',
    '  errors as `{ "error": { "code", "message", "category", "retryable", "request_id", "details" } }`.',
    '- Every response carries `X-Request-Id` (`req_...`); quote it, with the environment, when reporting a problem.',
    '- Timestamps are ISO 8601 UTC with milliseconds. Request bodies are JSON objects of at most 64 KiB',
    '  (`413 invalid_request` beyond, `415 invalid_request` for another Content-Type); unknown fields are refused.',
    '- Authenticate with `Authorization: Bearer <credential>`: an API key (`sk_test_...` / `sk_live_...`) on business',
    '  routes, or a user access token (JWT) from `POST /v1/auth/login` on business and management routes.',
    '- Each deployment serves one environment (`test` or `live`); a key or token of the other environment is refused.',
    '- Payments may gain fields, `action.type` values and event types over time; tolerate unknown ones. Added so far:',
    '  `charged_back_at` (the payer’s bank took the money back; event `payment.charged_back`), and a `pending`',
    '  payment with `action.type: check_terminal` (someone must check the terminal; event `payment.action_required`).',
  ].join('\n'),
};

/** The operation groups, in the explorer's order. */
export const OPENAPI_TAGS = [
  { name: 'Sessions', description: 'Log in, refresh and log out; the current user.' },
  { name: 'Users', description: 'User accounts (admins).' },
  { name: 'API keys', description: 'API keys of the calling user (admins: of any user).' },
  { name: 'Connectors', description: 'Processor connectors and the versions a payment method is created from.' },
  { name: 'Account payment methods', description: 'Configure payment methods and enable them for API keys.' },
  { name: 'Payment methods', description: 'The payment methods enabled for the caller.' },
  { name: 'Payments', description: 'Create, read and cancel payments.' },
  { name: 'Refunds', description: 'Refund approved payments, partially or fully.' },
  { name: 'Webhooks', description: 'Payment events, their deliveries and the signing secret.' },
  { name: 'Processor notifications', description: "Processors' asynchronous news about payments." },
  { name: 'Test helpers', description: 'Simulate processor news (`test` environment only).' },
];

/** Strict CSP for the explorer: its scripts and styles are the Worker's own static assets, no inline code. */
export const DOCS_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export function registerDocs(app: AppOpenAPI) {
  app.openAPIRegistry.registerComponent('securitySchemes', BEARER_AUTH, {
    type: 'http',
    scheme: 'bearer',
    description: 'An API key (`sk_test_...`, `sk_live_...`) or a user access token (JWT) from `POST /v1/auth/login`.',
  });

  // A strong ETag (SHA-256 of the exact bytes) is the checksum a client keeps of the description it built
  // against; `If-None-Match` answers 304. `no-cache`: always revalidate, never serve a stale contract.
  app.use('/openapi.json', etag({ generateDigest: (body) => crypto.subtle.digest('SHA-256', body) }), async (c, next) => {
    await next();
    c.header('Cache-Control', 'no-cache');
  });
  app.doc31('/openapi.json', (c) => ({
    openapi: '3.1.0',
    info: OPENAPI_INFO,
    // `x-internal: false`: the audience is merchants (OWASP API9 inventory).
    servers: [{ url: new URL(c.req.url).origin, description: `This deployment (${c.env.ENVIRONMENT})`, 'x-internal': false }],
    tags: OPENAPI_TAGS,
  }));

  const ui = swaggerUI({
    url: '/openapi.json',
    title: 'Payment Service API',
    // Assets are served from this Worker (public/docs/assets), never from a CDN.
    baseUrl: '/docs/assets',
    manuallySwaggerUIHtml: (asset) => `
      <div id="swagger-ui"></div>
      ${asset.css.map((href) => `<link rel="stylesheet" href="${href}" />`).join('')}
      ${asset.js.map((src) => `<script src="${src}"></script>`).join('')}
      <script src="/docs/assets/init.js"></script>`,
  });
  app.get('/docs', async (c, next) => {
    // The middleware answers with its own Response (it does not set c.res), so that one is returned.
    const res = (await ui(c as never, next)) as Response;
    res.headers.set('Content-Security-Policy', DOCS_CSP);
    res.headers.set('X-Content-Type-Options', 'nosniff');
    res.headers.set('Referrer-Policy', 'no-referrer');
    return res;
  });

  // The explorer's files (public/docs/assets) pass through the Worker (`run_worker_first` in
  // wrangler.toml), so they carry `X-Request-Id` like every other response.
  app.get('/docs/assets/*', async (c) => {
    const res = await c.env.ASSETS.fetch(c.req.raw);
    return res.status === 404 ? c.notFound() : res;
  });
}
