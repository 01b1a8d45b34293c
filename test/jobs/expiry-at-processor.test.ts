import { onEveryShard } from '../helpers/shards.ts';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { sandboxQrV1 } from '../../src/connectors/sandbox/index.ts';
import { ConnectorError } from '../../src/connectors/types.ts';
import { EXPIRY_GRACE_MS } from '../../src/domain/ledger/index.ts';
import { expireQrPayments } from '../../src/jobs/expire-qr-payments.ts';
import { paymentBody, paymentRow, setupMerchant } from '../helpers/merchant.ts';

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
});
