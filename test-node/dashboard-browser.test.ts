// The merchant dashboard (/dashboard) in a real browser (Debian's Chromium through playwright-core), as a
// support person uses it: sign in, find a payment by its external reference, filter the payments by status,
// method and created range (kept in the address), refund part of it (a double click refunds once; a retry after
// a lost answer refunds once), see the refund and its payment.refunded delivery in the timeline, cancel a payment
// at the terminal (202: requested, not done), create an API key and see its secret once, create a sandbox method
// from the form generated from its JSON Schema, export CSV, read the overview's report (the API's numbers), follow
// a user's move between shards to its end, return from a 401 to the same page, rotate the session once for two
// tabs, and sign out (the session's tokens refused at the API afterwards). axe-core (injected into the
// page, never by bypassing the CSP) finds no violation on any page. Every request to another host fails the
// test, and so does any CSP violation or console error that no step expected.
// Screenshots: test-results/dashboard-*.png.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { api as call, cspViolations, guardedContext, launchChromium } from './browser.ts';

const base = inject('baseUrl');
const RESULTS = join(import.meta.dirname, '..', 'test-results');
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const SESSION_KEY = 'payment-dashboard.session';

const api = <T = any>(method: string, path: string, token?: string, body?: unknown, headers?: Record<string, string>) =>
  call<T>(base, method, path, { token, body, headers });

interface ConsoleEntry {
  type: string;
  text: string;
  url: string;
}

/** What the sandbox's webhooks brought to a local receiver (the payments' webhook_url). */
function startReceiver(): Promise<{ server: Server; url: string; types: string[] }> {
  const types: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      try {
        types.push(JSON.parse(Buffer.concat(chunks).toString('utf8')).type);
      } catch {
        types.push('unreadable');
      }
      res.writeHead(204).end();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, types }),
    ),
  );
}

