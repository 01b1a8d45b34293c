import { createExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { app } from '../../src/app.ts';
import { signAccessToken } from '../../src/domain/access-tokens.ts';
import { recordResponse } from '../helpers/leak-scan.ts';
import { paymentBody, setupMerchant } from '../helpers/merchant.ts';

// The other test-helper cases run where the notifications they send are tested (processor-notifications.test.ts).
describe('test helpers in a live deployment', () => {
  it('answer 404 not_found', async () => {
    const m = await setupMerchant();
    const paid = await m.pay(paymentBody(m.qr.id, '5.00'));
    const session = await env.DB.prepare('SELECT id FROM sessions WHERE user_id = ? ORDER BY created_at DESC LIMIT 1')
      .bind(m.session.user.id)
      .first<{ id: string }>();
    const liveEnv = { ...env, ENVIRONMENT: 'live' as const };
    const token = await signAccessToken(env.JWT_SIGNING_KEY, {
      sub: m.session.user.id,
      sid: session!.id,
      role: 'client',
      scopes: ['payments:read'],
      env: 'live',
    });
    const res = await app.request(
      `/v1/test-helpers/payments/${paid.body.data.id}/approve`,
      { method: 'POST', headers: { Authorization: `Bearer ${token}` } },
      liveEnv,
      createExecutionContext(),
    );
    const text = await res.text();
    recordResponse('POST /v1/test-helpers (live)', res.status, text);
    expect(res.status).toBe(404);
    expect(JSON.parse(text).error.code).toBe('not_found');
  });
});
