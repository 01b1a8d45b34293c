import { dataPlane, depsOfOwner } from '../helpers/shards.ts';
import { beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_REFUND_REVERSAL_WINDOW_MS } from '../../src/connectors/sandbox/index.ts';
import { reconcile, RECONCILE_APPROVED_REFUND_AFTER_MS } from '../../src/jobs/reconcile.ts';
import { newId } from '../../src/lib/ids.ts';
import { loadPaymentMethod } from '../../src/services/payment-methods/store.ts';
import { applyNotification } from '../../src/services/payments/processor-notifications.ts';
import { connectorFor } from '../../src/services/payments/processor.ts';
import { call, expectError } from '../helpers/api.ts';
import {
  approvedRefundTotal,
  paymentBody,
  paymentRow,
  postIdempotent,
  setupMerchant,
  type Merchant,
} from '../helpers/merchant.ts';
import {
  createEndpoint,
  deliveredBodies,
  eventRowsOf,
  getWebhookSecret,
  webhookTestSetup,
} from '../helpers/webhooks.ts';

const HOOK = 'https://hooks.example.com/reversals';
const ENDPOINT_URL = 'https://hooks.example.com/refund-failures';
// Every approved refund of this file is looked at in one reconciliation run, whatever other files left behind.
const ALL = 10_000;

let m: Merchant;
let secret: string;
let endpoint: { id: string; secret: string };
const hooks = webhookTestSetup();

beforeAll(async () => {
  m = await setupMerchant();
  ({ secret } = await getWebhookSecret(m.session));
  endpoint = await createEndpoint(m.session, { url: ENDPOINT_URL, enabled_events: ['refund.failed'] });
});

async function approvedPayment(value: string) {
  const res = await m.pay(paymentBody(m.pos.id, value, { webhook_url: HOOK }));
  expect(res.status, res.text).toBe(201);
  expect(res.body.data.status).toBe('approved');
  return res.body.data as { id: string; updated_at: string };
}

async function refund(paymentId: string, value: string) {
  return postIdempotent(`/v1/payments/${paymentId}/refunds`, m.key.secret, { amount: { value, currency: 'USD' } });
}

const failRefund = (refundId: string, body?: unknown, token = m.key.secret) =>
  call('POST', `/v1/test-helpers/refunds/${refundId}/fail`, { token, ...(body !== undefined ? { body } : {}) });

const getPayment = async (id: string) => (await call('GET', `/v1/payments/${id}`, { token: m.key.secret })).body.data;
const getRefund = async (paymentId: string, id: string) =>
  (await call('GET', `/v1/payments/${paymentId}/refunds/${id}`, { token: m.key.secret })).body.data;
const eventTypes = async (paymentId: string) => (await eventRowsOf(paymentId)).map((e) => e.type);

/** Delivers what is queued and returns the bodies each destination received, verified with its own secret. */
const delivered = () =>
  deliveredBodies(hooks, {
    payment: { url: HOOK, secret },
    endpoint: { url: ENDPOINT_URL, secret: endpoint.secret },
  });

