import { swaggerUI } from '@hono/swagger-ui';
import type { Context, Next } from 'hono';
import type { AppEnv } from '../../lib/openapi.ts';

/** Strict CSP for the explorer: its scripts and styles are the Worker's own static assets, no inline code. */
export const DOCS_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

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

/** The API explorer (Swagger UI) over /openapi.json. */
export async function explorer(c: Context<AppEnv>, next: Next) {
  // The middleware answers with its own Response (it does not set c.res), so that one is returned.
  const res = (await ui(c as never, next)) as Response;
  res.headers.set('Content-Security-Policy', DOCS_CSP);
  res.headers.set('X-Content-Type-Options', 'nosniff');
  res.headers.set('Referrer-Policy', 'no-referrer');
  return res;
}

/**
 * The explorer's files (public/docs/assets) pass through the Worker (`run_worker_first` in
 * wrangler.toml), so they carry `X-Request-Id` like every other response.
 */
export async function explorerAsset(c: Context<AppEnv>) {
  const res = await c.env.ASSETS.fetch(c.req.raw);
  return res.status === 404 ? c.notFound() : res;
}
