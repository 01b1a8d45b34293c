import { beforeAll, describe, expect, it } from 'vitest';
import type { ProcessorDispute } from '../../src/connectors/types.ts';
import { newId } from '../../src/lib/ids.ts';
import { loadPaymentMethod } from '../../src/services/payment-methods/store.ts';
import { applyNotification } from '../../src/services/payments/processor-notifications.ts';
import { connectorFor } from '../../src/services/payments/processor.ts';
import { call, expectError } from '../helpers/api.ts';
import { paymentBody, paymentRow, postIdempotent, setupMerchant, type Merchant } from '../helpers/merchant.ts';
import { dataPlane, depsOfPayment } from '../helpers/shards.ts';
import { eventRowsOf, webhookTestSetup } from '../helpers/webhooks.ts';

/**
 * Disputes keep the money whole (issue "Nothing lost when an owner moves, nothing paid twice under a dispute"): each
 * reproduction of the review that found money paid twice, now refused or kept within the payment.
 */

let m: Merchant;
webhookTestSetup();

beforeAll(async () => {
  m = await setupMerchant();
});

async function approvedPayment(value: string) {
  const res = await m.pay(paymentBody(m.pos.id, value));
  expect(res.status, res.text).toBe(201);
  expect(res.body.data.status).toBe('approved');
  return res.body.data as { id: string };
}

const openDispute = (paymentId: string, body?: unknown) =>
  call('POST', `/v1/test-helpers/payments/${paymentId}/dispute`, {
    token: m.key.secret,
    ...(body !== undefined ? { body } : {}),
  });
const closeDispute = (disputeId: string, outcome: 'won' | 'lost') =>
  call('POST', `/v1/test-helpers/disputes/${disputeId}/close`, { token: m.key.secret, body: { outcome } });
const refund = (paymentId: string, value: string, key?: string) =>
  postIdempotent(`/v1/payments/${paymentId}/refunds`, m.key.secret, { amount: { value, currency: 'USD' } }, key);
const cancel = (paymentId: string) => postIdempotent(`/v1/payments/${paymentId}/cancel`, m.key.secret);
const get = (path: string) => call('GET', path, { token: m.key.secret });
const eventTypes = async (paymentId: string) => (await eventRowsOf(paymentId)).map((e) => e.type);

/** The payment's running totals as stored (the ledger's, domain/ledger/records.ts). */
const totals = (paymentId: string) =>
  dataPlane
    .prepare('SELECT amount_refunded, amount_reserved, amount_charged_back, open_dispute_id FROM payments WHERE id = ?')
    .bind(paymentId)
    .first<{
      amount_refunded: number;
      amount_reserved: number;
      amount_charged_back: number;
      open_dispute_id: string | null;
    }>();

/** The processor's verified news of a dispute (as a signed notification carries it), applied to the payment. */
async function disputeNews(paymentId: string, dispute: Omit<ProcessorDispute, 'paymentProcessorReference'>) {
  const deps = await depsOfPayment(paymentId);
  const method = (await loadPaymentMethod(deps, m.pos.id))!;
  const { version, ctx } = await connectorFor(deps, method);
  const row = (await paymentRow(paymentId))!;
  return applyNotification(deps, method, version, ctx, {
    eventId: newId('sbxevt'),
    resource: 'payment',
    processorReference: row.processor_reference!,
    trusted: true,
    status: null,
    dispute: { ...dispute, paymentProcessorReference: row.processor_reference! },
  });
}

const facts = (id: string, status: ProcessorDispute['status'], minor: number) => ({
  processorDisputeId: id,
  status,
  amount: { minor, currency: 'USD' },
  reason: 'fraudulent' as const,
  evidenceDueBy: null,
  fundsWithdrawnAt: Date.now(),
  fundsReinstatedAt: null,
  processorStatus: status,
});

