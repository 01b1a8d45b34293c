import { dataPlane, depsOfOwner } from '../helpers/shards.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcile, RECONCILE_APPROVED_REFUND_AFTER_MS } from '../../src/jobs/reconcile.ts';
import { newId } from '../../src/lib/ids.ts';
import { loadPaymentMethod } from '../../src/services/payment-methods/store.ts';
import { applyNotification } from '../../src/services/payments/processor-notifications.ts';
import { connectorFor } from '../../src/services/payments/processor.ts';
import { call, expectError } from '../helpers/api.ts';
import { approvedRefundTotal, paymentRow } from '../helpers/merchant.ts';
import { installStripe, stripeMerchant, type StripeMerchant } from '../helpers/stripe-merchant.ts';
import { captureQueue, createEndpoint, type CapturedQueue } from '../helpers/webhooks.ts';
import { REFUND_FAIL_CARD, StripeSimulator } from '../simulators/stripe.ts';

/**
 * A void at Stripe is a refund of the whole PaymentIntent (the connector's `voidByRefund`); that refund can fail
 * later like any card refund (docs.stripe.com/refunds, "Handle failed refunds"), and then the money is back with
 * the merchant. The Worker talks to the Stripe simulator (installed as the global fetch) and hears it through
 * POST /v1/processor-notifications/{method}, signed as Stripe signs.
 */

const READER = 'tmr_VoidCounter01';
const sim = new StripeSimulator();
// Every voided payment of this file is looked at in one reconciliation run, whatever other files left behind.
const ALL = 10_000;

let m: StripeMerchant;
let endpointId: string;
// Deliveries are queued, not sent: this file is about what is recorded and announced.
let queue: CapturedQueue;
let uninstall: () => void;

beforeAll(async () => {
  queue = captureQueue();
  uninstall = installStripe(sim);
  m = await stripeMerchant(sim, READER);
  // The new event can be subscribed to like any other.
  endpointId = (
    await createEndpoint(m.session, { url: 'https://hooks.example.com/voids', enabled_events: ['payment.void_failed'] })
  ).id;
});

afterAll(() => {
  uninstall();
  queue.restore();
});

const get = (id: string) => m.get(id);
const cancel = (id: string) => m.post(`/v1/payments/${id}/cancel`);
const refund = (id: string, value: string) =>
  m.post(`/v1/payments/${id}/refunds`, { amount: { value, currency: 'USD' } });
const events = async (id: string) =>
  (await call('GET', `/v1/payments/${id}/events?limit=100`, { token: m.apiKey.secret })).body.data as {
    type: string;
    data: { payment: { status: string; updated_at: string } };
    deliveries: { destination: { type: string; endpoint_id: string | null } }[];
  }[];
const send = (delivery: Parameters<StripeMerchant['send']>[0]) => m.send(delivery);

/** An approved POS payment paid with `card` (the simulator's reader presents it). */
async function approved(value: string, card?: string) {
  if (card) sim.useTestCard(READER, card);
  const res = await m.pay(value, { webhook_url: 'https://hooks.example.com/payment' });
  expect(res.status, res.text).toBe(201);
  expect(res.body.data.status).toBe('approved');
  return res.body.data as { id: string; processor_reference: string; updated_at: string };
}

/** An approved payment voided by a refund that Stripe fails later (Terminal's `refund_fail` card); not failed yet. */
async function voided(value: string) {
  const payment = await approved(value, REFUND_FAIL_CARD);
  const res = await cancel(payment.id);
  expect(res.status, res.text).toBe(200);
  expect(res.body.data.status).toBe('canceled');
  return res.body.data as { id: string; processor_reference: string; updated_at: string };
}

/** A notification as the service would take it from a processor, believed as `trusted` says. */
async function notify(notification: Record<string, unknown>) {
  const deps = await depsOfOwner(m.session.user.id);
  const method = (await loadPaymentMethod(deps, m.methodId))!;
  const { version, ctx } = await connectorFor(deps, method);
  return applyNotification(deps, method, version, ctx, {
    eventId: newId('evt'),
    resource: 'payment',
    ...notification,
  } as Parameters<typeof applyNotification>[4]);
}

