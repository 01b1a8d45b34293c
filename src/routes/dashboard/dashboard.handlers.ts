import type { Context } from 'hono';
import type { AppEnv } from '../../lib/openapi.ts';

/**
 * The dashboard's policy: the explorer's (docs.handlers.ts) less what the dashboard never loads (fonts,
 * `data:` images; its QR codes are drawn as inline SVG). Its API calls go to this origin only.
 */
export const DASHBOARD_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** Where the build (scripts/build-dashboard.mjs) puts the app's page; the assets binding serves a folder's index.html. */
const SHELL = '/dashboard/';

/**
 * The deployment's environment written into the page, so the sign-in form shows the `TEST` banner before any
 * token names the environment (signed in, the app reads the token's `env` claim).
 */
function withEnvironment(shell: Response, environment: string | undefined): Response {
  if (environment !== 'test' && environment !== 'live') return shell;
  const meta = `<meta name="deployment-environment" content="${environment}" />`;
  return new HTMLRewriter().on('head', { element: (head) => void head.append(meta, { html: true }) }).transform(shell);
}

/**
 * Every `/dashboard` path that is not one of its files answers the app's page, so a deep link or a reload
 * of `/dashboard/payments/pay_...` opens that page; the app routes in the browser. `no-cache`: a new build
 * is picked up at the next load.
 */
export async function dashboardShell(c: Context<AppEnv>) {
  const shell = await c.env.ASSETS.fetch(new Request(new URL(SHELL, c.req.url), { method: c.req.method }));
  if (!shell.ok) return c.notFound();
  const page = withEnvironment(shell, c.env.ENVIRONMENT);
  const res = new Response(page.body, page);
  // The file's length and tag describe the file, not the page with its environment (a HEAD keeps them otherwise).
  res.headers.delete('Content-Length');
  res.headers.delete('ETag');
  res.headers.set('Content-Security-Policy', DASHBOARD_CSP);
  res.headers.set('X-Content-Type-Options', 'nosniff');
  res.headers.set('Referrer-Policy', 'no-referrer');
  res.headers.set('Cache-Control', 'no-cache');
  return res;
}

/**
 * The app's files (public/dashboard/assets), named by their content's hash, so they are kept for a year. A
 * missing one is a 404 in the envelope, never the app's page.
 */
export async function dashboardAsset(c: Context<AppEnv>) {
  const asset = await c.env.ASSETS.fetch(c.req.raw);
  if (asset.status === 404) return c.notFound();
  const res = new Response(asset.body, asset);
  res.headers.set('X-Content-Type-Options', 'nosniff');
  if (asset.ok) res.headers.set('Cache-Control', 'public, max-age=31536000, immutable');
  return res;
}