describe('while a dispute is open', () => {
  it('a refund is refused (409 payment_disputed, naming the dispute), and allowed again once it is won', async () => {
    const payment = await approvedPayment('25.00');
    const dispute = (await openDispute(payment.id, { amount: { value: '10.00', currency: 'USD' } })).body.data;
    const refused = expectError(await refund(payment.id, '20.00'), 409, 'payment_disputed');
    expect(refused.retryable).toBe(false);
    expect(refused.details).toMatchObject({ dispute_id: dispute.id });
    expect((await totals(payment.id))!.amount_reserved).toBe(0);
    expect((await closeDispute(dispute.id, 'won')).body.data.status).toBe('won');
    const allowed = await refund(payment.id, '20.00');
    expect(allowed.status, allowed.text).toBe(201);
    expect(allowed.body.data.status).toBe('approved');
  });

  it('a void is refused (409 payment_disputed), nothing is asked of the processor', async () => {
    const payment = await approvedPayment('26.00');
    const dispute = (await openDispute(payment.id)).body.data;
    expectError(await cancel(payment.id), 409, 'payment_disputed');
    expect((await get(`/v1/payments/${payment.id}`)).body.data.status).toBe('approved');
    // The dispute still runs to its end.
    expect((await closeDispute(dispute.id, 'lost')).body.data.status).toBe('lost');
  });

  it('a second dispute is refused by the sandbox, and a processor’s news of one changes nothing', async () => {
    const payment = await approvedPayment('27.00');
    const first = (await openDispute(payment.id, { amount: { value: '10.00', currency: 'USD' } })).body.data;
    const second = expectError(await openDispute(payment.id), 409, 'payment_disputed');
    expect(second.details).toMatchObject({ dispute_id: first.id });
    const before = await eventTypes(payment.id);
    expect(await disputeNews(payment.id, facts('sbx_dp_second', 'needs_response', 2_700))).toBe('ignored');
    expect((await get(`/v1/payments/${payment.id}/disputes`)).body.data.map((d: { id: string }) => d.id)).toEqual([
      first.id,
    ]);
    expect(await eventTypes(payment.id)).toEqual(before);
  });
});

describe('refunded plus charged back never exceeds the amount', () => {
  it('a dispute lost after a refund books only what the refund left', async () => {
    const payment = await approvedPayment('25.00');
    expect((await refund(payment.id, '20.00')).body.data.status).toBe('approved');
    const dispute = (await openDispute(payment.id)).body.data;
    expect((await closeDispute(dispute.id, 'lost')).body.data.status).toBe('lost');
    expect(await totals(payment.id)).toEqual({
      amount_refunded: 2_000,
      amount_reserved: 0,
      amount_charged_back: 500,
      open_dispute_id: null,
    });
    // Nothing is left for anyone: no refund, no second chargeback's booking.
    expectError(await refund(payment.id, '0.01'), 409, 'invalid_state_transition');
    expect(await disputeNews(payment.id, facts('sbx_dp_later', 'lost', 2_500))).toBe('applied');
    expect((await totals(payment.id))!.amount_charged_back).toBe(500);
  });
});

describe('a dispute of a payment voided after collection', () => {
  it('is recorded and followed to its close (no chargeback is booked: the void returned the money)', async () => {
    const payment = await approvedPayment('28.00');
    expect((await cancel(payment.id)).body.data.status).toBe('canceled');
    expect(await disputeNews(payment.id, facts('sbx_dp_voided', 'needs_response', 2_800))).toBe('applied');
    const [dispute] = (await get(`/v1/payments/${payment.id}/disputes`)).body.data;
    expect(dispute).toMatchObject({ status: 'needs_response' });
    const closed = await closeDispute(dispute.id, 'won');
    expect(closed.body.data.status).toBe('won');
    expect((await get(`/v1/disputes/${dispute.id}`)).body.data.status).toBe('won');
    expect((await totals(payment.id))!.amount_charged_back).toBe(0);
  });
});

describe('a closed dispute never changes again', () => {
  it('closing a lost dispute as won changes nothing and sends nothing', async () => {
    const payment = await approvedPayment('29.00');
    const dispute = (await openDispute(payment.id)).body.data;
    const lost = (await closeDispute(dispute.id, 'lost')).body.data;
    const events = await eventTypes(payment.id);
    const again = await closeDispute(dispute.id, 'won');
    expect(again.status, again.text).toBe(200);
    expect(again.body.data).toEqual(lost);
    expect(again.body.data.funds_reinstated_at).toBeNull();
    expect(await eventTypes(payment.id)).toEqual(events);
  });

  it('under concurrent closes, one outcome wins, the dispute closes once and stays closed', async () => {
    const payment = await approvedPayment('30.00');
    const dispute = (await openDispute(payment.id)).body.data;
    const outcomes: ('won' | 'lost')[] = ['won', 'lost', 'lost', 'won', 'won', 'lost'];
    const answers = await Promise.all(outcomes.map((o) => closeDispute(dispute.id, o)));
    for (const answer of answers) expect(answer.status, answer.text).toBe(200);
    const final = (await get(`/v1/disputes/${dispute.id}`)).body.data;
    expect(['won', 'lost']).toContain(final.status);
    const types = await eventTypes(payment.id);
    expect(types.filter((t) => t === 'dispute.closed')).toHaveLength(1);
    expect(types.filter((t) => t === 'dispute.updated')).toHaveLength(0);
    // Once closed, news of the other outcome changes nothing.
    const other = final.status === 'won' ? 'lost' : 'won';
    expect((await closeDispute(dispute.id, other)).body.data).toEqual(final);
  });
});
