import { onEveryShard } from '../helpers/shards.ts';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { sandboxQrV1 } from '../../src/connectors/sandbox/index.ts';
import { ConnectorError } from '../../src/connectors/types.ts';
import { EXPIRY_GRACE_MS } from '../../src/domain/ledger/index.ts';
import { dueExpiries, expireQrPayments } from '../../src/jobs/expire-qr-payments.ts';
import { queryPlan } from '../helpers/query-plans.ts';
import { paymentBody, paymentRow, setupMerchant } from '../helpers/merchant.ts';
import { dataPlane, depsOfPayment } from '../helpers/shards.ts';

const adapter = sandboxQrV1.adapter;

afterEach(() => vi.restoreAllMocks());

async function pendingQr() {
  const m = await setupMerchant();
  const res = await m.pay(paymentBody(m.qr.id, '12.00'));
  expect(res.body.data.status).toBe('pending');
  const row = (await paymentRow(res.body.data.id))!;
  return { id: res.body.data.id as string, expiresAt: row.expires_at as number };
}

describe('QR expiry withdraws the code at the processor first', () => {
  it('asks the processor to cancel, then expires', async () => {
    const { id, expiresAt } = await pendingQr();
    const cancel = vi.spyOn(adapter, 'cancelPayment');
    await onEveryShard((deps) => expireQrPayments(deps, expiresAt + 1, 10_000));
    expect(cancel.mock.calls.some(([, input]) => input.paymentId === id)).toBe(true);
    expect((await paymentRow(id))!.status).toBe('expired');
  });

  it('applies the processor’s answer when it refuses because the buyer already paid', async () => {
    const { id, expiresAt } = await pendingQr();
    vi.spyOn(adapter, 'cancelPayment').mockRejectedValue(new ConnectorError('declined', 'already paid', 'paid'));
    vi.spyOn(adapter, 'getPayment').mockImplementation(async (_ctx, input) => ({
      status: 'approved',
      processorReference: input.processorReference,
      action: { type: 'none' },
      processorStatus: 'sandbox_approved',
    }));
    await onEveryShard((deps) => expireQrPayments(deps, expiresAt + 1, 10_000));
    expect((await paymentRow(id))!.status).toBe('approved');
  });

  it('waits while the processor cannot be reached, and expires after the grace period', async () => {
    const { id, expiresAt } = await pendingQr();
    vi.spyOn(adapter, 'cancelPayment').mockRejectedValue(new ConnectorError('unavailable', 'down'));
    await onEveryShard((deps) => expireQrPayments(deps, expiresAt + 1, 10_000));
    expect((await paymentRow(id))!.status).toBe('pending');
    await onEveryShard((deps) => expireQrPayments(deps, expiresAt + EXPIRY_GRACE_MS + 1, 10_000));
    expect((await paymentRow(id))!.status).toBe('expired');
  });

  it('a withdrawal the processor accepts to carry out later: the payment waits for its news, asked no more, past the grace too', async () => {
    const { id, expiresAt } = await pendingQr();
    // Adyen's `/cancels`: `received`, the payment still pending until its CANCELLATION news.
    const cancel = vi.spyOn(adapter, 'cancelPayment').mockImplementation(async (_ctx, input) => ({
      status: 'pending',
      processorReference: input.processorReference,
      action: { type: 'none' },
      processorStatus: 'cancel_received',
      cancellation: 'requested',
    }));
    const asked = () => cancel.mock.calls.filter(([, input]) => input.paymentId === id).length;
    await onEveryShard((deps) => expireQrPayments(deps, expiresAt + 1, 10_000));
    expect(asked()).toBe(1);
    const waiting = (await paymentRow(id))!;
    expect(waiting.status).toBe('pending');
    expect(waiting.cancel_requested_at).toBe(expiresAt + 1);
    // Only the processor knows whether the buyer paid meanwhile: nothing the job does settles it, however late.
    for (const by of [60_001, EXPIRY_GRACE_MS + 1, 30 * EXPIRY_GRACE_MS])
      await onEveryShard((deps) => expireQrPayments(deps, expiresAt + by, 10_000));
    expect(asked()).toBe(1);
    expect((await paymentRow(id))!).toMatchObject({ status: 'pending', cancel_requested_at: expiresAt + 1 });
    // Out of the due range altogether: the job's read never meets it again.
    const due = await dueExpiries(await depsOfPayment(id), expiresAt + EXPIRY_GRACE_MS + 1, 10_000);
    expect(due.map((row) => row.id)).not.toContain(id);
  });

  it('takes the due payments oldest expiry first, so those waiting on their processor never starve later ones', async () => {
    // One merchant's: on one shard, whose job takes them.
    const m = await setupMerchant();
    const qrs: { id: string }[] = [];
    for (const value of ['12.00', '13.00', '14.00']) qrs.push((await m.pay(paymentBody(m.qr.id, value))).body.data);
    const deps = await depsOfPayment(qrs[0]!.id);
    // Made first, expiring last: far in the past, so no other payment of the shard is due before them.
    const expiries = [3_000, 2_000, 1_000];
    for (const [n, qr] of qrs.entries())
      await dataPlane.prepare('UPDATE payments SET expires_at = ? WHERE id = ?').bind(expiries[n], qr.id).run();
    const expired: string[] = [];
    for (let run = 0; run < 3; run++) {
      await expireQrPayments(deps, 3_000, 1);
      for (const qr of qrs)
        if ((await paymentRow(qr.id))!.status === 'expired' && !expired.includes(qr.id)) expired.push(qr.id);
    }
    expect(expired).toEqual([qrs[2]!.id, qrs[1]!.id, qrs[0]!.id]);
    // In the order of the expiry index, read as a range: no scan, no sort of the due payments.
    const plan = await queryPlan(dueExpiries(deps, 3_000, 100, ['usr_away']));
    expect(
      plan.some((step) =>
        /SEARCH payments USING INDEX payments_expiry_idx \(status=\? AND expires_at>\? AND expires_at<\?\)/.test(step),
      ),
      JSON.stringify(plan),
    ).toBe(true);
    expect(
      plan.some((step) => /^SCAN payments\b|TEMP B-TREE/.test(step)),
      JSON.stringify(plan),
    ).toBe(false);
  });
});
