import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { API_KEY_CACHE_TTL_MS } from '../../src/services/authentication.ts';
import { METHOD_CACHE_TTL_MS } from '../../src/services/payment-methods/store.ts';
import { call, expectError } from '../helpers/api.ts';
import { paymentBody, setupMerchant } from '../helpers/merchant.ts';

/**
 * API keys and the methods they may use are trusted for at most 10 seconds by the isolate that read them
 * (docs/conventions.md, "Authentication and how fast changes apply"). A change made through this isolate (the API) applies at once; one made
 * elsewhere (here: written to D1 directly, as another isolate would) within the bound, never later.
 */

afterEach(() => {
  vi.useRealTimers();
});

/** Time stands still at `at` for the service, while I/O runs for real. */
function clockAt(at: number) {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(at);
}

const read = (secret: string, id: string) => call('GET', `/v1/payments/${id}`, { token: secret });

describe('the bounds', () => {
  it('are at most 10 seconds', () => {
    expect(API_KEY_CACHE_TTL_MS).toBeLessThanOrEqual(10_000);
    expect(METHOD_CACHE_TTL_MS).toBeLessThanOrEqual(10_000);
  });
});

describe('API keys', () => {
  it('a key revoked through the API is refused at once', async () => {
    const m = await setupMerchant();
    const paid = await m.pay(paymentBody(m.pos.id, '12.00'));
    expect((await read(m.key.secret, paid.body.data.id)).status).toBe(200);
    const revoked = await call('POST', `/v1/account/api-keys/${m.key.id}/revoke`, { token: m.session.accessToken });
    expect(revoked.status, revoked.text).toBeLessThan(300);
    expectError(await read(m.key.secret, paid.body.data.id), 401, 'unauthorized');
  });

  it('a key revoked elsewhere keeps working until the bound after it was read, and not a moment longer', async () => {
    const m = await setupMerchant();
    const paid = await m.pay(paymentBody(m.pos.id, '13.00'));
    const t0 = Date.now() + 60_000;
    clockAt(t0);
    expect((await read(m.key.secret, paid.body.data.id)).status).toBe(200);
    await env.DB.prepare("UPDATE api_keys SET status = 'revoked', revoked_at = ? WHERE id = ?")
      .bind(t0, m.key.id)
      .run();
    vi.setSystemTime(t0 + API_KEY_CACHE_TTL_MS - 1);
    expect((await read(m.key.secret, paid.body.data.id)).status).toBe(200);
    vi.setSystemTime(t0 + API_KEY_CACHE_TTL_MS);
    expectError(await read(m.key.secret, paid.body.data.id), 401, 'unauthorized');
  });

  it('a scope taken from the owner elsewhere is gone from its keys within the bound', async () => {
    const m = await setupMerchant();
    const paid = await m.pay(paymentBody(m.pos.id, '14.00'));
    const t0 = Date.now() + 60_000;
    clockAt(t0);
    expect((await read(m.key.secret, paid.body.data.id)).status).toBe(200);
    const owner = await env.DB.prepare('SELECT user_id FROM api_keys WHERE id = ?')
      .bind(m.key.id)
      .first<{ user_id: string }>();
    await env.DB.prepare(`UPDATE users SET scopes = '["payments:create"]' WHERE id = ?`).bind(owner!.user_id).run();
    vi.setSystemTime(t0 + API_KEY_CACHE_TTL_MS);
    expectError(await read(m.key.secret, paid.body.data.id), 403, 'insufficient_scope');
  });
});

describe('payment methods used by a key', () => {
  it('a method disabled through the API blocks new payments at once', async () => {
    const m = await setupMerchant();
    expect((await m.pay(paymentBody(m.pos.id, '15.00'))).status).toBe(201);
    const patched = await call('PATCH', `/v1/account/payment-methods/${m.pos.id}`, {
      token: m.session.accessToken,
      body: { enabled: false },
    });
    expect(patched.status, patched.text).toBe(200);
    expectError(await m.pay(paymentBody(m.pos.id, '15.00')), 404, 'payment_method_not_found');
  });

  it('a method disabled elsewhere blocks new payments within the bound', async () => {
    const m = await setupMerchant();
    const t0 = Date.now() + 60_000;
    clockAt(t0);
    expect((await m.pay(paymentBody(m.pos.id, '16.00'))).status).toBe(201);
    await env.DB.prepare('UPDATE payment_methods SET enabled = 0 WHERE id = ?').bind(m.pos.id).run();
    vi.setSystemTime(t0 + METHOD_CACHE_TTL_MS);
    expectError(await m.pay(paymentBody(m.pos.id, '16.00')), 404, 'payment_method_not_found');
  });
});
