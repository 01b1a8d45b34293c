import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { IDEMPOTENCY_RETENTION_MS, idempotencyScope } from '../../src/domain/idempotency.ts';

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

    const stores = env.IDEMPOTENCY;
    const stub = stores.get(stores.idFromName(idempotencyScope(m.key.id, 'create_payment', key)));
    const alarm = await runInDurableObject(stub, async (_instance, state) => ({
      alarm: await state.storage.getAlarm(),
      record: await state.storage.get('record'),
    }));
    expect(alarm.record).toBeTruthy();
    expect(alarm.alarm).toBeGreaterThanOrEqual(before + 24 * 3600 * 1000);
    expect(IDEMPOTENCY_RETENTION_MS).toBeGreaterThanOrEqual(24 * 3600 * 1000);

    // Within the retention the same key and body replay the stored answer.
    const replay = await m.pay(body, key);
    expect(replay.text).toBe(first.text);

    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await runInDurableObject(stub, async (_instance, state) => (await state.storage.list()).size)).toBe(0);
    // Forgotten: the request runs again and finds its own payment in D1 (the attempt is on its row), so it
    // answers that payment as it is now, not a second one; another body under the key meets the reference.
    const again = await m.pay(body, key);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(again.body.data.id).toBe(first.body.data.id);
    expect(again.body.data.status).toBe('approved');
    expectError(await m.pay({ ...body, description: 'another body' }, key), 409, 'idempotency_key_reused');
    expectError(
      await m.pay({ ...body, description: 'another body' }, crypto.randomUUID()),
      409,
      'external_reference_conflict',
    );
  });
});