describe('a void whose refund fails later', () => {
  it('Stripe’s signed news: the payment is approved again, payment.void_failed once, the whole amount refundable', async () => {
    const canceled = await voided('40.00');
    expect((await paymentRow(canceled.id)) as unknown as { voided_at: number | null }).toMatchObject({
      voided_at: expect.any(Number),
    });

    const [failed] = sim.failAsyncRefunds();
    expect(failed).toMatchObject({ status: 'failed', metadata: { purpose: 'void', payment_id: canceled.id } });
    const delivery = await sim.deliver(sim.eventFor('charge.refund.updated', failed!.id));
    const res = await send(delivery);
    expect(res.status, res.text).toBe(200);

    const after = await get(canceled.id);
    expect(after.status).toBe('approved');
    expect(Date.parse(after.updated_at)).toBeGreaterThan(Date.parse(canceled.updated_at));
    const listed = await events(canceled.id);
    // Newest first: the reversal's own event, not a second `payment.approved`.
    expect(listed.map((e) => e.type)).toEqual(['payment.void_failed', 'payment.canceled', 'payment.approved']);
    expect(listed[0]!.data.payment).toMatchObject({ status: 'approved', updated_at: after.updated_at });
    expect(listed[0]!.deliveries.map((d) => d.destination)).toEqual([
      { type: 'payment_url', endpoint_id: null },
      { type: 'endpoint', endpoint_id: endpointId },
    ]);
    const all = await call('GET', '/v1/events?type=payment.void_failed', { token: m.apiKey.secret });
    expect(all.status, all.text).toBe(200);
    expect(all.body.data.map((e: { data: { payment: { id: string } } }) => e.data.payment.id)).toContain(canceled.id);

    // The same news again, and Stripe's other event of it: nothing moves, nothing is sent.
    const version = (await paymentRow(canceled.id))!.version;
    expect((await send(delivery)).status).toBe(200);
    expect((await send(await sim.deliver(sim.eventFor('refund.updated', failed!.id)))).status).toBe(200);
    expect((await paymentRow(canceled.id))!.version).toBe(version);
    expect((await events(canceled.id)).filter((e) => e.type === 'payment.void_failed')).toHaveLength(1);
    // A reconciliation run after it finds nothing more to do.
    await reconcile(
      await depsOfOwner(m.session.user.id),
      Date.now() + RECONCILE_APPROVED_REFUND_AFTER_MS + 60_000,
      ALL,
    );
    expect((await get(canceled.id)).status).toBe('approved');

    // A new cancel is a void again: Stripe replays the same refund, failed, and nothing changes.
    expectError(await cancel(canceled.id), 402, 'processor_declined');
    expect((await get(canceled.id)).status).toBe('approved');

    // Collected again: the whole amount can be refunded, and not a cent more.
    expectError(await refund(canceled.id, '40.01'), 422, 'refund_exceeds_balance');
    const retaken = await refund(canceled.id, '40.00');
    expect(retaken.status, retaken.text).toBe(201);
    expect(retaken.body.data.status).toBe('approved');
    expect((await get(canceled.id)).status).toBe('refunded');
    expect(await approvedRefundTotal(canceled.id)).toBe(4_000);
  });

  it('a lost notification: reconciliation reads the void’s refund within Stripe’s window and finds it failed', async () => {
    const canceled = await voided('41.00');
    const deps = await depsOfOwner(m.session.user.id);
    // Before the refund fails, a run that reads it changes nothing but the look.
    const early = Date.now() + RECONCILE_APPROVED_REFUND_AFTER_MS + 60_000;
    const reads = sim.requestsTo('GET', '/v1/refunds').length;
    await reconcile(deps, early, ALL);
    expect((await get(canceled.id)).status).toBe('canceled');
    expect(sim.requestsTo('GET', '/v1/refunds').length).toBeGreaterThan(reads);

    sim.failAsyncRefunds(); // its events are never delivered
    // Looked at a moment ago: the next run leaves it until its next turn.
    await reconcile(deps, early + 60_000, ALL);
    expect((await get(canceled.id)).status).toBe('canceled');
    await reconcile(deps, early + RECONCILE_APPROVED_REFUND_AFTER_MS + 60_000, ALL);
    const after = await get(canceled.id);
    expect(after.status).toBe('approved');
    expect((await events(canceled.id)).map((e) => e.type)).toEqual([
      'payment.void_failed',
      'payment.canceled',
      'payment.approved',
    ]);
  });

  it('a void whose refund stands is never reopened, however often it is read', async () => {
    const payment = await approved('42.00');
    const res = await cancel(payment.id);
    expect(res.body.data.status).toBe('canceled');
    const canceled = res.body.data as { id: string; processor_reference: string };
    const deps = await depsOfOwner(m.session.user.id);
    for (let turn = 1; turn <= 3; turn++)
      await reconcile(deps, Date.now() + turn * (RECONCILE_APPROVED_REFUND_AFTER_MS + 60_000), ALL);
    expect(await notify({ processorReference: canceled.processor_reference, trusted: true, status: null })).toBe(
      'ignored',
    );
    expect((await get(canceled.id)).status).toBe('canceled');
    expect((await events(canceled.id)).map((e) => e.type)).toEqual(['payment.canceled', 'payment.approved']);
  });
});

