import { depsOfPayment } from '../helpers/shards.ts';
import { beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.ts';
import { loadPaymentMethod } from '../../src/services/payment-methods/store.ts';
import { applyNotification } from '../../src/services/payments/processor-notifications.ts';
import { connectorFor } from '../../src/services/payments/processor.ts';
import { call, expectError } from '../helpers/api.ts';
import { paymentBody, paymentRow, postIdempotent, setupMerchant, type Merchant } from '../helpers/merchant.ts';
import {
  createEndpoint,
  deliveredBodies,
  eventRowsOf,
  getWebhookSecret,
  webhookTestSetup,
} from '../helpers/webhooks.ts';

const HOOK = 'https://hooks.example.com/disputes';
const ENDPOINT_URL = 'https://hooks.example.com/dispute-endpoint';
const DISPUTE_FIELDS = [
  'id',
  'payment_id',
  'status',
  'amount',
  'reason',
  'evidence_due_by',
  'funds_withdrawn_at',
  'funds_reinstated_at',
  'created_at',
  'updated_at',
];

let m: Merchant;
let secret: string;
let endpoint: { id: string; secret: string };
const hooks = webhookTestSetup();

beforeAll(async () => {
  m = await setupMerchant();
  ({ secret } = await getWebhookSecret(m.session));
  endpoint = await createEndpoint(m.session, {
    url: ENDPOINT_URL,
    enabled_events: ['dispute.created', 'dispute.updated', 'dispute.closed'],
  });
});

async function approvedPayment(value: string, merchant = m) {
  const res = await merchant.pay(paymentBody(merchant.pos.id, value, { webhook_url: HOOK }));
  expect(res.status, res.text).toBe(201);
  expect(res.body.data.status).toBe('approved');
  return res.body.data as { id: string; updated_at: string; amount: { value: string; currency: string } };
}

const openDispute = (paymentId: string, body?: unknown, token = m.key.secret) =>
  call('POST', `/v1/test-helpers/payments/${paymentId}/dispute`, { token, ...(body !== undefined ? { body } : {}) });
const closeDispute = (disputeId: string, body: unknown, token = m.key.secret) =>
  call('POST', `/v1/test-helpers/disputes/${disputeId}/close`, { token, body });
const get = (path: string, token = m.key.secret) => call('GET', path, { token });
const eventTypes = async (paymentId: string) => (await eventRowsOf(paymentId)).map((e) => e.type);

const delivered = () =>
  deliveredBodies(hooks, {
    payment: { url: HOOK, secret },
    endpoint: { url: ENDPOINT_URL, secret: endpoint.secret },
  });

describe('a dispute opened, funds withdrawn, then won', () => {
  it('is visible through the three reads and the events, and reinstates the funds', async () => {
    const payment = await approvedPayment('45.00');
    hooks.queue.pending.length = 0;
    const opened = await openDispute(payment.id, { amount: { value: '40.00', currency: 'USD' }, reason: 'fraudulent' });
    expect(opened.status, opened.text).toBe(200);
    const dispute = opened.body.data;
    expect(Object.keys(dispute)).toEqual(DISPUTE_FIELDS);
    expect(dispute).toMatchObject({
      payment_id: payment.id,
      status: 'needs_response',
      amount: { value: '40.00', currency: 'USD' },
      reason: 'fraudulent',
      funds_reinstated_at: null,
    });
    expect(dispute.id).toMatch(/^dsp_/);
    // Withdrawn when the bank opened it, a moment before the news was recorded.
    expect(Date.parse(dispute.funds_withdrawn_at)).toBeLessThanOrEqual(Date.parse(dispute.created_at));
    expect(Date.parse(dispute.evidence_due_by)).toBeGreaterThan(Date.parse(dispute.created_at));

    expect((await get(`/v1/disputes/${dispute.id}`)).body.data).toEqual(dispute);
    const ofPayment = await get(`/v1/payments/${payment.id}/disputes`);
    expect(ofPayment.status).toBe(200);
    expect(ofPayment.body).toEqual({
      data: [dispute],
      pagination: { limit: 50, offset: 0, total: 1, has_more: false },
    });
    const open = await get('/v1/disputes?status=needs_response&limit=100');
    expect(open.body.data.map((d: { id: string }) => d.id)).toContain(dispute.id);
    // The payment is unchanged but for updated_at: a dispute is not a status, and only a lost one is a chargeback.
    const after = (await get(`/v1/payments/${payment.id}`)).body.data;
    expect(after).toMatchObject({ status: 'approved', charged_back_at: null });

    const sent = await delivered();
    for (const bodies of [sent.payment, sent.endpoint]) {
      expect(bodies.map((b) => b.type)).toEqual(['dispute.created']);
      expect(Object.keys(bodies[0]!.data)).toEqual(['dispute', 'payment']);
      expect(bodies[0]!.data.dispute).toEqual(dispute);
      expect(bodies[0]!.data.payment.updated_at).toBe(after.updated_at);
    }

    const won = await closeDispute(dispute.id, { outcome: 'won' });
    expect(won.status, won.text).toBe(200);
    expect(won.body.data).toMatchObject({
      id: dispute.id,
      status: 'won',
      funds_withdrawn_at: dispute.funds_withdrawn_at,
    });
    expect(won.body.data.funds_reinstated_at).not.toBeNull();
    expect(Date.parse(won.body.data.updated_at)).toBeGreaterThan(Date.parse(dispute.updated_at));
    expect((await get(`/v1/payments/${payment.id}`)).body.data).toMatchObject({
      status: 'approved',
      charged_back_at: null,
    });
    expect(await eventTypes(payment.id)).toEqual(['payment.approved', 'dispute.created', 'dispute.closed']);
    const closed = await delivered();
    expect(closed.endpoint.map((b) => [b.type, b.data.dispute.status])).toEqual([['dispute.closed', 'won']]);

    // Final: closing again changes nothing and sends nothing.
    const version = (await paymentRow(payment.id))!.version;
    const again = await closeDispute(dispute.id, { outcome: 'lost' });
    expect(again.status, again.text).toBe(200);
    expect(again.body.data).toEqual(won.body.data);
    expect((await paymentRow(payment.id))!.version).toBe(version);
    expect((await delivered()).payment).toEqual([]);

    const listed = await get(`/v1/payments/${payment.id}/events`);
    expect(listed.body.data[0]).toMatchObject({ type: 'dispute.closed', data: { dispute: won.body.data } });
    const all = await get('/v1/events?type=dispute.closed&limit=100');
    expect(all.body.data.map((e: { data: { dispute: { id: string } } }) => e.data.dispute.id)).toContain(dispute.id);
  });
});

describe('a dispute lost', () => {
  it('sets charged_back_at (the summary), sends dispute.closed and payment.charged_back, refuses refunds', async () => {
    const payment = await approvedPayment('46.00');
    const dispute = (await openDispute(payment.id)).body.data;
    expect(dispute).toMatchObject({ amount: payment.amount, reason: 'fraudulent', status: 'needs_response' });
    const lost = await closeDispute(dispute.id, { outcome: 'lost' });
    expect(lost.body.data).toMatchObject({ status: 'lost', funds_reinstated_at: null });
    const after = (await get(`/v1/payments/${payment.id}`)).body.data;
    expect(after.status).toBe('approved');
    expect(after.charged_back_at).not.toBeNull();
    expect(await eventTypes(payment.id)).toEqual([
      'payment.approved',
      'dispute.created',
      'dispute.closed',
      'payment.charged_back',
    ]);
    const refund = await postIdempotent(`/v1/payments/${payment.id}/refunds`, m.key.secret, {
      amount: { value: '1.00', currency: 'USD' },
    });
    expectError(refund, 409, 'invalid_state_transition');
    expect((await get(`/v1/disputes?status=lost&limit=100`)).body.data.map((d: { id: string }) => d.id)).toContain(
      dispute.id,
    );
  });
});

describe('hostile input and owner isolation', () => {
  it('another owner’s dispute answers exactly like a random id', async () => {
    const payment = await approvedPayment('47.00');
    const dispute = (await openDispute(payment.id)).body.data;
    const other = await setupMerchant();
    const foreign = await get(`/v1/disputes/${dispute.id}`, other.key.secret);
    const random = await get(`/v1/disputes/${newId('dsp')}`, other.key.secret);
    expectError(foreign, 404, 'dispute_not_found');
    expectError(random, 404, 'dispute_not_found');
    expect(foreign.body.error.message).toBe(random.body.error.message);
    expect(foreign.body.error.details).toEqual(random.body.error.details);
    expectError(await get(`/v1/payments/${payment.id}/disputes`, other.key.secret), 404, 'payment_not_found');
    expect((await get('/v1/disputes?limit=100', other.key.secret)).body).toEqual({
      data: [],
      pagination: { limit: 100, offset: 0, total: 0, has_more: false },
    });
    expectError(await closeDispute(dispute.id, { outcome: 'won' }, other.key.secret), 404, 'dispute_not_found');
    expectError(await openDispute(payment.id, undefined, other.key.secret), 404, 'payment_not_found');
    expect((await get(`/v1/disputes/${dispute.id}`)).body.data).toEqual(dispute);
  });

  it('refuses wrong types, unknown statuses and fields, and amounts the payment cannot hold', async () => {
    const payment = await approvedPayment('48.00');
    expectError(await get('/v1/disputes?status=open'), 400, 'invalid_request');
    expectError(await get('/v1/disputes?limit=0'), 400, 'invalid_request');
    expectError(await get('/v1/disputes?payment_id=x'), 400, 'invalid_request');
    expectError(await openDispute(payment.id, { reason: 'angry' }), 400, 'invalid_request');
    expectError(await openDispute(payment.id, { amount: { value: 48, currency: 'USD' } }), 400, 'invalid_request');
    expectError(await openDispute(payment.id, { amount: { value: '48.01', currency: 'USD' } }), 400, 'invalid_request');
    expectError(
      await openDispute(payment.id, { amount: { value: '1.00', currency: 'EUR' } }),
      422,
      'unsupported_currency',
    );
    expectError(await openDispute(payment.id, { extra: true }), 400, 'invalid_request');
    const dispute = (await openDispute(payment.id)).body.data;
    expectError(await closeDispute(dispute.id, { outcome: 'draw' }), 400, 'invalid_request');
    expectError(await closeDispute(dispute.id, {}), 400, 'invalid_request');
    expect((await get(`/v1/payments/${payment.id}/disputes`)).body.pagination.total).toBe(1);
  });

  it('a payment never collected cannot be disputed', async () => {
    const res = await m.pay(paymentBody(m.pos.id, '10.51'));
    expect(res.body.data.status).toBe('declined');
    expectError(await openDispute(res.body.data.id), 409, 'invalid_state_transition');
  });

  it('needs payments:read', async () => {
    const { createKey } = await import('../helpers/api.ts');
    const key = await createKey(m.session, ['payments:create']);
    expectError(await get('/v1/disputes', key.secret), 403, 'insufficient_scope');
    expectError(await get(`/v1/disputes/${newId('dsp')}`, key.secret), 403, 'insufficient_scope');
    expectError(await get('/v1/disputes', 'sk_test_forged'), 401, 'unauthorized');
  });
});

describe('news of a dispute nobody can verify', () => {
  it('changes nothing by itself: the processor, read instead, reports no dispute', async () => {
    const payment = await approvedPayment('49.00');
    const deps = await depsOfPayment(payment.id);
    const method = (await loadPaymentMethod(deps, m.pos.id))!;
    const { version, ctx } = await connectorFor(deps, method);
    const row = (await paymentRow(payment.id))!;
    const outcome = await applyNotification(deps, method, version, ctx, {
      eventId: newId('sbxevt'),
      resource: 'payment',
      processorReference: row.processor_reference!,
      trusted: false,
      status: 'charged_back',
      dispute: {
        processorDisputeId: 'sbx_dp_forged',
        paymentProcessorReference: row.processor_reference!,
        status: 'lost',
        amount: { minor: 4_900, currency: 'USD' },
        reason: 'fraudulent',
        evidenceDueBy: null,
        fundsWithdrawnAt: Date.now(),
        fundsReinstatedAt: null,
        processorStatus: 'lost',
      },
    });
    expect(outcome).toBe('ignored');
    expect((await get(`/v1/payments/${payment.id}/disputes`)).body.data).toEqual([]);
    expect((await get(`/v1/payments/${payment.id}`)).body.data.charged_back_at).toBeNull();
  });
});
