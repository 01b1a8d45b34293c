import { createExecutionContext, runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { app } from '../../src/app.ts';
import { signAccessToken } from '../../src/domain/access-tokens.ts';
import { IDEMPOTENCY_RETENTION_MS, idempotencyScope } from '../../src/domain/idempotency.ts';
import { idempotencyStores } from '../../src/durable-objects/idempotency-store.ts';
import { recordResponse } from '../helpers/leak-scan.ts';
import { expectError } from '../helpers/api.ts';
import { paymentBody, setupMerchant } from '../helpers/merchant.ts';

describe('idempotency records', () => {
  it('are kept at least 24 hours, then the alarm forgets them', async () => {
    const m = await setupMerchant();
    const key = crypto.randomUUID();
    const body = paymentBody(m.pos.id, '11.00');
    const before = Date.now();
    const first = await m.pay(body, key);
    expect(first.status).toBe(201);

    const stores = idempotencyStores(env.IDEMPOTENCY);
    const stub = stores.get(stores.idFromName(idempotencyScope(m.key.id, 'create_payment', key)));
    const alarm = await runInDurableObject(stub, async (_instance, state) => ({ alarm: await state.storage.getAlarm(), record: await state.storage.get('record') }));
    expect(alarm.record).toBeTruthy();
    expect(alarm.alarm).toBeGreaterThanOrEqual(before + 24 * 3600 * 1000);
    expect(IDEMPOTENCY_RETENTION_MS).toBeGreaterThanOrEqual(24 * 3600 * 1000);

    // Within the retention the same key and body replay the stored answer.
    const replay = await m.pay(body, key);
    expect(replay.text).toBe(first.text);

    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await runInDurableObject(stub, async (_instance, state) => (await state.storage.list()).size)).toBe(0);
    // Forgotten: the request runs again, and the payment's own uniqueness still protects the merchant.
    expectError(await m.pay(body, key), 409, 'external_reference_conflict');
  });
});

describe('test helpers in a live deployment', () => {
  it('answer 404 not_found', async () => {
    const m = await setupMerchant();
    const paid = await m.pay(paymentBody(m.qr.id, '5.00'));
    const session = await env.DB.prepare('SELECT id FROM sessions WHERE user_id = ? ORDER BY created_at DESC LIMIT 1').bind(m.session.user.id).first<{ id: string }>();
    const liveEnv = { ...env, ENVIRONMENT: 'live' as const };
    const token = await signAccessToken(env.JWT_SIGNING_KEY, { sub: m.session.user.id, sid: session!.id, role: 'client', scopes: ['payments:read'], env: 'live' });
    const res = await app.request(`/v1/test-helpers/payments/${paid.body.data.id}/approve`, { method: 'POST', headers: { Authorization: `Bearer ${token}` } }, liveEnv, createExecutionContext());
    const text = await res.text();
    recordResponse('POST /v1/test-helpers (live)', res.status, text);
    expect(res.status).toBe(404);
    expect(JSON.parse(text).error.code).toBe('not_found');
  });
});