describe('/dashboard in Chromium', () => {
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let leftLocal: string[] = [];
  const consoleEntries: ConsoleEntry[] = [];
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let token: string;
  let keySecret: string;
  let keyId: string;
  const reference = `order-${randomBytes(4).toString('hex')}`;
  let paymentId: string;
  let posMethodId: string;
  let qrMethodId: string;

  const watchConsole = (target: Page) => {
    target.on('console', (message) => {
      if (message.type() === 'error' || /content.security.policy/i.test(message.text()))
        consoleEntries.push({ type: message.type(), text: message.text(), url: message.location().url });
    });
    target.on('pageerror', (error) => consoleEntries.push({ type: 'pageerror', text: error.message, url: '' }));
  };

  /**
   * Takes out of the record the console errors a step provoked on purpose (the browser logs a 401 or an
   * aborted request): exactly `count` of them, so nothing else hides behind them.
   */
  const expectedConsoleErrors = (count: number, match: (entry: ConsoleEntry) => boolean) => {
    const found = consoleEntries.filter(match);
    expect(found, JSON.stringify(consoleEntries)).toHaveLength(count);
    for (const entry of found) consoleEntries.splice(consoleEntries.indexOf(entry), 1);
  };

  /**
   * The calendar day `offset` days from today in São Paulo, the viewer's time zone (UTC-3 all year since 2019), and its
   * midnight as an instant.
   */
  const saoPaulo = (offset: number) => {
    const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Sao_Paulo' }).format(new Date());
    const [y, m, d] = today.split('-').map(Number) as [number, number, number];
    const midnight = new Date(Date.UTC(y, m - 1, d + offset, 3));
    return { day: midnight.toISOString().slice(0, 10), midnight: midnight.toISOString() };
  };

  const shot = (target: Page, name: string) =>
    target.screenshot({ path: join(RESULTS, `dashboard-${name}.png`), fullPage: true });

  /**
   * Waits for the page's heading, then for every "Loading…" of it to be gone (polled from here: a function
   * evaluated in the page by string would need the `unsafe-eval` the CSP refuses).
   */
  async function settled(target: Page) {
    await target.locator('h1').first().waitFor();
    const loading = target.getByText('Loading…');
    for (let waited = 0; (await loading.count()) > 0; waited += 100) {
      if (waited > 30_000) throw new Error('the page is still loading after 30 s');
      await target.waitForTimeout(100);
    }
  }

  /** axe-core's violations on the page as it is now, injected as a plain script evaluation (the CSP stays on). */
  /** Every axe run of the file: written to test-results/axe-results.json, and summed up in the log, at the end. */
  const axeRuns: { url: string; passed: number; incomplete: number; violations: string[] }[] = [];

  async function axeViolations(target: Page): Promise<string[]> {
    if (!(await target.evaluate('typeof window.axe === "object"'))) await target.evaluate(AXE_SOURCE);
    const run = (await target.evaluate(
      `axe.run(document).then((r) => ({ passed: r.passes.length, incomplete: r.incomplete.length, violations: r.violations.map((v) => v.id + ' (' + v.impact + '): ' + v.nodes.map((n) => n.target.join(' ')).join(', ')) }))`,
    )) as { passed: number; incomplete: number; violations: string[] };
    axeRuns.push({ url: new URL(target.url()).pathname, ...run });
    return run.violations;
  }

  /** Every page: the TEST banner, no axe violation, a screenshot. */
  async function checkPage(target: Page, name: string) {
    await settled(target);
    await expect(target.locator('header .test-banner').innerText()).resolves.toContain('TEST');
    expect(await axeViolations(target), name).toEqual([]);
    await shot(target, name);
  }

  async function createPayment(value: string, methodId: string, extra: Record<string, unknown> = {}) {
    const res = await api(
      'POST',
      '/v1/payments',
      keySecret,
      {
        amount: { value, currency: 'USD' },
        external_reference: `${reference}-${randomBytes(3).toString('hex')}`,
        payment_method: methodId,
        ...extra,
      },
      { 'Idempotency-Key': randomUUID() },
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.data;
  }

  const refundsOf = async (id: string) => {
    const res = await api('GET', `/v1/payments/${id}/refunds?limit=100`, token);
    expect(res.status).toBe(200);
    return res.body.data as { amount: { value: string }; status: string }[];
  };

  beforeAll(async () => {
    mkdirSync(RESULTS, { recursive: true });
    receiver = await startReceiver();
    const login = await api('POST', '/v1/auth/login', undefined, {
      email: inject('adminEmail'),
      password: inject('adminPassword'),
    });
    expect(login.status).toBe(201);
    token = login.body.data.access_token;
    const key = await api('POST', '/v1/account/api-keys', token, {
      name: 'dashboard browser test',
      scopes: ['payment_methods:read', 'payments:create', 'payments:read', 'payments:cancel', 'refunds:create'],
    });
    expect(key.status).toBe(201);
    keySecret = key.body.data.secret;
    keyId = key.body.data.id;
    const method = async (version: string, name: string) => {
      const created = await api('POST', '/v1/account/payment-methods', token, {
        connector_definition_version_id: version,
        name,
        credentials: { api_key: `sandbox-${randomBytes(8).toString('hex')}` },
      });
      expect(created.status).toBe(201);
      const link = await api('POST', `/v1/account/payment-methods/${created.body.data.id}/api-keys`, token, {
        api_key_id: key.body.data.id,
      });
      expect(link.status).toBe(201);
      return created.body.data.id as string;
    };
    posMethodId = await method('cnv_sandbox_pos_v1', 'Till 3');
    qrMethodId = await method('cnv_sandbox_qr_v1', 'Counter QR');
    const res = await api(
      'POST',
      '/v1/payments',
      keySecret,
      {
        amount: { value: '40.00', currency: 'USD' },
        external_reference: reference,
        payment_method: posMethodId,
        description: 'Two coffees and a cake',
        webhook_url: receiver.url,
      },
      { 'Idempotency-Key': randomUUID() },
    );
    expect(res.status).toBe(201);
    expect(res.body.data.status).toBe('approved');
    paymentId = res.body.data.id;

    browser = await launchChromium();
    ({ context, leftLocal } = await guardedContext(browser, {
      // Times show in the viewer's zone: one that is not UTC, so the page's UTC-on-hover is a real difference.
      timezoneId: 'America/Sao_Paulo',
      locale: 'en-US',
      permissions: ['clipboard-read', 'clipboard-write'],
      acceptDownloads: true,
    }));
    page = await context.newPage();
    watchConsole(page);
  });

  afterAll(async () => {
    mkdirSync(RESULTS, { recursive: true });
    writeFileSync(join(RESULTS, 'axe-results.json'), `${JSON.stringify(axeRuns, null, 2)}\n`);
    const violations = axeRuns.reduce((n, run) => n + run.violations.length, 0);
    console.log(
      `axe-core: ${axeRuns.length} runs over ${new Set(axeRuns.map((run) => run.url)).size} addresses, ${violations} violations (test-results/axe-results.json)`,
    );
    await context?.close();
    await browser?.close();
    await new Promise((resolve) => receiver?.server.close(resolve));
  });

  it('shows the sign-in form at any address while signed out, and that page once signed in', async () => {
    const res = await page.goto(`${base}/dashboard/payments`);
    expect(res?.status()).toBe(200);
    expect((await res!.allHeaders())['content-security-policy']).toContain("connect-src 'self'");
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    // The deployment is `test`: its banner shows before any token could say so.
    await page.getByText('TEST deployment: sandbox data, no real money moves').waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, 'sign-in');
    await page.getByLabel('Email').fill(inject('adminEmail'));
    await page.getByLabel('Password').fill(inject('adminPassword'));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Payments' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/dashboard/payments');
  });

  it('finds a payment by its external reference, the filter kept in the address', async () => {
    await page.getByLabel('External reference').fill(reference);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL((url) => url.searchParams.get('external_reference') === reference);
    await settled(page);
    const rows = page.locator('tbody tr');
    expect(await rows.count()).toBe(1);
    const row = rows.first();
    await expect(row.innerText()).resolves.toContain('$40.00');
    await expect(row.innerText()).resolves.toContain('approved');
    // The viewer's time, with UTC on hover.
    const time = row.locator('time');
    expect(await time.getAttribute('title')).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    expect(await time.innerText()).not.toContain('UTC');
    await checkPage(page, 'payments');

    // The view is an address: opened anew, it shows the same.
    await page.goto(page.url());
    await settled(page);
    expect(await page.getByLabel('External reference').inputValue()).toBe(reference);
    expect(await page.locator('tbody tr').count()).toBe(1);

    await page.getByRole('link', { name: paymentId }).click();
    await page.getByRole('heading', { name: `Payment ${paymentId}` }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/dashboard/payments/${paymentId}`);
  });

  it('exports the filtered list as CSV', async () => {
    await page.goto(`${base}/dashboard/payments?external_reference=${reference}`);
    await settled(page);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export CSV' }).click(),
    ]);
    const csv = readFileSync((await download.path())!, 'utf8')
      .trim()
      .split('\r\n');
    expect(csv[0]).toBe(
      'id,created_at,status,amount,currency,external_reference,payment_method,processor_reference,description,fee,net,charged_back_at',
    );
    expect(csv).toHaveLength(2);
    expect(csv[1]).toContain(`${paymentId},`);
    expect(csv[1]).toContain(`,approved,40.00,USD,${reference},${posMethodId},`);
    await page.getByRole('status').filter({ hasText: 'Exported 1 payment.' }).waitFor();
  });

  it('pages the payments by cursor, the cursor kept in the address', async () => {
    await createPayment('1.00', posMethodId);
    const listed = await api('GET', '/v1/payments?limit=100', keySecret);
    const ids = (listed.body.data as { id: string }[]).map((p) => p.id);
    // One page of the dashboard's 50 holds them all: the pages below are the cursors' own.
    expect(ids.length).toBeGreaterThanOrEqual(2);
    expect(ids.length).toBeLessThan(50);
    const rows = page.locator('tbody tr');
    const pager = page.getByRole('navigation', { name: 'Pages' });
    /** The rows once the page shows `first` first (a page being loaded keeps the one before on screen). */
    const shown = async (first: string) => {
      await rows.first().filter({ hasText: first }).waitFor();
      return rows.count();
    };
    await page.goto(`${base}/dashboard/payments?starting_after=${ids[0]}`);
    expect(await shown(ids[1]!)).toBe(ids.length - 1);
    expect(await pager.getByRole('button', { name: 'Next page' }).isDisabled()).toBe(true);
    await pager.getByRole('button', { name: 'Previous page' }).click();
    await page.waitForURL((url) => url.searchParams.get('ending_before') === ids[1]);
    expect(await shown(ids[0]!)).toBe(1);
    expect(await pager.getByRole('button', { name: 'Previous page' }).isDisabled()).toBe(true);
    await pager.getByRole('button', { name: 'Next page' }).click();
    await page.waitForURL((url) => url.searchParams.get('starting_after') === ids[0]);
    expect(await shown(ids[1]!)).toBe(ids.length - 1);
  });

  it('filters the payments by status, method and created range, the filters kept in the address and applied', async () => {
    // Beside approved Till 3 payments: a declined one there, and one pending at the QR counter.
    expect((await createPayment('2.00', posMethodId)).status).toBe('approved');
    const declined = await createPayment('7.51', posMethodId);
    expect(declined.status).toBe('declined');
    expect((await createPayment('3.00', qrMethodId)).status).toBe('pending');
    await page.goto(`${base}/dashboard/payments`);
    await settled(page);
    const form = page.getByRole('form', { name: 'Filters' });
    await form.getByLabel('Status').selectOption('approved');
    await form.getByLabel('Payment method').selectOption({ label: 'Till 3 (pos)' });
    // The viewer's wall time (São Paulo's) becomes an instant in the address: yesterday to tomorrow there.
    await form.getByLabel('Created from').fill(`${saoPaulo(-1).day}T00:00`);
    await form.getByLabel('Created before').fill(`${saoPaulo(1).day}T00:00`);
    await form.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL((url) => url.searchParams.has('status'));
    const filters = {
      status: 'approved',
      payment_method: posMethodId,
      created_gte: saoPaulo(-1).midnight,
      created_lt: saoPaulo(1).midnight,
    };
    expect(Object.fromEntries(new URL(page.url()).searchParams)).toEqual(filters);
    /** The rows' payment ids once the page shows what the API answers to the address's filters. */
    const listed = async (query: Record<string, string>) => {
      const res = await api('GET', `/v1/payments?${new URLSearchParams({ ...query, limit: '100' })}`, keySecret);
      expect(res.status).toBe(200);
      const ids = (res.body.data as { id: string }[]).map((p) => p.id);
      const rows = page.locator('tbody tr');
      if (ids.length > 0) await rows.first().filter({ hasText: ids[0]! }).waitFor();
      await settled(page);
      expect(await page.locator('tbody tr a.mono').allInnerTexts()).toEqual(ids);
      return { ids, rows: await rows.allInnerTexts() };
    };
    const approved = await listed(filters);
    // Only approved Till 3 payments, and not all of the payments.
    expect(approved.ids.length).toBeGreaterThanOrEqual(2);
    expect(approved.ids).not.toContain(declined.id);
    for (const row of approved.rows) expect(row).toMatch(/\bapproved\b[\s\S]*\bTill 3\b/);
    const all = await api('GET', '/v1/payments?limit=1', keySecret);
    expect(all.body.pagination.total).toBeGreaterThan(approved.ids.length);

    // The address alone shows the same view, its filters back in the form.
    await page.reload();
    expect((await listed(filters)).ids).toEqual(approved.ids);
    expect(await form.getByLabel('Status').inputValue()).toBe('approved');
    expect(await form.getByLabel('Payment method').inputValue()).toBe(posMethodId);
    expect(await form.getByLabel('Created from').inputValue()).toBe(`${saoPaulo(-1).day}T00:00`);
    expect(await form.getByLabel('Created before').inputValue()).toBe(`${saoPaulo(1).day}T00:00`);

    // A created range from an address applies to the millisecond: [created_at, created_at + 1 ms) is one payment.
    const one = (await api('GET', `/v1/payments/${declined.id}`, keySecret)).body.data;
    const range = {
      created_gte: one.created_at,
      created_lt: new Date(Date.parse(one.created_at) + 1).toISOString(),
    };
    await page.goto(`${base}/dashboard/payments?${new URLSearchParams(range)}`);
    expect((await listed(range)).ids).toEqual([declined.id]);
    // Status declined over the same range: the same payment; approved: none.
    await page.goto(`${base}/dashboard/payments?${new URLSearchParams({ ...range, status: 'approved' })}`);
    await page.getByText('No payment matches these filters.').waitFor();
    expect(await page.locator('tbody tr').count()).toBe(0);
    await form.getByLabel('Status').selectOption('declined');
    await form.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL((url) => url.searchParams.get('status') === 'declined');
    // The fields show the range to the minute; applying another filter keeps the address's own instants.
    expect(Object.fromEntries(new URL(page.url()).searchParams)).toEqual({ ...range, status: 'declined' });
    expect((await listed({ ...range, status: 'declined' })).ids).toEqual([declined.id]);
    await checkPage(page, 'payments-filtered');
  });

  it('refunds part of a payment with a double click: one refund, shown with its payment.refunded delivery', async () => {
    await page.goto(`${base}/dashboard/payments/${paymentId}`);
    await settled(page);
    await checkPage(page, 'payment-approved');
    await page.getByRole('button', { name: 'Refund…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Refund payment' });
    await dialog.waitFor();
    const amount = dialog.getByLabel('Amount (USD)');
    expect(await amount.inputValue()).toBe('40.00');
    expect(await axeViolations(page)).toEqual([]);
    await amount.fill('15.00');
    await dialog.getByLabel('Reason (optional)').fill('One coffee returned');
    await dialog.getByRole('button', { name: 'Refund', exact: true }).dblclick();
    await page
      .getByRole('status')
      .filter({ hasText: /^Refund ref_\w+ of \$15\.00: approved\.$/ })
      .waitFor();
    await dialog.waitFor({ state: 'detached' });

    const refunds = await refundsOf(paymentId);
    expect(refunds.map((r) => [r.amount.value, r.status])).toEqual([['15.00', 'approved']]);

    const refundsSection = page.getByRole('region', { name: 'Refunds' });
    await refundsSection.getByText('$15.00').waitFor();
    await expect(refundsSection.innerText()).resolves.toContain('One coffee returned');
    // The timeline reads itself again until the delivery is done.
    const event = page
      .locator('.timeline > li')
      .filter({ has: page.getByRole('heading', { name: 'payment.refunded' }) });
    await event.locator('.status.good', { hasText: 'succeeded' }).waitFor({ timeout: 60_000 });
    await expect(event.innerText()).resolves.toMatch(/1 attempt/);
    await expect(event.locator('tbody').innerText()).resolves.toMatch(/^1\s+204\b/);
    expect(receiver.types).toContain('payment.refunded');
    await page.locator('main > p .status', { hasText: 'partially refunded' }).waitFor();
    await checkPage(page, 'payment-refunded');
    // The README's picture (docs/images/dashboard-payment.png is a copy of it): the page's first screen.
    await page.screenshot({ path: join(RESULTS, 'dashboard-payment.png') });
  });

  /**
   * The server takes the payment's next refund; its answer is lost on the way back (the browser sees a network
   * error). Every refund POST's key is recorded, and the status the server gave the one whose answer was lost.
   */
  const loseFirstRefundAnswer = async (id: string) => {
    const keys: string[] = [];
    const statuses: number[] = [];
    await page.route(`**/v1/payments/${id}/refunds`, async (route) => {
      if (route.request().method() !== 'POST') return route.fallback();
      keys.push((await route.request().allHeaders())['idempotency-key']!);
      if (keys.length > 1) return route.fallback();
      statuses.push((await route.fetch()).status());
      return route.abort('failed');
    });
    return { keys, statuses };
  };

  it('a retry after a lost answer sends the same Idempotency-Key: the refund happens once', async () => {
    await page.getByRole('button', { name: 'Refund…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Refund payment' });
    expect(await dialog.getByLabel('Amount (USD)').inputValue()).toBe('25.00');
    await dialog.getByLabel('Amount (USD)').fill('5.00');
    const { keys, statuses } = await loseFirstRefundAnswer(paymentId);
    await dialog.getByRole('button', { name: 'Refund', exact: true }).click();
    const problem = dialog.getByRole('alert');
    await problem.getByText('The service could not be reached').waitFor();
    expect(statuses).toEqual([201]);
    await problem.getByRole('button', { name: 'Retry' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /^Refund ref_\w+ of \$5\.00: approved\.$/ })
      .waitFor();
    await page.unroute(`**/v1/payments/${paymentId}/refunds`);
    expect(keys).toHaveLength(2);
    expect(keys[1]).toBe(keys[0]);
    expect((await refundsOf(paymentId)).map((r) => r.amount.value).sort()).toEqual(['15.00', '5.00']);
    expectedConsoleErrors(1, (entry) => entry.url.endsWith(`/v1/payments/${paymentId}/refunds`));
  });

  it('an amount edited after a lost answer: the key refused as reused shows the refund made, the next submit is new', async () => {
    const payment = await createPayment('10.00', posMethodId);
    expect(payment.status).toBe('approved');
    const refundsPath = `/v1/payments/${payment.id}/refunds`;
    await page.goto(`${base}/dashboard/payments/${payment.id}`);
    await settled(page);
    await page.getByRole('button', { name: 'Refund…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Refund payment' });
    const amount = dialog.getByLabel('Amount (USD)');
    await amount.fill('2.00');
    const { keys, statuses } = await loseFirstRefundAnswer(payment.id);
    await dialog.getByRole('button', { name: 'Refund', exact: true }).click();
    await dialog.getByRole('alert').getByText('The service could not be reached').waitFor();
    expect(statuses).toEqual([201]);
    // Not Retry: the amount changed, then Refund. The API refuses the key, its first use having gone through.
    await amount.fill('3.00');
    await dialog.getByRole('button', { name: 'Refund', exact: true }).click();
    await dialog.getByRole('alert').getByText('idempotency_key_reused').waitFor();
    await dialog
      .getByRole('status')
      .filter({ hasText: /^An earlier attempt from this dialog reached the service/ })
      .filter({ hasText: 'Its latest refund: $2.00, approved.' })
      .waitFor();
    await dialog.getByText('Refundable: $8.00').waitFor();
    await page.getByRole('region', { name: 'Refunds' }).getByText('$2.00').waitFor();
    expect(await axeViolations(page)).toEqual([]);
    // Refund again now is a deliberate second refund: a new key.
    await dialog.getByRole('button', { name: 'Refund', exact: true }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /^Refund ref_\w+ of \$3\.00: approved\.$/ })
      .waitFor();
    await page.unroute(`**${refundsPath}`);
    expect(keys).toHaveLength(3);
    expect(keys[1]).toBe(keys[0]);
    expect(keys[2]).not.toBe(keys[0]);
    expect((await refundsOf(payment.id)).map((r) => r.amount.value).sort()).toEqual(['2.00', '3.00']);
    expectedConsoleErrors(2, (entry) => entry.url.endsWith(refundsPath));
  });

  it('cancels a payment waiting at the terminal: 202 shows "cancel requested", not canceled', async () => {
    // .56: the sandbox's customer never presents a card (docs/sandbox.md), so the payment waits at the terminal.
    const payment = await createPayment('12.56', posMethodId);
    expect(payment.action.type).toBe('at_terminal');
    await page.goto(`${base}/dashboard/payments/${payment.id}`);
    await settled(page);
    await page.getByText('Handed to the terminal').waitFor();
    await page.getByRole('region', { name: 'Terminal' }).locator('.status', { hasText: 'online' }).waitFor();
    await page.getByRole('button', { name: 'Cancel…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Cancel payment' });
    await dialog.getByRole('button', { name: 'Cancel payment' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /^Cancel requested: the processor completes it later/ })
      .waitFor();
    await page
      .getByText(/cancel requested/)
      .first()
      .waitFor();
    const read = await api('GET', `/v1/payments/${payment.id}`, token);
    expect(read.body.data.status).toBe('pending');
    expect(read.body.data.cancel_requested_at).not.toBeNull();
    await checkPage(page, 'payment-cancel-requested');
  });

  it('applies the sandbox’s news from the test helpers: approve, decline, expire, fail, a failed refund, a chargeback, the terminal', async () => {
    const read = async (id: string) => (await api('GET', `/v1/payments/${id}`, token)).body.data;
    const applied = () => page.getByRole('status').filter({ hasText: 'Test helper applied.' }).waitFor();
    // .56: the payment waits at the terminal (docs/sandbox.md) until the news says how it ended.
    for (const [action, status] of [
      ['Approve', 'approved'],
      ['Decline', 'declined'],
      ['Expire', 'expired'],
      ['Fail', 'failed'],
    ] as const) {
      const waiting = await createPayment('4.56', posMethodId);
      expect(waiting.status).toBe('pending');
      await page.goto(`${base}/dashboard/payments/${waiting.id}`);
      await settled(page);
      await page.getByRole('button', { name: `${action} (test)`, exact: true }).click();
      await applied();
      await page.locator('main > p .status', { hasText: status.replaceAll('_', ' ') }).waitFor();
      expect((await read(waiting.id)).status, action).toBe(status);
    }

    // A refund the processor fails later, then a chargeback: refunds end there.
    const paid = await createPayment('6.00', posMethodId);
    const refund = await api(
      'POST',
      `/v1/payments/${paid.id}/refunds`,
      keySecret,
      { amount: { value: '1.00', currency: 'USD' } },
      { 'Idempotency-Key': randomUUID() },
    );
    expect(refund.body.data.status).toBe('approved');
    await page.goto(`${base}/dashboard/payments/${paid.id}`);
    await settled(page);
    const refunds = page.getByRole('region', { name: 'Refunds' });
    await refunds.getByRole('button', { name: `Fail refund ${refund.body.data.id} (test)` }).click();
    await applied();
    await refunds.locator('.status', { hasText: 'failed' }).waitFor();
    expect((await refundsOf(paid.id)).map((r) => r.status)).toEqual(['failed']);
    await page.getByRole('button', { name: 'Charge back (test)' }).click();
    await applied();
    await page.getByText('Charged back', { exact: true }).waitFor();
    expect((await read(paid.id)).charged_back_at).not.toBeNull();
    expect(await page.getByRole('button', { name: 'Refund…' }).count()).toBe(0);

    // The terminal's status, set and read back, then left online for the steps after.
    const terminal = page.getByRole('region', { name: 'Terminal' });
    for (const status of ['busy', 'online'] as const) {
      await terminal.getByRole('button', { name: `Set terminal ${status} (test)` }).click();
      await terminal.locator('.status', { hasText: status }).waitFor();
      const reported = await api('GET', `/v1/payment-methods/${posMethodId}/terminal`, keySecret);
      expect(reported.body.data.status).toBe(status);
    }
    expect(await axeViolations(page)).toEqual([]);
  });

  it('draws a QR payment’s code in the page, with the time left to pay', async () => {
    const payment = await createPayment('9.90', qrMethodId);
    expect(payment.action.type).toBe('display_qr');
    await page.goto(`${base}/dashboard/payments/${payment.id}`);
    await settled(page);
    const qr = page.getByRole('img', { name: 'QR code to pay $9.90' });
    await qr.waitFor();
    expect(await qr.locator('path').getAttribute('d')).toMatch(/^M\d+ \d+h1v1h-1z/);
    await page.getByText(/left\)$/).waitFor();
    await checkPage(page, 'payment-qr');
  });

  it('creates an API key and shows its secret once, with a copy button', async () => {
    await page.goto(`${base}/dashboard/api-keys`);
    await checkPage(page, 'api-keys');
    await page.getByRole('button', { name: 'Create an API key…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create an API key' });
    await dialog.getByLabel('Name').fill('Shop checkout');
    await dialog.getByLabel('refunds:create').check();
    expect(await axeViolations(page)).toEqual([]);
    await dialog.getByRole('button', { name: 'Create key' }).click();
    const shown = page.getByRole('region', { name: 'New API key secret' });
    const secret = (await shown.locator('code').innerText()).trim();
    expect(secret).toMatch(/^sk_test_/);
    await shown.getByRole('button', { name: 'Copy API key secret' }).click();
    await shown.getByRole('status').filter({ hasText: 'Copied' }).waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret);
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, 'api-key-secret');
    await shown.getByRole('button', { name: 'I have copied it' }).click();
    await shown.waitFor({ state: 'detached' });
    const row = page.locator('tbody tr').filter({ hasText: 'Shop checkout' });
    await expect(row.innerText()).resolves.toContain('refunds:create');
    expect(await page.content()).not.toContain(secret);
    await page.reload();
    await settled(page);
    expect(await page.content()).not.toContain(secret);
    const keys = await api('GET', '/v1/account/api-keys?limit=100', token);
    const created = keys.body.data.find((k: any) => k.name === 'Shop checkout');
    expect(created.scopes).toEqual(['payment_methods:read', 'payments:create', 'payments:read', 'refunds:create']);
    expect(secret.startsWith(created.prefix)).toBe(true);

    // Revoked from its row, after a confirmation.
    await row.getByRole('button', { name: 'Revoke Shop checkout' }).click();
    await page
      .getByRole('dialog', { name: 'Revoke Shop checkout?' })
      .getByRole('button', { name: 'Revoke key' })
      .click();
    await row.locator('.status', { hasText: 'revoked' }).waitFor();
    const revoked = await api('GET', '/v1/account/api-keys?limit=100', token);
    expect(revoked.body.data.find((k: any) => k.id === created.id).status).toBe('revoked');
  });

  it('creates a sandbox method from the credentials form generated from the version’s JSON Schema', async () => {
    await page.goto(`${base}/dashboard/payment-methods`);
    await checkPage(page, 'payment-methods');
    await page.getByRole('button', { name: 'New payment method…' }).click();
    const dialog = page.getByRole('dialog', { name: 'New payment method' });
    await dialog.getByLabel('Connector').selectOption({ label: 'Sandbox POS · version 1' });
    // The fields are the schema's: api_key (required, 8 to 256 characters, a secret) and the configuration.
    const apiKey = dialog.getByLabel('api_key (required)');
    expect(await apiKey.getAttribute('type')).toBe('password');
    expect(await apiKey.getAttribute('minlength')).toBe('8');
    expect(await apiKey.getAttribute('maxlength')).toBe('256');
    expect(await dialog.getByLabel('terminal_id', { exact: true }).getAttribute('placeholder')).toBe(
      'sandbox-terminal-1',
    );
    await dialog.getByLabel('terminal_status', { exact: true }).selectOption('online');
    // An object property (the cart shown on the terminal) takes JSON.
    expect(await dialog.locator('textarea').getAttribute('id')).toBe(
      await dialog.getByLabel('display', { exact: true }).getAttribute('id'),
    );
    expect(await axeViolations(page)).toEqual([]);
    await dialog.getByLabel('Name', { exact: true }).fill('Till 4');
    await apiKey.fill(`sandbox-${randomBytes(8).toString('hex')}`);
    await dialog.getByLabel('terminal_id', { exact: true }).fill('till-4');
    await shot(page, 'payment-method-form');
    await dialog.getByRole('button', { name: 'Create payment method' }).click();
    await page.getByRole('status').filter({ hasText: 'Payment method Till 4 created.' }).waitFor();
    const card = page.getByRole('region', { name: 'Till 4' });
    await card.waitFor();
    await expect(card.innerText()).resolves.toContain('Sandbox POS · version 1');
    await expect(card.innerText()).resolves.toMatch(/\/v1\/processor-notifications\/[0-9a-f-]{36}/);
    const methods = await api('GET', '/v1/account/payment-methods?limit=100', token);
    const created = methods.body.data.find((m: any) => m.name === 'Till 4');
    expect(created).toMatchObject({
      connector_definition_version_id: 'cnv_sandbox_pos_v1',
      type: 'pos',
      enabled: true,
    });

    // Enabled for an API key and disabled again; the method itself disabled and enabled.
    await card.getByLabel('API key').selectOption(keyId);
    await card.getByRole('button', { name: 'Enable for this key' }).click();
    await card.getByRole('status').filter({ hasText: 'Enabled for dashboard browser test.' }).waitFor();
    await card.getByRole('button', { name: 'Disable for this key' }).click();
    await card.getByRole('status').filter({ hasText: 'Disabled for dashboard browser test.' }).waitFor();
    await card.getByRole('button', { name: 'Disable Till 4' }).click();
    await card.locator('.status', { hasText: 'inactive' }).waitFor();
    await card.getByRole('button', { name: 'Enable Till 4' }).click();
    await card.locator('dd .status', { hasText: /^active$/ }).waitFor();
  });

  it('shows an error’s message and request_id to copy; after a refusal the next submit is a new attempt', async () => {
    await page.goto(`${base}/dashboard/payments/${paymentId}`);
    await settled(page);
    await page.getByRole('button', { name: 'Refund…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Refund payment' });
    await dialog.getByLabel('Amount (USD)').fill('999.00');
    await dialog.getByRole('button', { name: 'Refund', exact: true }).click();
    const problem = dialog.getByRole('alert');
    await problem.getByText('The refund exceeds the refundable balance.').waitFor();
    await expect(problem.innerText()).resolves.toContain('refund_exceeds_balance');
    const requestId = (await problem.locator('p', { hasText: 'Request ID' }).locator('code').innerText()).trim();
    expect(requestId).toMatch(/^req_[0-9a-z]+$/);
    expect(await problem.getByRole('button', { name: 'Retry' }).count()).toBe(0);
    await problem.getByRole('button', { name: 'Copy request ID' }).click();
    await problem.getByRole('status').filter({ hasText: 'Copied' }).waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(requestId);
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, 'refund-problem');
    expectedConsoleErrors(1, (entry) => entry.url.endsWith(`/v1/payments/${paymentId}/refunds`));
    // Nothing was refunded, so a corrected amount is a new attempt (a new key): refunded, not a key reused.
    await dialog.getByLabel('Amount (USD)').fill('1.00');
    await dialog.getByRole('button', { name: 'Refund', exact: true }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /^Refund ref_\w+ of \$1\.00: approved\.$/ })
      .waitFor();
    expect((await refundsOf(paymentId)).map((r) => r.amount.value).sort()).toEqual(['1.00', '15.00', '5.00']);
  });

  it('redelivers an event from the timeline', async () => {
    const approvals = () => receiver.types.filter((type) => type === 'payment.approved').length;
    expect(approvals()).toBe(1);
    await page.getByRole('button', { name: 'Redeliver payment.approved' }).click();
    await page.getByRole('status').filter({ hasText: 'Redelivery of payment.approved queued.' }).waitFor();
    for (let waited = 0; approvals() < 2; waited += 200) {
      if (waited > 60_000) throw new Error('the redelivery did not arrive');
      await page.waitForTimeout(200);
    }
  });

  it('opens a dispute with a test helper, counts down its evidence due date, and closes it', async () => {
    const payment = await createPayment('20.00', posMethodId);
    await page.goto(`${base}/dashboard/payments/${payment.id}`);
    await settled(page);
    await page.getByRole('button', { name: 'Open a dispute (test)' }).click();
    const disputes = page.getByRole('region', { name: 'Disputes' });
    await disputes.getByText('needs response').waitFor();
    await disputes.getByText(/left\)$/).waitFor();
    await page.goto(`${base}/dashboard/disputes?status=needs_response`);
    await settled(page);
    const row = page.locator('tbody tr').filter({ has: page.getByRole('link', { name: payment.id }) });
    await expect(row.innerText()).resolves.toMatch(/\$20\.00[\s\S]*needs response[\s\S]*fraudulent[\s\S]*left\)/);
    await checkPage(page, 'disputes-needs-response');
    await row.getByRole('link', { name: payment.id }).click();
    await settled(page);
    await page.getByRole('button', { name: /^Close as won dsp_\w+ \(test\)$/ }).click();
    await page.getByRole('region', { name: 'Disputes' }).locator('.status', { hasText: 'won' }).waitFor();
  });

  it('adds a webhook endpoint (its secret shown once), pings it, disables and deletes it', async () => {
    const url = receiver.url.replace(/\/hook$/, '/endpoint');
    await page.goto(`${base}/dashboard/webhooks`);
    await settled(page);
    await page.getByRole('button', { name: 'Add an endpoint…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add a webhook endpoint' });
    await dialog.getByLabel('URL').fill(url);
    await dialog.getByLabel('Description (optional)').fill('Order service');
    expect(await axeViolations(page)).toEqual([]);
    await dialog.getByRole('button', { name: 'Add endpoint' }).click();
    const shown = page.getByRole('region', { name: 'New endpoint signing secret' });
    expect(await shown.locator('code').innerText()).toMatch(/^whsec_/);
    await shown.getByRole('button', { name: 'I have copied it' }).click();
    const row = page.locator('tbody tr').filter({ hasText: url });
    await row.getByRole('button', { name: `Send test ping ${url}` }).click();
    await row
      .getByRole('status')
      .filter({ hasText: /^Ping delivered: status 204/ })
      .waitFor();
    expect(receiver.types).toContain('ping');
    await row.getByRole('button', { name: `Rotate secret ${url}` }).click();
    await page
      .getByRole('dialog', { name: "Rotate this endpoint's secret?" })
      .getByRole('button', { name: 'Rotate secret' })
      .click();
    const rotated = page.getByRole('region', { name: 'New endpoint signing secret' });
    expect(await rotated.locator('code').innerText()).toMatch(/^whsec_/);
    await rotated.getByRole('button', { name: 'I have copied it' }).click();
    await row.getByRole('button', { name: `Disable ${url}` }).click();
    await row.locator('.status', { hasText: 'disabled' }).waitFor();
    await checkPage(page, 'webhooks-endpoint');
    await row.getByRole('button', { name: `Delete ${url}` }).click();
    await page
      .getByRole('dialog', { name: 'Delete this endpoint?' })
      .getByRole('button', { name: 'Delete endpoint' })
      .click();
    await page.getByText('No endpoints.').waitFor();
    const endpoints = await api('GET', '/v1/account/webhook-endpoints?limit=100', token);
    expect(endpoints.body.data).toEqual([]);
  });

  it('adds a user and changes its role (admins)', async () => {
    const email = `support-${randomBytes(3).toString('hex')}@example.com`;
    await page.goto(`${base}/dashboard/users`);
    await settled(page);
    await page.getByRole('button', { name: 'Add a user…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add a user' });
    await dialog.getByLabel('Email').fill(email);
    await dialog.getByLabel('Name', { exact: true }).fill('Support desk');
    await dialog.getByLabel('Password').fill('correct-horse-battery-staple');
    await dialog.getByRole('button', { name: 'Add user' }).click();
    const row = page.locator('tbody tr').filter({ hasText: email });
    await expect(row.innerText()).resolves.toMatch(/Support desk\s+client/);
    await row.getByRole('button', { name: `Role and scopes of ${email}` }).click();
    const edit = page.getByRole('dialog', { name: `Role and scopes of ${email}` });
    await edit.getByLabel('Role').selectOption('admin');
    await edit.getByLabel('refunds:create').uncheck();
    await edit.getByRole('button', { name: 'Save' }).click();
    await edit.waitFor({ state: 'detached' });
    await row.getByRole('cell', { name: 'admin', exact: true }).waitFor();
    await expect(row.innerText()).resolves.not.toContain('refunds:create');
    await row.getByRole('button', { name: `Placement of ${email}` }).click();
    const placement = page.getByRole('dialog', { name: `Placement of ${email}` });
    await placement.getByText(/^SHARD_\d+$/).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await placement.getByRole('button', { name: 'Close' }).click();
  });

  it('draws the last 30 days from one payments report: the counts and amounts the API answers', async () => {
    // A currency without decimals beside the dollars: its own column, its own chart. And a declined payment.
    const pesos = await createPayment('0', posMethodId, { amount: { value: '1500', currency: 'CLP' } });
    expect(pesos.status).toBe('approved');
    expect((await createPayment('8.51', posMethodId)).status).toBe('declined');
    // And a dispute waiting on the merchant.
    const disputed = await createPayment('3.00', posMethodId);
    expect((await api('POST', `/v1/test-helpers/payments/${disputed.id}/dispute`, token)).status).toBe(200);
    const calls: URL[] = [];
    const onRequest = (request: { url: () => string }) => {
      const url = new URL(request.url());
      if (url.pathname.startsWith('/v1/')) calls.push(url);
    };
    page.on('request', onRequest);
    await page.goto(`${base}/dashboard`);
    await settled(page);
    page.off('request', onRequest);

    // One report call, no list of payments; its days are the viewer's: São Paulo's midnight 29 days ago to the next.
    expect(calls.filter((url) => url.pathname === '/v1/payments')).toEqual([]);
    const reports = calls.filter((url) => url.pathname === '/v1/reports/payments');
    expect(reports).toHaveLength(1);
    const query = Object.fromEntries(reports[0]!.searchParams);
    expect(query).toEqual({
      created_gte: saoPaulo(-29).midnight,
      created_lt: saoPaulo(1).midnight,
      interval: 'day',
      tz: 'America/Sao_Paulo',
    });

    // What the API answers to that query, added up here: per status and currency, and per currency and day.
    const report = await api('GET', `/v1/reports/payments?${new URLSearchParams(query)}`, token);
    expect(report.status).toBe(200);
    type Row = { start: string; status: string; count: number; amount: { value: string; currency: string } };
    const rows = report.body.data as Row[];
    const minorOf = (value: string) => Number(value.replace('.', ''));
    const shown = (minor: number, currency: string) =>
      currency === 'USD'
        ? `$${(minor / 100).toLocaleString('en-US', { minimumFractionDigits: 2 })}`
        : `${currency} ${minor.toLocaleString('en-US')}`;
    const sum = (of: Row[]) => ({
      count: of.reduce((n, r) => n + r.count, 0),
      minor: of.reduce((n, r) => n + minorOf(r.amount.value), 0),
    });
    const usd = rows.filter((r) => r.amount.currency === 'USD');
    const clp = rows.filter((r) => r.amount.currency === 'CLP');
    expect(sum(clp)).toEqual({ count: 1, minor: 1500 });
    expect(usd.length).toBeGreaterThan(0);
    const total = sum(rows).count;
    // The report adds up to the list's total over the same range.
    const list = await api(
      'GET',
      `/v1/payments?${new URLSearchParams({ created_gte: query.created_gte!, created_lt: query.created_lt!, limit: '1' })}`,
      token,
    );
    expect(list.body.pagination.total).toBe(total);
    const cells = async (row: import('playwright-core').Locator) =>
      (await row.locator('th, td').allInnerTexts()).map((text) => text.replace(/\s/g, ' ').trim());

    await page.getByText(new RegExp(`^${total} payments from .+ to today, by the days of America/Sao_Paulo`)).waitFor();
    const byStatus = page.getByRole('table', { name: 'Payments of the last 30 days by status' });
    expect(await cells(byStatus.locator('thead tr'))).toEqual(['Status', 'Payments', 'Amount (USD)', 'Amount (CLP)']);
    const statusRows = await byStatus.locator('tbody tr').all();
    expect(statusRows).toHaveLength(10);
    for (const row of statusRows) {
      const [status, ...numbers] = await cells(row);
      const of = (currency: string) =>
        sum(rows.filter((r) => r.status === status!.replaceAll(' ', '_') && r.amount.currency === currency));
      const count = of('USD').count + of('CLP').count;
      expect(numbers, status).toEqual([String(count), shown(of('USD').minor, 'USD'), shown(of('CLP').minor, 'CLP')]);
    }
    expect(await cells(byStatus.locator('tfoot tr'))).toEqual([
      'All',
      String(total),
      shown(sum(usd).minor, 'USD'),
      shown(sum(clp).minor, 'CLP'),
    ]);
    // The same counts as a chart: one bar per status, in the table's order, each naming its count.
    const statusChart = page.getByRole('img', { name: /^Payments of the last 30 days by status: / });
    const bars = await statusChart.locator('g').all();
    expect(bars).toHaveLength(statusRows.length);
    for (const [i, bar] of bars.entries())
      expect(await bar.locator('text').allTextContents()).toEqual((await cells(statusRows[i]!)).slice(0, 2));
    // Disputes and inquiries waiting for a response, as the list counts them, each linking to its own filter.
    const waiting = page.getByRole('region', { name: 'Disputes waiting on you' });
    for (const [status, noun] of [
      ['needs_response', /^\d+ disputes? needs? a response\./],
      ['warning_needs_response', /^\d+ inquir(y|ies) needs? a response/],
    ] as const) {
      const listedTotal = (await api('GET', `/v1/disputes?status=${status}&limit=1`, token)).body.pagination.total;
      if (status === 'needs_response') expect(listedTotal).toBeGreaterThan(0);
      const item = waiting.getByRole('listitem').filter({ hasText: noun });
      expect(await item.innerText()).toMatch(new RegExp(`^${listedTotal} `));
      const links = item.getByRole('link');
      expect(await links.count()).toBe(listedTotal > 0 ? 1 : 0);
      if (listedTotal > 0) expect(await links.getAttribute('href')).toBe(`/dashboard/disputes?status=${status}`);
    }
    // Inquiries: the sandbox opens chargebacks only, so the list's answer for them is stood in for here.
    await page.route('**/v1/disputes?*', async (route) => {
      if (new URL(route.request().url()).searchParams.get('status') !== 'warning_needs_response')
        return route.fallback();
      const answer = await route.fetch();
      const body = await answer.json();
      return route.fulfill({ response: answer, json: { ...body, pagination: { ...body.pagination, total: 2 } } });
    });
    await page.reload();
    await settled(page);
    const inquiries = waiting.getByRole('listitem').filter({ hasText: /inquiries need a response/ });
    expect(await inquiries.innerText()).toMatch(/^2 inquiries need a response/);
    expect(await inquiries.getByRole('link', { name: 'See them (inquiries)' }).getAttribute('href')).toBe(
      '/dashboard/disputes?status=warning_needs_response',
    );
    await page.unroute('**/v1/disputes?*');
    // Among them this step's payments.
    for (const status of ['approved', 'declined'])
      expect(Number((await cells(byStatus.getByRole('row', { name: new RegExp(`^${status} `) })))[1])).toBeGreaterThan(
        0,
      );

    // Each currency: a chart with a name, and its days as a table (30 rows, the empty days too).
    const days = Array.from({ length: 30 }, (_, i) => saoPaulo(i - 29).day);
    const dayOf = (iso: string) =>
      new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Sao_Paulo' }).format(new Date(iso));
    const approved = new Set(['approved', 'partially_refunded', 'refunded']);
    for (const [currency, of] of [
      ['USD', usd],
      ['CLP', clp],
    ] as const) {
      const region = page.getByRole('region', { name: `${currency} per day` });
      await region.getByRole('img', { name: new RegExp(`^${currency} per day of the last 30 days`) }).waitFor();
      await region.getByText(`${currency} per day, as a table`).click();
      const table = region.getByRole('table', { name: `${currency} per day` });
      const dayRows = await table.locator('tbody tr').all();
      expect(await Promise.all(dayRows.map((row) => row.locator('time').getAttribute('datetime')))).toEqual(days);
      for (const [i, row] of dayRows.entries()) {
        const ofDay = of.filter((r) => dayOf(r.start) === days[i]);
        const approvedOfDay = sum(ofDay.filter((r) => approved.has(r.status)));
        expect((await cells(row)).slice(1), days[i]).toEqual([
          String(sum(ofDay).count),
          String(approvedOfDay.count),
          shown(sum(ofDay).minor, currency),
          shown(approvedOfDay.minor, currency),
        ]);
      }
    }
    // Today's row holds this run's payments.
    const clpToday = page.getByRole('table', { name: 'CLP per day' }).locator('tbody tr').last();
    expect((await cells(clpToday)).slice(1)).toEqual(['1', '1', 'CLP 1,500', 'CLP 1,500']);
    await checkPage(page, 'overview');
  });

  it('moves a user’s data: after the 202 the placement dialog follows the move’s status and step to its end', async () => {
    const email = `moving-${randomBytes(3).toString('hex')}@example.com`;
    const user = await api('POST', '/v1/users', token, {
      email,
      name: 'Moving desk',
      password: 'correct-horse-battery-staple',
      role: 'client',
      scopes: ['payments:read'],
    });
    expect(user.status).toBe(201);
    const userId = user.body.data.id as string;
    const placementPath = `/v1/users/${userId}/placement`;
    const from = (await api('GET', placementPath, token)).body.data.shard as string;
    const to = from === 'SHARD_0' ? 'SHARD_1' : 'SHARD_0';
    await page.goto(`${base}/dashboard/users`);
    await settled(page);
    await page
      .locator('tbody tr')
      .filter({ hasText: email })
      .getByRole('button', { name: `Placement of ${email}` })
      .click();
    const dialog = page.getByRole('dialog', { name: `Placement of ${email}` });
    const field = (name: string) => dialog.locator(`dt:text-is("${name}") + dd`);
    await field('Shard').filter({ hasText: from }).waitFor();
    // The steps the dialog was told, read by itself (no reload, no click) while the move runs.
    const steps: string[] = [];
    const onResponse = async (response: import('playwright-core').Response) => {
      if (response.request().method() !== 'GET' || !response.url().endsWith(placementPath)) return;
      const move = (await response.json()).data.move;
      if (move && steps.at(-1) !== move.step) steps.push(move.step);
    };
    page.on('response', onResponse);
    await dialog.getByLabel('Move to shard').fill(to);
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'PUT' && r.url().endsWith(placementPath)),
      dialog.getByRole('button', { name: 'Move data' }).click(),
    ]);
    expect(answer.status()).toBe(202);
    const move = (await answer.json()).data.move;
    expect(move).toMatchObject({ from, to, status: 'running', step: 'mark' });
    await dialog
      .getByRole('status')
      .filter({ hasText: `Moving to ${to}: the move runs in the background` })
      .waitFor();
    // The move waits 40 s for every cached placement to expire before it copies: shown as running, step mark.
    await field('Move status')
      .filter({ hasText: /^running step mark: the user's writes paused/ })
      .waitFor();
    await expect(field('Move').innerText()).resolves.toBe(`${from} to ${to} ${move.id}`);
    await expect(field('Moving to').innerText()).resolves.toBe(to);
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, 'placement-move');
    await field('Move status')
      .filter({ hasText: /^done\s*$/ })
      .waitFor({ timeout: 180_000 });
    page.off('response', onResponse);
    await field('Shard').filter({ hasText: to }).waitFor();
    await expect(field('Moving to').innerText()).resolves.toBe('not moving');
    // The steps in their order, from the first to the last (the dialog reads every 2 s: a short step may pass unseen).
    const order = ['mark', 'copy', 'verify', 'flip', 'drain', 'delete', 'done'];
    expect(steps[0]).toBe('mark');
    expect(steps.at(-1)).toBe('done');
    expect(steps.map((step) => order.indexOf(step))).toEqual([...steps.map((step) => order.indexOf(step))].sort());
    const after = await api('GET', placementPath, token);
    expect(after.body.data).toMatchObject({ shard: to, moving_to: null, move: { id: move.id, status: 'done' } });
    await dialog.getByRole('button', { name: 'Close' }).click();
  }, 240_000);

  it('has no axe violation, and the TEST banner, on every page', async () => {
    for (const [name, path] of [
      ['overview', '/dashboard'],
      ['disputes', '/dashboard/disputes'],
      ['webhooks', '/dashboard/webhooks'],
      ['users', '/dashboard/users'],
      ['not-found', '/dashboard/no-such-page'],
    ] as const) {
      await page.goto(`${base}${path}`);
      await checkPage(page, name);
    }
    // The pages are reached from the navigation, by keyboard.
    await page.goto(`${base}/dashboard`);
    await settled(page);
    const navigation = page.getByRole('navigation', { name: 'Dashboard' });
    for (const title of ['Overview', 'Payments', 'Disputes', 'API keys', 'Payment methods', 'Webhooks', 'Users'])
      await navigation.getByRole('link', { name: title }).waitFor();
    await navigation.getByRole('link', { name: 'Disputes' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Disputes' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/dashboard/disputes');
  });

  it('reaches the refund dialog by keyboard from the top of the page: focus moves into it and Escape closes it', async () => {
    await page.goto(`${base}/dashboard/payments/${paymentId}`);
    await settled(page);
    // Tab from the top of the page: every stop along the way is visible and has a name, and one of them is Refund….
    await page.evaluate('document.activeElement?.blur()');
    const stops: string[] = [];
    for (let i = 0; i < 80; i++) {
      await page.keyboard.press('Tab');
      const stop = (await page.evaluate(`(() => {
        const el = document.activeElement;
        if (!el || el === document.body) return null;
        const name = (el.getAttribute('aria-label') || el.textContent || el.labels?.[0]?.textContent || el.getAttribute('title') || '').trim();
        const box = el.getBoundingClientRect();
        return { tag: el.tagName.toLowerCase(), name, visible: box.width > 0 && box.height > 0 };
      })()`)) as { tag: string; name: string; visible: boolean } | null;
      if (!stop) continue;
      expect(stop.name, JSON.stringify(stops)).not.toBe('');
      expect(stop.visible, stop.name).toBe(true);
      stops.push(stop.name);
      if (stop.tag === 'button' && stop.name === 'Refund…') break;
    }
    expect(stops.at(-1), JSON.stringify(stops)).toBe('Refund…');
    expect(stops[0]).toBe('Skip to content');
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Refund payment' });
    await dialog.waitFor();
    expect(await page.evaluate("document.activeElement?.closest('dialog') !== null")).toBe(true);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
  });

  it('a 401 shows the sign-in form at the same address, then that page again', async () => {
    const address = `${base}/dashboard/disputes?status=needs_response`;
    await page.goto(address);
    await settled(page);
    // A session whose access token the API refuses (as after a sign-out elsewhere).
    await page.evaluate(
      `(() => { const s = JSON.parse(localStorage.getItem('${SESSION_KEY}')); s.accessToken = 'not-a-token'; localStorage.setItem('${SESSION_KEY}', JSON.stringify(s)); })()`,
    );
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(page.url()).toBe(address);
    expectedConsoleErrors(1, (entry) => entry.text.includes('401') && entry.url.includes('/v1/disputes'));
    // Forgotten in the record too: no tab holding the session lock takes that sign-in's tokens up again.
    await expect.poll(() => recordedSession()).toEqual({ session: null });
    await page.getByLabel('Email').fill(inject('adminEmail'));
    await page.getByLabel('Password').fill(inject('adminPassword'));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Disputes' }).waitFor();
    expect(page.url()).toBe(address);
    expect(await page.getByLabel('Status').inputValue()).toBe('needs_response');
  });

  /** The session in this tab's localStorage. */
  const storedSession = async (target: Page = page) =>
    JSON.parse((await target.evaluate(`localStorage.getItem('${SESSION_KEY}')`)) as string);

  /** The session record in IndexedDB (dashboard/src/session-record.ts), which a tab holding the session lock reads. */
  const recordedSession = (target: Page = page) =>
    target.evaluate(`new Promise((resolve, reject) => {
      const opening = indexedDB.open('payment-dashboard', 1);
      opening.onsuccess = () => {
        const get = opening.result.transaction('session').objectStore('session').get('current');
        get.onsuccess = () => { opening.result.close(); resolve(get.result ?? null); };
        get.onerror = () => reject(get.error);
      };
      opening.onerror = () => reject(opening.error);
    })`) as Promise<{ session: Record<string, unknown> | null } | null>;

  /**
   * Sets the session as time or another tab would: in localStorage, and, unless `recorded` is false (a tab whose copy
   * of localStorage lags behind), in the record too.
   */
  const setSession = async (session: unknown, recorded = true) => {
    await page.evaluate(`localStorage.setItem('${SESSION_KEY}', ${JSON.stringify(JSON.stringify(session))})`);
    if (!recorded) return;
    await page.evaluate(`new Promise((resolve, reject) => {
      const opening = indexedDB.open('payment-dashboard', 1);
      opening.onsuccess = () => {
        const transaction = opening.result.transaction('session', 'readwrite');
        transaction.objectStore('session').put({ session: ${JSON.stringify(session)} }, 'current');
        transaction.oncomplete = () => { opening.result.close(); resolve(null); };
        transaction.onerror = () => reject(transaction.error);
      };
      opening.onerror = () => reject(opening.error);
    })`);
  };

  /** Takes tokens the test rotated through the API as the page's session, so the next test starts unspent. */
  const adopt = (session: object, tokens: { access_token: string; refresh_token: string; expires_in: number }) =>
    setSession({
      ...session,
      accessToken: tokens.access_token,
      refreshToken: tokens.refresh_token,
      expiresAt: Date.now() + tokens.expires_in * 1000,
    });

  /** Counts the refresh calls of every tab until `stop` is called. */
  const countRefreshes = () => {
    const refreshes: string[] = [];
    const listener = (request: { url: () => string }) => {
      if (request.url().endsWith('/v1/auth/refresh')) refreshes.push(request.url());
    };
    context.on('request', listener);
    return { refreshes, stop: () => context.off('request', listener) };
  };

  it('rotates the session once for two tabs whose access token lapses at the same time', async () => {
    const second = await context.newPage();
    watchConsole(second);
    const { refreshes, stop } = countRefreshes();
    await page.goto(`${base}/dashboard/api-keys`);
    await settled(page);
    await second.goto(`${base}/dashboard/api-keys`);
    await settled(second);
    // Both tabs share the session: make its access token lapse, then load a page in both at once.
    const before = await storedSession();
    expect((await recordedSession())?.session?.refreshToken).toBe(before.refreshToken);
    await setSession({ ...before, expiresAt: Date.now() });
    await Promise.all([page.reload(), second.reload()]);
    await Promise.all([settled(page), settled(second)]);
    for (const tab of [page, second]) await tab.getByRole('heading', { name: 'API keys' }).waitFor();
    stop();
    expect(refreshes).toHaveLength(1);
    const after = await storedSession();
    expect(after.refreshToken).not.toBe(before.refreshToken);
    expect(after.expiresAt).toBeGreaterThan(Date.now() + 60_000);
    expect((await storedSession(second)).refreshToken).toBe(after.refreshToken);
    expect((await recordedSession())?.session).toEqual(after);
    // The rotated chain is intact: the new refresh token still rotates (a reused one would have revoked it).
    const rotated = await api('POST', '/v1/auth/refresh', undefined, { refresh_token: after.refreshToken });
    expect(rotated.status).toBe(201);
    await adopt(after, rotated.body.data);
    await second.close();
  });

  it('a tab whose localStorage still shows the spent session takes the newest from the record, not a second exchange', async () => {
    // Chromium updates each renderer's copy of localStorage from other tabs asynchronously: a tab granted the
    // session lock can still read the session another tab has just rotated. Made deterministic here by writing
    // the spent session back into localStorage only, as that tab would read it.
    const { refreshes, stop } = countRefreshes();
    await page.goto(`${base}/dashboard/api-keys`);
    await settled(page);
    const lapsed = { ...(await storedSession()), expiresAt: Date.now() };
    await setSession(lapsed);
    await page.reload();
    await settled(page);
    expect(refreshes).toHaveLength(1);
    const rotated = await storedSession();
    expect(rotated.refreshToken).not.toBe(lapsed.refreshToken);
    await setSession(lapsed, false);
    await page.reload();
    await settled(page);
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    stop();
    expect(refreshes).toHaveLength(1);
    expect((await storedSession()).refreshToken).toBe(rotated.refreshToken);
    const chain = await api('POST', '/v1/auth/refresh', undefined, { refresh_token: rotated.refreshToken });
    expect(chain.status).toBe(201);
    await adopt(rotated, chain.body.data);
  });

  it('without Web Locks a lapsed session says why it cannot be renewed (the address, or the browser), and spends nothing', async () => {
    const { refreshes, stop } = countRefreshes();
    const stored = await storedSession();
    await setSession({ ...stored, expiresAt: Date.now() });
    // Web Locks are missing on an address that is not a secure context, or in a browser too old to have them.
    for (const [script, message] of [
      [
        "delete Navigator.prototype.locks; Object.defineProperty(window, 'isSecureContext', { value: false });",
        'The session cannot be renewed on this address: open the dashboard over https://',
      ],
      ['delete Navigator.prototype.locks;', 'The session cannot be renewed in this browser'],
    ] as const) {
      const tab = await context.newPage();
      watchConsole(tab);
      await tab.addInitScript(script);
      await tab.goto(`${base}/dashboard/api-keys`);
      await tab.getByRole('alert').getByText(message).first().waitFor();
      await tab.close();
    }
    stop();
    expect(refreshes).toEqual([]);
    await setSession(stored);
  });

  it('signs out: logout is called, the sign-in form shows at the same address, and the session’s tokens stop working', async () => {
    const address = `${base}/dashboard/api-keys`;
    await page.goto(address);
    await settled(page);
    const stored = await storedSession();
    expect((await api('GET', '/v1/auth/me', stored.accessToken)).status).toBe(200);
    const [logout] = await Promise.all([
      page.waitForRequest((request) => request.url().endsWith('/v1/auth/logout')),
      page.getByRole('button', { name: 'Sign out' }).click(),
    ]);
    expect(logout.method()).toBe('POST');
    expect(logout.postDataJSON()).toEqual({ refresh_token: stored.refreshToken });
    expect((await logout.response())?.status()).toBe(204);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(page.url()).toBe(address);
    expect(await page.evaluate(`localStorage.getItem('${SESSION_KEY}')`)).toBeNull();
    expect(await recordedSession()).toEqual({ session: null });
    expect(await page.getByRole('navigation', { name: 'Dashboard' }).count()).toBe(0);
    // Ended at the API, not only forgotten here: the refresh token and the access token are refused.
    const refreshed = await api('POST', '/v1/auth/refresh', undefined, { refresh_token: stored.refreshToken });
    expect(refreshed.status).toBe(401);
    expect((await api('GET', '/v1/auth/me', stored.accessToken)).status).toBe(401);
    // Reloaded, the address still asks for a sign-in.
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
  });

  it('sent nothing beyond the local server, hit no CSP violation and logged no unexpected console error', async () => {
    expect(leftLocal).toEqual([]);
    expect(await cspViolations(page)).toEqual([]);
    expect(consoleEntries).toEqual([]);
  });
});
