import { swaggerUI } from '@hono/swagger-ui';
import type { Context, Next } from 'hono';
import type { AppEnv, AppOpenAPI, AppRouteHandler } from '../../lib/openapi.ts';
import { sha256Hex } from '../../lib/encoding.ts';
import { completeDescription } from './docs.description.ts';
import type * as routes from './docs.routes.ts';
import { OPENAPI_INFO, OPENAPI_TAGS } from './docs.schemas.ts';

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

/**
 * `/openapi.json`: the description of `app`, as generated from its routes and completed
 * (docs.description.ts), with a strong `ETag`, the SHA-256 of the exact bytes: the checksum a client keeps
 * of the description it built against. Computed here over the whole text (hono's etag middleware hashes
 * large bodies chunk by chunk, which is no plain SHA-256). `no-cache`: always revalidate.
 */
export const description =
  (app: AppOpenAPI): AppRouteHandler<typeof routes.getOpenApiDescription> =>
  async (c) => {
    const used = operationTags(app);
    const document = app.getOpenAPI31Document({
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
      // Only the groups this deployment has operations in (`live` has no test helpers).
      tags: OPENAPI_TAGS.filter(({ name }) => used.has(name)),
    });
    const text = JSON.stringify(completeDescription(document));
    const etag = `"${await sha256Hex(text)}"`;
    c.header('ETag', etag);
    c.header('Cache-Control', 'no-cache');
    if (matchesEtag(c.req.header('If-None-Match'), etag)) return c.body(null, 304) as never;
    return c.body(text, 200, { 'Content-Type': 'application/json' }) as never;
  };

/** The tags of `app`'s described operations. */
function operationTags(app: AppOpenAPI): Set<string> {
  return new Set(
    app.openAPIRegistry.definitions.flatMap((definition) =>
      definition.type === 'route' ? (definition.route.tags ?? []) : [],
    ),
  );
}

/** `If-None-Match` compares weakly (RFC 9110 13.1.2): `W/` is ignored, `*` matches any. */
function matchesEtag(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}