describe('an approved refund the processor reports failed later', () => {
  it('restores the balance, recomputes the payment, sends refund.failed once, and a new refund can take the money', async () => {
    const payment = await approvedPayment('50.00');
    const first = await refund(payment.id, '20.00');
    const second = await refund(payment.id, '30.00');
    expect([first.body.data.status, second.body.data.status]).toEqual(['approved', 'approved']);
    expect(first.body.data.failure_reason).toBeNull();
    expect((await getPayment(payment.id)).status).toBe('refunded');
    hooks.queue.pending.length = 0;

    const res = await failRefund(second.body.data.id, { reason: 'lost_or_stolen_card' });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({
      id: second.body.data.id,
      status: 'failed',
      failure_reason: 'lost_or_stolen_card',
    });
    expect(Date.parse(res.body.data.updated_at)).toBeGreaterThan(Date.parse(second.body.data.updated_at));
    expect(await getRefund(payment.id, second.body.data.id)).toEqual(res.body.data);
    const after = await getPayment(payment.id);
    expect(after.status).toBe('partially_refunded');
    expect(await approvedRefundTotal(payment.id)).toBe(2_000);
    // The payment's status change sends no payment.* event: nothing was refunded or collected anew.
    expect(await eventTypes(payment.id)).toEqual([
      'payment.approved',
      'payment.refunded',
      'payment.refunded',
      'refund.failed',
    ]);

    const sent = await delivered();
    for (const bodies of [sent.payment, sent.endpoint]) {
      expect(bodies).toHaveLength(1);
      expect(bodies[0]).toMatchObject({
        type: 'refund.failed',
        data: { refund: res.body.data, payment: { id: payment.id, status: 'partially_refunded' } },
      });
      expect(Object.keys(bodies[0]!.data)).toEqual(['refund', 'payment']);
      expect(bodies[0]!.data.payment.updated_at).toBe(after.updated_at);
    }
    const listed = await call('GET', `/v1/payments/${payment.id}/events`, { token: m.key.secret });
    expect(listed.body.data[0]).toMatchObject({ type: 'refund.failed', data: { refund: res.body.data } });
    const all = await call('GET', '/v1/events?type=refund.failed', { token: m.key.secret });
    expect(all.body.data.map((e: { data: { payment: { id: string } } }) => e.data.payment.id)).toContain(payment.id);

    // The same news again, and a new notification of it: nothing moves, nothing is sent.
    const version = (await paymentRow(payment.id))!.version;
    for (const reason of [undefined, { reason: 'unknown' }]) {
      const again = await failRefund(second.body.data.id, reason);
      expect(again.status, again.text).toBe(200);
      expect(again.body.data).toEqual(res.body.data);
    }
    expect((await paymentRow(payment.id))!.version).toBe(version);
    expect((await delivered()).payment).toEqual([]);

    // The restored 30.00 is refundable again, and no more.
    expectError(await refund(payment.id, '30.01'), 422, 'refund_exceeds_balance');
    const retaken = await refund(payment.id, '30.00');
    expect(retaken.body.data.status).toBe('approved');
    expect((await getPayment(payment.id)).status).toBe('refunded');
    expect(await approvedRefundTotal(payment.id)).toBe(5_000);
  });

  it('the only approved refund reversed: refunded → approved, the whole amount refundable again', async () => {
    const payment = await approvedPayment('12.00');
    const full = await refund(payment.id, '12.00');
    const res = await failRefund(full.body.data.id);
    expect(res.body.data).toMatchObject({ status: 'failed', failure_reason: 'expired_or_canceled_card' });
    expect((await getPayment(payment.id)).status).toBe('approved');
    expect((await refund(payment.id, '12.00')).body.data.status).toBe('approved');
  });

  it('a reversal racing new refunds never lets approved refunds exceed the amount', async () => {
    for (let round = 0; round < 3; round++) {
      const payment = await approvedPayment('100.00');
      const standing = await refund(payment.id, '60.00');
      const racers = await Promise.all([
        failRefund(standing.body.data.id),
        ...['40.00', '40.00', '40.00', '60.00'].map((value) => refund(payment.id, value)),
      ]);
      for (const res of racers) expect([200, 201, 409, 422], res.text).toContain(res.status);
      const total = await approvedRefundTotal(payment.id);
      expect(total).toBeLessThanOrEqual(10_000);
      const status = (await getPayment(payment.id)).status;
      expect(status).toBe(total === 0 ? 'approved' : total === 10_000 ? 'refunded' : 'partially_refunded');
      expect((await eventTypes(payment.id)).filter((t) => t === 'refund.failed')).toHaveLength(1);
    }
  });

  it('news for a refund that is not approved changes nothing', async () => {
    const payment = await approvedPayment('30.00');
    const declined = await refund(payment.id, '1.61');
    expect(declined.body.data).toMatchObject({ status: 'declined', failure_reason: 'declined' });
    const before = await paymentRow(payment.id);
    const res = await failRefund(declined.body.data.id);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toEqual(declined.body.data);
    expect(await paymentRow(payment.id)).toEqual(before);
  });

  it('another owner’s refund, or a random id: 404 refund_not_found; a reason outside the set: 400', async () => {
    const payment = await approvedPayment('31.00');
    const mine = await refund(payment.id, '31.00');
    const other = await setupMerchant();
    expectError(await failRefund(mine.body.data.id, undefined, other.key.secret), 404, 'refund_not_found');
    expectError(await failRefund(newId('ref')), 404, 'refund_not_found');
    expectError(await failRefund(mine.body.data.id, { reason: 'bank_closed' }), 400, 'invalid_request');
    expect((await getRefund(payment.id, mine.body.data.id)).status).toBe('approved');
    expect((await getPayment(payment.id)).status).toBe('refunded');
  });
});

