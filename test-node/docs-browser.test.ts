// /docs in a real browser (Debian's Chromium through playwright-core), as a merchant uses it: the page
// renders under its Content-Security-Policy, "Authorize" takes a freshly created `test` API key, and
// "Try it out" on listPaymentMethods and createPayment shows the live 200 and 201. Every request that
// would leave the local server is blocked and recorded, and the test asserts there was none.
// Screenshot: test-results/docs.png.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { api as call, cspViolations, guardedContext, launchChromium } from './browser.ts';

const SCREENSHOT = join(import.meta.dirname, '..', 'test-results', 'docs.png');

const base = inject('baseUrl');

const api = <T = any>(method: string, path: string, token?: string, body?: unknown) =>
  call<T>(base, method, path, { token, body });

/** A fresh `test` API key with every scope, and a sandbox POS method enabled for it (through the API). */
async function merchantKey() {
  const login = await api('POST', '/v1/auth/login', undefined, {
    email: inject('adminEmail'),
    password: inject('adminPassword'),
  });
  expect(login.status).toBe(201);
  const token: string = login.body.data.access_token;
  const key = await api('POST', '/v1/account/api-keys', token, {
    name: 'docs browser test',
    scopes: ['payment_methods:read', 'payments:create', 'payments:read', 'payments:cancel', 'refunds:create'],
  });
  expect(key.status).toBe(201);
  expect(key.body.data.secret).toMatch(/^sk_test_/);
  const connectors = await api('GET', '/v1/connectors?limit=100', token);
  expect(connectors.status).toBe(200);
  const version = connectors.body.data
    .filter((c: any) => c.provider === 'sandbox' && c.type === 'pos')
    .flatMap((c: any) => c.versions)
    .find((v: any) => v.status === 'published');
  const method = await api('POST', '/v1/account/payment-methods', token, {
    connector_definition_version_id: version.id,
    name: 'Docs POS',
    credentials: { api_key: `sandbox-${randomBytes(12).toString('hex')}` },
  });
  expect(method.status).toBe(201);
  const link = await api('POST', `/v1/account/payment-methods/${method.body.data.id}/api-keys`, token, {
    api_key_id: key.body.data.id,
  });
  expect(link.status).toBe(201);
  return { secret: key.body.data.secret as string, methodId: method.body.data.id as string };
}

/** The status code Swagger UI shows for the live answer of an operation ("Server response"). */
async function executeAndReadStatus(page: Page, operation: string) {
  const block = page.locator(`#${operation}`);
  await block.locator('button.execute').click();
  const status = block.locator('.live-responses-table .response .response-col_status');
  await status.first().waitFor({ state: 'visible' });
  return (await status.first().innerText()).trim();
}

describe('/docs in Chromium', () => {
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let leftLocal: string[] = [];
  const consoleMessages: string[] = [];
  let docsHeaders: Record<string, string> = {};

  beforeAll(async () => {
    browser = await launchChromium();
    ({ context, leftLocal } = await guardedContext(browser));
    page = await context.newPage();
    page.on('console', (message) => consoleMessages.push(`${message.type()}: ${message.text()}`));
    page.on('pageerror', (error) => consoleMessages.push(`pageerror: ${error.message}`));
  });

  afterAll(async () => {
    await context?.close();
    await browser?.close();
  });

  it('renders Swagger UI under a Content-Security-Policy', async () => {
    const res = await page.goto(`${base}/docs`);
    expect(res?.status()).toBe(200);
    docsHeaders = await res!.allHeaders();
    expect(docsHeaders['content-security-policy']).toContain("script-src 'self'");
    await expect(page.locator('.swagger-ui .info .title').innerText()).resolves.toContain('Payment Service API');
    await page.locator('#operations-Payments-createPayment').waitFor({ state: 'visible' });
    await page.locator('#operations-Payment_methods-listPaymentMethods').waitFor({ state: 'visible' });
  });

  it('authorizes with a fresh test API key and runs listPaymentMethods (200) and createPayment (201)', async () => {
    const { secret, methodId } = await merchantKey();

    // Authorize: the bearer scheme's value field, then "Authorize" and "Close".
    await page.locator('.scheme-container button.authorize').click();
    const modal = page.locator('.dialog-ux .modal-ux');
    await modal.waitFor({ state: 'visible' });
    await modal.locator('.auth-container input').first().fill(secret);
    await modal.locator('button.modal-btn.auth.authorize').click();
    await modal.locator('button.modal-btn.auth.btn-done').click();
    await modal.waitFor({ state: 'hidden' });

    // listPaymentMethods: expand, "Try it out", "Execute".
    const list = 'operations-Payment_methods-listPaymentMethods';
    await page.locator(`#${list} .opblock-summary`).first().click();
    await page.locator(`#${list} button.try-out__btn`).click();
    expect(await executeAndReadStatus(page, list)).toBe('200');
    await expect(
      page.locator(`#${list} .live-responses-table .response-col_description .highlight-code`).first().innerText(),
    ).resolves.toContain(methodId);

    // createPayment: Idempotency-Key and a JSON body for the sandbox POS method.
    const create = 'operations-Payments-createPayment';
    await page.locator(`#${create} .opblock-summary`).first().click();
    await page.locator(`#${create} button.try-out__btn`).click();
    await page.locator(`#${create} tr[data-param-name="idempotency-key"] input`).fill(`docs-${randomUUID()}`);
    const body = {
      amount: { value: '12.50', currency: 'USD' },
      external_reference: `docs-${randomUUID()}`,
      payment_method: methodId,
      description: 'Created from /docs',
    };
    await page.locator(`#${create} textarea.body-param__text`).fill(JSON.stringify(body, null, 2));
    expect(await executeAndReadStatus(page, create)).toBe('201');
    const answer = await page
      .locator(`#${create} .live-responses-table .response-col_description .highlight-code`)
      .first()
      .innerText();
    expect(answer).toContain('"status": "approved"');
    expect(answer).toContain('"value": "12.50"');

    mkdirSync(join(SCREENSHOT, '..'), { recursive: true });
    await page.locator(`#${create} .live-responses-table`).scrollIntoViewIfNeeded();
    await page.screenshot({ path: SCREENSHOT });
  });

  it('sent nothing beyond the local server and hit no CSP violation', async () => {
    expect(leftLocal).toEqual([]);
    expect(await cspViolations(page)).toEqual([]);
    expect(consoleMessages.filter((m) => /content security policy|content-security-policy/i.test(m))).toEqual([]);
    expect(consoleMessages.filter((m) => m.startsWith('pageerror'))).toEqual([]);
  });
});
