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

describe('records stored before answers were kept in the domain’s terms', () => {
  it('replay as they were: a success byte for byte, an error with its code, status and this request’s id', async () => {
    const m = await setupMerchant();
    const key = crypto.randomUUID();
    const body = paymentBody(m.pos.id, '12.00');
    const first = await m.pay(body, key);
    expect(first.status).toBe(201);
    const stub = env.IDEMPOTENCY.get(env.IDEMPOTENCY.idFromName(idempotencyScope(m.key.id, 'create_payment', key)));
    // The record as the previous release wrote it: the HTTP status and body.
    await runInDurableObject(stub, async (_instance, state) => {
      const { fingerprint, createdAt } = (await state.storage.get<{ fingerprint: string; createdAt: number }>(
        'record',
      ))!;
      await state.storage.put('record', { fingerprint, response: { status: 201, body: first.text }, createdAt });
    });
    const replay = await m.pay(body, key);
    expect(replay.status).toBe(201);
    expect(replay.text).toBe(first.text);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');

    const failedKey = crypto.randomUUID();
    const failedBody = paymentBody(m.pos.id, '13.00');
    expect((await m.pay(failedBody, failedKey)).status).toBe(201);
    const failedStub = env.IDEMPOTENCY.get(
      env.IDEMPOTENCY.idFromName(idempotencyScope(m.key.id, 'create_payment', failedKey)),
    );
    const legacyError = {
      error: {
        code: 'connector_configuration_invalid',
        message: 'The payment method is misconfigured; an administrator must fix it.',
        category: 'configuration',
        retryable: false,
        request_id: 'req_00000000000000000000',
        details: { processor_code: 'invalid_terminal' },
      },
    };
    await runInDurableObject(failedStub, async (_instance, state) => {
      const { fingerprint, createdAt } = (await state.storage.get<{ fingerprint: string; createdAt: number }>(
        'record',
      ))!;
      await state.storage.put('record', {
        fingerprint,
        response: { status: 422, body: JSON.stringify(legacyError) },
        createdAt,
      });
    });
    const error = expectError(await m.pay(failedBody, failedKey), 422, 'connector_configuration_invalid');
    expect(error.details).toEqual({ processor_code: 'invalid_terminal' });
  });
});