describe('untrusted news of a reversal', () => {
  async function untrusted(refundId: string) {
    const deps = await depsOfOwner(m.session.user.id);
    const row = await dataPlane
      .prepare('SELECT processor_reference FROM refunds WHERE id = ?')
      .bind(refundId)
      .first<{ processor_reference: string }>();
    const method = (await loadPaymentMethod(deps, m.pos.id))!;
    const { version, ctx } = await connectorFor(deps, method);
    return applyNotification(deps, method, version, ctx, {
      eventId: newId('sbxevt'),
      resource: 'refund',
      processorReference: row!.processor_reference,
      trusted: false,
      status: 'failed',
      failureReason: 'lost_or_stolen_card',
    });
  }

  it('changes nothing by itself: the processor, read instead, still reports the refund approved', async () => {
    const payment = await approvedPayment('20.00');
    const made = await refund(payment.id, '20.00');
    const before = await paymentRow(payment.id);
    expect(await untrusted(made.body.data.id)).toBe('ignored');
    expect(await paymentRow(payment.id)).toEqual(before);
    expect(await getRefund(payment.id, made.body.data.id)).toEqual(made.body.data);
    expect(await eventTypes(payment.id)).not.toContain('refund.failed');
  });

  it('reverses only what the processor’s own answer says, with its reason', async () => {
    const payment = await approvedPayment('20.62');
    // A sandbox refund ending 62 reads as failed (expired_or_canceled_card) whatever the notification claimed.
    const made = await refund(payment.id, '20.62');
    expect(made.body.data.status).toBe('approved');
    expect(await untrusted(made.body.data.id)).toBe('applied');
    expect(await getRefund(payment.id, made.body.data.id)).toMatchObject({
      status: 'failed',
      failure_reason: 'expired_or_canceled_card',
    });
    expect((await getPayment(payment.id)).status).toBe('approved');
    // Within the re-read window the news is a duplicate of that read; after it, the read finds it already failed.
    expect(['duplicate', 'ignored']).toContain(await untrusted(made.body.data.id));
    expect((await eventTypes(payment.id)).filter((t) => t === 'refund.failed')).toHaveLength(1);
  });
});

describe('reconciliation of approved refunds', () => {
  it('finds a reversal whose notification was lost, within the window, once', async () => {
    const payment = await approvedPayment('40.62');
    const made = await refund(payment.id, '40.62');
    const approvedAt = Date.parse(made.body.data.updated_at);
    const deps = await depsOfOwner(m.session.user.id);
    // Not yet due: looked at only after RECONCILE_APPROVED_REFUND_AFTER_MS.
    await reconcile(deps, approvedAt + RECONCILE_APPROVED_REFUND_AFTER_MS - 1, ALL);
    expect((await getRefund(payment.id, made.body.data.id)).status).toBe('approved');
    await reconcile(deps, approvedAt + RECONCILE_APPROVED_REFUND_AFTER_MS, ALL);
    expect(await getRefund(payment.id, made.body.data.id)).toMatchObject({
      status: 'failed',
      failure_reason: 'expired_or_canceled_card',
    });
    expect((await getPayment(payment.id)).status).toBe('approved');
    await reconcile(deps, approvedAt + 2 * RECONCILE_APPROVED_REFUND_AFTER_MS + 1, ALL);
    expect((await eventTypes(payment.id)).filter((t) => t === 'refund.failed')).toHaveLength(1);
  });

  it('re-reads an approved refund that stays approved at most once per interval, and not after the window', async () => {
    const payment = await approvedPayment('41.00');
    const made = await refund(payment.id, '41.00');
    const approvedAt = Date.parse(made.body.data.updated_at);
    const deps = await depsOfOwner(m.session.user.id);
    const reconciledAt = async () =>
      (await dataPlane
        .prepare('SELECT reconciled_at FROM refunds WHERE id = ?')
        .bind(made.body.data.id)
        .first<{ reconciled_at: number | null }>())!.reconciled_at;
    const due = approvedAt + RECONCILE_APPROVED_REFUND_AFTER_MS;
    await reconcile(deps, due, ALL);
    expect(await reconciledAt()).toBe(due);
    await reconcile(deps, due + RECONCILE_APPROVED_REFUND_AFTER_MS - 1, ALL);
    expect(await reconciledAt()).toBe(due);
    const outside = approvedAt + SANDBOX_REFUND_REVERSAL_WINDOW_MS + 1;
    await reconcile(deps, outside, ALL);
    expect(await reconciledAt()).toBe(due);
    expect(await getRefund(payment.id, made.body.data.id)).toMatchObject({ status: 'approved', failure_reason: null });
  });
});