describe('a void after a reversed void', () => {
  it('a late retry of the first void’s failed refund does not reopen the payment a second void canceled', async () => {
    const canceled = await voided('46.00');
    const [first] = sim.failAsyncRefunds(); // its events are not delivered yet
    const firstEvent = sim.eventFor('charge.refund.updated', first!.id);
    // Reconciliation finds the failure: approved again.
    await reconcile(
      await depsOfOwner(m.session.user.id),
      Date.now() + RECONCILE_APPROVED_REFUND_AFTER_MS + 60_000,
      ALL,
    );
    expect((await get(canceled.id)).status).toBe('approved');

    // A day later the merchant cancels again: a new refund at Stripe, which stands.
    sim.forgetIdempotencyKeys();
    const again = await cancel(canceled.id);
    expect(again.status, again.text).toBe(200);
    expect(again.body.data.status).toBe('canceled');
    const second = (await paymentRow(canceled.id)) as unknown as { void_refund_reference: string | null };
    expect(second.void_refund_reference).toMatch(/^re_/);
    expect(second.void_refund_reference).not.toBe(first!.id);
    const before = await paymentRow(canceled.id);

    // Stripe retries the first refund's event, signed and true, but about the earlier void.
    expect((await send(await sim.deliver(firstEvent))).status).toBe(200);
    expect(await paymentRow(canceled.id)).toEqual(before);
    expect((await get(canceled.id)).status).toBe('canceled');
    expect((await events(canceled.id)).filter((e) => e.type === 'payment.void_failed')).toHaveLength(1);

    // A void whose refund was not kept (voided before it was): the void's refund is read, and it is not that one.
    await dataPlane.prepare('UPDATE payments SET void_refund_reference = NULL WHERE id = ?').bind(canceled.id).run();
    const unkept = await paymentRow(canceled.id);
    expect(
      await notify({
        processorReference: canceled.processor_reference,
        trusted: true,
        status: 'approved',
        voidReversal: { processorRefundReference: first!.id, failureReason: 'expired_or_canceled_card' },
      }),
    ).toBe('ignored');
    expect(await paymentRow(canceled.id)).toEqual(unkept);
  });
});

describe('news that changes nothing', () => {
  it('an unsigned claim that the void’s refund failed: the service reads the refund, which stands', async () => {
    const canceled = await voided('43.00');
    const before = await paymentRow(canceled.id);
    const outcome = await notify({
      processorReference: canceled.processor_reference,
      trusted: false,
      status: 'approved',
      voidReversal: { processorRefundReference: 're_forged', failureReason: 'lost_or_stolen_card' },
    });
    expect(outcome).toBe('ignored');
    expect(await paymentRow(canceled.id)).toEqual(before);
    sim.failAsyncRefunds();
  });

  it('a notification whose signature does not verify (forged, or stale) is refused and changes nothing', async () => {
    const canceled = await voided('44.00');
    const before = await paymentRow(canceled.id);
    const [failed] = sim.failAsyncRefunds();
    const event = sim.eventFor('charge.refund.updated', failed!.id);
    const forged = await sim.deliver(event, { secret: 'whsec_not_the_merchants' });
    const stale = await sim.deliver(event, { timestamp: Math.floor(Date.now() / 1000) - 3_600 });
    for (const delivery of [forged, stale]) expectError(await send(delivery), 401, 'unauthorized');
    expect(await paymentRow(canceled.id)).toEqual(before);
    expect((await get(canceled.id)).status).toBe('canceled');
  });

  it('a payment canceled before it was collected is never reopened, even by verified news naming a failed void', async () => {
    sim.readerMode = 'manual';
    const res = await m.pay('45.00');
    sim.readerMode = 'auto';
    expect(res.status, res.text).toBe(201);
    expect(res.body.data.status).toBe('pending');
    const canceled = await cancel(res.body.data.id);
    expect(canceled.status, canceled.text).toBe(200);
    expect(canceled.body.data.status).toBe('canceled');
    const before = await paymentRow(canceled.body.data.id);
    expect(before as unknown as { voided_at: number | null }).toMatchObject({ voided_at: null });

    for (const trusted of [true, false])
      expect(
        await notify({
          processorReference: canceled.body.data.processor_reference,
          trusted,
          status: 'approved',
          voidReversal: { processorRefundReference: 're_claimed', failureReason: 'expired_or_canceled_card' },
        }),
      ).toBe('ignored');
    await reconcile(await depsOfOwner(m.session.user.id), Date.now() + 2 * RECONCILE_APPROVED_REFUND_AFTER_MS, ALL);
    expect(await paymentRow(canceled.body.data.id)).toEqual(before);
    expect((await events(canceled.body.data.id)).map((e) => e.type)).not.toContain('payment.void_failed');
  });
});
