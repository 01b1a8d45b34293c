import { describe, expect, it } from 'vitest';
import { DASHBOARD_CSP } from '../../src/routes/dashboard/dashboard.handlers.ts';
import { call, expectError } from '../helpers/api.ts';

/**
 * The dashboard's page and files, served by the Worker from the static assets (public/dashboard, built by
 * `npm install`). The app itself is tested in a browser (test-node/dashboard-browser.test.ts).
 */

/** The files the page names (its script and stylesheet, and the icon). */
function assetsOf(html: string): string[] {
  return [...html.matchAll(/\b(?:src|href)="([^"]+)"/g)].map((match) => match[1]!);
}

describe('GET /dashboard', () => {
  it('answers the app’s page under the strict CSP, uncached, with a request id', async () => {
    const res = await call('GET', '/dashboard');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('content-security-policy')).toBe(DASHBOARD_CSP);
    expect(DASHBOARD_CSP).toContain("connect-src 'self'");
    expect(DASHBOARD_CSP).toContain("script-src 'self';");
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    expect(res.text).toContain('<div id="app"></div>');
  });

  it('names its deployment’s environment in the page, for the sign-in form’s TEST banner', async () => {
    const { text } = await call('GET', '/dashboard/payments');
    const head = text.slice(text.indexOf('<head>'), text.indexOf('</head>'));
    expect(head).toContain('<meta name="deployment-environment" content="test" />');
    expect(text.match(/deployment-environment/g)).toHaveLength(1);
    expect(text.trimEnd().endsWith('</html>')).toBe(true);
  });

  it('answers HEAD with the page’s headers, none that describe the file without the environment', async () => {
    const get = await call('GET', '/dashboard');
    const head = await call('HEAD', '/dashboard');
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
    expect(head.headers.get('content-security-policy')).toBe(DASHBOARD_CSP);
    const length = head.headers.get('content-length');
    if (length !== null) expect(Number(length)).toBe(new TextEncoder().encode(get.text).length);
    expect(head.headers.get('etag')).toBeNull();
  });

  it('loads only files of its own, no inline script and no inline style', async () => {
    const { text } = await call('GET', '/dashboard');
    const assets = assetsOf(text);
    expect(assets.some((a) => /^\/dashboard\/assets\/app-[A-Z0-9]+\.js$/.test(a))).toBe(true);
    expect(assets.some((a) => /^\/dashboard\/assets\/app-[A-Z0-9]+\.css$/.test(a))).toBe(true);
    for (const asset of assets) expect(asset).toMatch(/^\/dashboard\/assets\//);
    expect(text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(text).not.toMatch(/\sstyle=/);
  });

  it('answers the same page for every deep link, query included', async () => {
    const page = (await call('GET', '/dashboard')).text;
    for (const path of [
      '/dashboard/',
      '/dashboard/payments',
      '/dashboard/payments/pay_3kqz7w1v0c9m2x8bq4n6?status=approved',
      '/dashboard/no/such/page',
    ]) {
      const res = await call('GET', path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-security-policy'), path).toBe(DASHBOARD_CSP);
      expect(res.text, path).toBe(page);
    }
  });

  it('serves its hashed files for a year, each with its type', async () => {
    const { text } = await call('GET', '/dashboard');
    for (const asset of assetsOf(text)) {
      const res = await call('GET', asset);
      expect(res.status, asset).toBe(200);
      expect(res.headers.get('content-type'), asset).toMatch(
        asset.endsWith('.js') ? /javascript/ : asset.endsWith('.css') ? /^text\/css/ : /^image\/svg\+xml/,
      );
      expect(res.text.length, asset).toBeGreaterThan(0);
    }
    const script = assetsOf(text).find((a) => a.endsWith('.js'))!;
    expect((await call('GET', script)).headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
  });
});

describe('what /dashboard does not answer', () => {
  it('a missing file under /dashboard/assets is 404 in the envelope, never the page', async () => {
    for (const path of ['/dashboard/assets/app-MISSING.js', '/dashboard/assets/', '/dashboard/assets/x/../y.css'])
      expectError(await call('GET', path), 404, 'not_found');
  });

  it('a missing file under /docs/assets stays 404', async () => {
    expectError(await call('GET', '/docs/assets/no-such-file.js'), 404, 'not_found');
    expectError(await call('GET', '/docs/assets/dashboard/index.html'), 404, 'not_found');
  });

  it('other methods, and paths that only begin like it, are 404', async () => {
    expectError(await call('POST', '/dashboard', { body: {} }), 404, 'not_found');
    expectError(await call('DELETE', '/dashboard/payments'), 404, 'not_found');
    expectError(await call('GET', '/dashboards'), 404, 'not_found');
    expectError(await call('GET', '/dashboard.html'), 404, 'not_found');
  });
});
