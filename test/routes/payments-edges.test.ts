import { dataPlane } from '../helpers/shards.ts';
import { describe, expect, it } from 'vitest';
import { call, expectError } from '../helpers/api.ts';
import { setupMerchant } from '../helpers/merchant.ts';

const usd = (value: string) => ({ value, currency: 'USD' });

describe('payments: edges between operations', () => {
  it('refuses a refund while a cancellation holds the payment, and allows it once the claim is stale', async () => {
    const m = await setupMerchant();
    const paid = await m.pay({
      amount: usd('20.00'),
      external_reference: crypto.randomUUID(),
      payment_method: m.pos.id,
    });
    expect(paid.body.data.status).toBe('approved');
    const id = paid.body.data.id;
    const refund = () =>
      call('POST', `/v1/payments/${id}/refunds`, {
        token: m.key.secret,
        body: { amount: usd('5.00') },
        headers: { 'Idempotency-Key': crypto.randomUUID() },
      });

    // A cancellation that is at the processor right now (claimed, not yet answered).
    await dataPlane
      .prepare('UPDATE payments SET cancel_claimed_at = ?, version = version + 1 WHERE id = ?')
      .bind(Date.now(), id)
      .run();
    const error = expectError(await refund(), 409, 'invalid_state_transition');
    expect(error.message).toMatch(/cancellation/);
    expect(
      (await dataPlane
        .prepare('SELECT count(*) AS n FROM refunds WHERE payment_id = ?')
        .bind(id)
        .first<{ n: number }>())!.n,
    ).toBe(0);
    // A second cancellation does not run alongside the first.
    expectError(
      await call('POST', `/v1/payments/${id}/cancel`, {
        token: m.key.secret,
        headers: { 'Idempotency-Key': crypto.randomUUID() },
      }),
      409,
      'invalid_state_transition',
    );

    // A claim left by a crashed cancellation stops blocking after five minutes.
    await dataPlane
      .prepare('UPDATE payments SET cancel_claimed_at = ?, version = version + 1 WHERE id = ?')
      .bind(Date.now() - 6 * 60_000, id)
      .run();
    const later = await refund();
    expect(later.status).toBe(201);
    expect(later.body.data.status).toBe('approved');
  });

  it('clears the claim when the cancellation completes, so nothing stays blocked', async () => {
    const m = await setupMerchant();
    const qr = await m.pay({ amount: usd('9.00'), external_reference: crypto.randomUUID(), payment_method: m.qr.id });
    const canceled = await call('POST', `/v1/payments/${qr.body.data.id}/cancel`, {
      token: m.key.secret,
      headers: { 'Idempotency-Key': crypto.randomUUID() },
    });
    expect(canceled.body.data.status).toBe('canceled');
    const row = await dataPlane
      .prepare('SELECT cancel_requested_at FROM payments WHERE id = ?')
      .bind(qr.body.data.id)
      .first<{ cancel_requested_at: number | null }>();
    expect(row!.cancel_requested_at).toBeNull();
  });

  it('moves updated_at when a resumed QR payment gains its QR without a status change', async () => {
    const m = await setupMerchant();
    const body = { amount: usd('7.52'), external_reference: crypto.randomUUID(), payment_method: m.qr.id };
    const key = crypto.randomUUID();
    expectError(await m.pay(body, key), 504, 'processor_timeout');
    const before = await dataPlane
      .prepare('SELECT status, updated_at FROM payments WHERE external_reference = ?')
      .bind(body.external_reference)
      .first<{ status: string; updated_at: number }>();
    expect(before!.status).toBe('pending');
    const resumed = await m.pay(body, key);
    expect(resumed.status).toBe(201);
    expect(resumed.body.data.status).toBe('pending');
    expect(resumed.body.data.action.type).toBe('display_qr');
    expect(Date.parse(resumed.body.data.updated_at)).toBeGreaterThan(before!.updated_at);
  });

  it('accepts an Idempotency-Key with inner spaces (printable ASCII) and refuses control characters', async () => {
    const m = await setupMerchant();
    const ok = await m.pay(
      { amount: usd('3.00'), external_reference: crypto.randomUUID(), payment_method: m.pos.id },
      'order 1042 attempt 1',
    );
    expect(ok.status).toBe(201);
    const bad = await m.pay(
      { amount: usd('3.00'), external_reference: crypto.randomUUID(), payment_method: m.pos.id },
      'order\u00e91042',
    );
    expectError(bad, 400, 'invalid_request');
  });
});
