// What the browser tests share (docs-browser.test.ts, dashboard-browser.test.ts): Debian's Chromium through
// playwright-core (never a downloaded browser), a context from which no request leaves this machine and in
// which CSP violations are collected, and plain API calls to seed what the pages show.
import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';
const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does it)`);
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * A context in which every request to another host is aborted and recorded in `leftLocal`, and every CSP
 * violation is kept in the page (`cspViolations`).
 */
export async function guardedContext(
  browser: Browser,
  options: BrowserContextOptions = {},
): Promise<{ context: BrowserContext; leftLocal: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 1000 }, ...options });
  const leftLocal: string[] = [];
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if ((url.protocol === 'http:' || url.protocol === 'https:') && LOCAL_HOSTS.has(url.hostname))
      return route.continue();
    leftLocal.push(route.request().url());
    return route.abort('blockedbyclient');
  });
  // CSP violations are reported both on the console and as `securitypolicyviolation` events.
  // (Page-side code as text: this project compiles without the DOM library.)
  await context.addInitScript({
    content: `window.__cspViolations = [];
      document.addEventListener('securitypolicyviolation', (e) => window.__cspViolations.push(e.violatedDirective + ' ' + e.blockedURI));`,
  });
  return { context, leftLocal };
}

export const cspViolations = (page: Page): Promise<string[]> => page.evaluate('window.__cspViolations');

/** One call to the local server's API, as a test seeds or checks what a page shows. */
export async function api<T = any>(
  base: string,
  method: string,
  path: string,
  options: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: T }> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.Authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(`${base}${path}`, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
}
