import { dataPlane, shardDbOf, onEveryShard } from '../helpers/shards.ts';
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { IDEMPOTENCY_RETENTION_MS } from '../../src/domain/idempotency.ts';
import worker from '../../src/index.ts';
import { expireQrPayments } from '../../src/jobs/expire-qr-payments.ts';
import { reconcile, RECONCILE_AFTER_MS } from '../../src/jobs/reconcile.ts';
import { OVERDUE_AFTER_MS, relayOverdueWebhooks } from '../../src/jobs/relay-webhooks.ts';
import { runScheduledJobs } from '../../src/jobs/scheduled.ts';
import { ATTEMPT_LEASE_MS } from '../../src/services/webhooks/deliver.ts';
import { call, expectError } from '../helpers/api.ts';
import {
  addSandboxMethod,
  linkMethod,
  paymentBody,
  paymentRow,
  paymentRowsByReference,
  postIdempotent,
  refundRows,
  SANDBOX_QR,
  setupMerchant,
  type Merchant,
  insertPendingRefund,
} from '../helpers/merchant.ts';
import {
  captureQueue,
  consumeOnce,
  deliveryRow,
  drainQueue,
  elapseUntilDue,
  eventIdsOf,
  eventRowsOf,
  getWebhookSecret,
  receiver,
  verifyWith,
  webhookTestSetup,
} from '../helpers/webhooks.ts';

const HOOK = 'https://hooks.example.com/webhooks';
const SECOND = 1_000;
const MINUTE = 60_000;
// Every stale row of this file is looked at in one run, however many other tests left behind.
const ALL = 10_000;

let m: Merchant;
let secret: string;
const hooks = webhookTestSetup();

beforeAll(async () => {
  m = await setupMerchant();
  ({ secret } = await getWebhookSecret(m.session));
});

interface Row {
  status: string;
  expires_at: number | null;
  processor_reference: string | null;
  created_at: number;
  updated_at: number;
  reconciled_at: number | null;
}

const row = async (id: string) => (await paymentRow(id)) as unknown as Row;
const eventTypes = async (id: string) => (await eventRowsOf(id)).map((e) => e.type);
const getPayment = (id: string) => call('GET', `/v1/payments/${id}`, { token: m.key.secret });

async function pay(
  method: string,
  value: string,
  extra: Record<string, unknown> = { webhook_url: HOOK },
  merchant = m,
) {
  const res = await merchant.pay(paymentBody(method, value, extra));
  expect(res.status, res.text).toBe(201);
  return res.body.data as { id: string; status: string; updated_at: string };
}

/**
 * Delivers what is queued for `paymentId` and returns the verified bodies. Events of a job run with a
 * future `now` are due at that time: the clock is taken there first.
 */
async function deliveredFor(paymentId: string) {
  hooks.rx = receiver();
  await elapseUntilDue(hooks.queue.pending);
  await drainQueue(hooks.queue);
  const bodies = hooks.rx.requests.map((r) => verifyWith(secret, r)).filter((b) => b.data.payment.id === paymentId);
  hooks.rx.restore();
  hooks.rx = undefined;
  return bodies;
}

describe('QR expiry', () => {
  it('a pending QR payment expires once the clock passes expires_at (default qr_ttl_seconds 900), not before, with payment.expired', async () => {
    const before = Date.now();
    const payment = await pay(m.qr.id, '70.00');
    const after = Date.now();
    const { expires_at: expiresAt } = await row(payment.id);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 900_000);
    expect(expiresAt).toBeLessThanOrEqual(after + 900_000);

    await runScheduledJobs(env, expiresAt! - 1);
    expect((await row(payment.id)).status).toBe('pending');
    expect(await eventTypes(payment.id)).toEqual(['payment.pending']);

    const result = await runScheduledJobs(env, expiresAt!);
    expect(result.reduce((n, shard) => n + (shard.expired ?? 0), 0)).toBeGreaterThanOrEqual(1);
    const read = await getPayment(payment.id);
    expect(read.body.data.status).toBe('expired');
    expect(read.body.data.action).toBeUndefined();
    expect(Date.parse(read.body.data.updated_at)).toBeGreaterThanOrEqual(expiresAt!);
    expect(await eventTypes(payment.id)).toEqual(['payment.pending', 'payment.expired']);
    const bodies = await deliveredFor(payment.id);
    expect(bodies.map((b) => [b.type, b.data.payment.status])).toEqual(
      expect.arrayContaining([
        ['payment.pending', 'pending'],
        ['payment.expired', 'expired'],
      ]),
    );

    // Once expired it stays so; a later run changes nothing.
    await runScheduledJobs(env, expiresAt! + 3600_000);
    expect(await eventTypes(payment.id)).toEqual(['payment.pending', 'payment.expired']);
    // And the buyer's late approval cannot revive it.
    const late = await call('POST', `/v1/test-helpers/payments/${payment.id}/approve`, { token: m.key.secret });
    expect(late.body.data.status).toBe('expired');
  });

  it('through the Worker’s own cron handler', async () => {
    const payment = await pay(m.qr.id, '70.01');
    const { expires_at: expiresAt } = await row(payment.id);
    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController({ scheduledTime: expiresAt! + 1, cron: '* * * * *' }), env, ctx);
    await waitOnExecutionContext(ctx);
    expect((await row(payment.id)).status).toBe('expired');
  });

  it('a method configured with qr_ttl_seconds 60 expires its payments after 60 s', async () => {
    const method = await addSandboxMethod(m.session, SANDBOX_QR, undefined, { configuration: { qr_ttl_seconds: 60 } });
    await linkMethod(m.session, method.id, m.key.id);
    const before = Date.now();
    const payment = await pay(method.id, '71.00');
    const { expires_at: expiresAt } = await row(payment.id);
    expect(expiresAt! - before).toBeGreaterThanOrEqual(60_000);
    expect(expiresAt! - before).toBeLessThan(900_000);

    expect((await onEveryShard((deps) => expireQrPayments(deps, expiresAt! - 1, ALL))).every((n) => n >= 0)).toBe(true);
    expect((await row(payment.id)).status).toBe('pending');
    await onEveryShard((deps) => expireQrPayments(deps, expiresAt!, ALL));
    expect((await row(payment.id)).status).toBe('expired');
    expect(await eventTypes(payment.id)).toEqual(['payment.pending', 'payment.expired']);
  });

  it('a payment whose configuration sets qr_ttl_seconds 120 expires after 120 s, whatever its method says', async () => {
    const before = Date.now();
    const payment = await pay(m.qr.id, '71.00', { webhook_url: HOOK, configuration: { qr_ttl_seconds: 120 } });
    const { expires_at: expiresAt } = await row(payment.id);
    expect(expiresAt! - before).toBeGreaterThanOrEqual(120_000);
    expect(expiresAt! - before).toBeLessThan(900_000);
  });

  it('display_qr carries expires_at, the moment the payment expires: in the create answer, in reads and in payment.pending; no action once expired', async () => {
    const method = await addSandboxMethod(m.session, SANDBOX_QR, undefined, { configuration: { qr_ttl_seconds: 120 } });
    await linkMethod(m.session, method.id, m.key.id);
    const created = await m.pay(paymentBody(method.id, '71.50', { webhook_url: HOOK }));
    expect(created.status, created.text).toBe(201);
    const payment = created.body.data;
    const { expires_at: expiresAt } = await row(payment.id);
    const action = {
      type: 'display_qr',
      qr_data: payment.action.qr_data,
      expires_at: new Date(expiresAt!).toISOString(),
    };
    expect(payment.action).toEqual(action);
    // The method's TTL, counted from when the QR was made (the answer's updated_at, which may be 1 ms later
    // when the QR came within the millisecond the payment was recorded: updated_at strictly increases).
    expect(expiresAt! - Date.parse(payment.updated_at)).toBeGreaterThanOrEqual(119_999);
    expect(expiresAt! - Date.parse(payment.updated_at)).toBeLessThanOrEqual(120_000);

    expect((await getPayment(payment.id)).body.data.action).toEqual(action);
    const [pending] = (await deliveredFor(payment.id)).filter((b) => b.type === 'payment.pending');
    expect(pending!.data.payment.action).toEqual(action);

    await onEveryShard((deps) => expireQrPayments(deps, expiresAt!, ALL));
    const expired = (await getPayment(payment.id)).body.data;
    expect(expired.status).toBe('expired');
    expect(expired.action).toBeUndefined();
  });

  it('an approved payment is never expired', async () => {
    const qr = await pay(m.qr.id, '72.00');
    await call('POST', `/v1/test-helpers/payments/${qr.id}/approve`, { token: m.key.secret });
    const pos = await pay(m.pos.id, '72.00');
    const far = Date.now() + 30 * 24 * 3600_000;
    await onEveryShard((deps) => expireQrPayments(deps, far, ALL));
    await runScheduledJobs(env, far);
    expect((await row(qr.id)).status).toBe('approved');
    expect((await row(pos.id)).status).toBe('approved');
    expect(await eventTypes(qr.id)).toEqual(['payment.pending', 'payment.approved']);
  });
});

describe('reconciliation of payments', () => {
  it('a POS payment left pending by a .52 timeout, unknown to the processor: pending while younger than 25 h, failed after', async () => {
    const body = paymentBody(m.pos.id, '73.52', { webhook_url: HOOK });
    expectError(await m.pay(body), 504, 'processor_timeout');
    const id = (await paymentRowsByReference(body.external_reference))[0]!.id;
    const start = await row(id);
    expect(start).toMatchObject({ status: 'pending', processor_reference: null });

    await onEveryShard((deps) => reconcile(deps, start.updated_at + RECONCILE_AFTER_MS + MINUTE, ALL));
    expect((await row(id)).status).toBe('pending');
    expect((await row(id)).reconciled_at).toBe(start.updated_at + RECONCILE_AFTER_MS + MINUTE);
    const lastYoungLook = start.created_at + IDEMPOTENCY_RETENTION_MS - MINUTE;
    await onEveryShard((deps) => reconcile(deps, lastYoungLook, ALL));
    expect((await row(id)).status).toBe('pending');
    expect(await eventTypes(id)).toEqual(['payment.pending']);

    // The next look (10 minutes after the last one) finds it past 25 h.
    const end = lastYoungLook + RECONCILE_AFTER_MS;
    expect(end).toBeGreaterThan(start.created_at + IDEMPOTENCY_RETENTION_MS);
    await onEveryShard((deps) => reconcile(deps, end, ALL));
    const after = await row(id);
    expect(after.status).toBe('failed');
    expect(after.updated_at).toBe(end);
    expect(await eventTypes(id)).toEqual(['payment.pending', 'payment.failed']);
    const bodies = await deliveredFor(id);
    expect(bodies.find((b) => b.type === 'payment.failed')!.data.payment.status).toBe('failed');
  });

  it('a POS payment left created by a .53 outage fails after 25 h too', async () => {
    const body = paymentBody(m.pos.id, '73.53');
    expectError(await m.pay(body), 503, 'processor_unavailable');
    const id = (await paymentRowsByReference(body.external_reference))[0]!.id;
    const start = await row(id);
    expect(start.status).toBe('created');
    await onEveryShard((deps) => reconcile(deps, start.created_at + 2 * RECONCILE_AFTER_MS, ALL));
    expect((await row(id)).status).toBe('created');
    await onEveryShard((deps) => reconcile(deps, start.created_at + IDEMPOTENCY_RETENTION_MS + MINUTE, ALL));
    expect((await row(id)).status).toBe('failed');
    expect(await eventTypes(id)).toEqual(['payment.failed']);
  });

  it('a payment the processor knows, left pending (lost notification), is reconciled through the state machine with its event', async () => {
    const approved = await pay(m.pos.id, '74.00');
    const failed = await pay(m.pos.id, '74.54');
    expect(failed.status).toBe('failed');
    const longAgo = Date.now() - 3600_000;
    for (const id of [approved.id, failed.id]) {
      await dataPlane
        .prepare("UPDATE payments SET status = 'pending', updated_at = ?, version = version + 1 WHERE id = ?")
        .bind(longAgo, id)
        .run();
    }
    expect((await row(approved.id)).processor_reference).not.toBeNull();
    const now = Date.now();
    await onEveryShard((deps) => reconcile(deps, now, ALL));
    expect((await row(approved.id)).status).toBe('approved');
    expect((await row(failed.id)).status).toBe('failed');
    expect((await row(approved.id)).updated_at).toBeGreaterThanOrEqual(now);
    expect(await eventTypes(approved.id)).toEqual(['payment.approved', 'payment.approved']);
    expect(await eventTypes(failed.id)).toEqual(['payment.failed', 'payment.failed']);
    const bodies = await deliveredFor(approved.id);
    expect(bodies.map((b) => b.data.payment.status)).toEqual(['approved', 'approved']);
  });

  it('a pending QR payment the processor still reports pending stays pending, without events; a young payment is not asked about', async () => {
    const qr = await pay(m.qr.id, '75.00');
    const start = await row(qr.id);
    await onEveryShard((deps) => reconcile(deps, start.updated_at + RECONCILE_AFTER_MS - 1, ALL));
    expect((await row(qr.id)).reconciled_at).toBeNull();
    await onEveryShard((deps) => reconcile(deps, start.updated_at + RECONCILE_AFTER_MS, ALL));
    expect(await row(qr.id)).toMatchObject({
      status: 'pending',
      reconciled_at: start.updated_at + RECONCILE_AFTER_MS,
      updated_at: start.updated_at,
    });
    expect(await eventTypes(qr.id)).toEqual(['payment.pending']);
  });
});

describe('reconciliation of refunds', () => {
  const insertRefund = async (paymentId: string, amountMinor: number, processorReference: string | null, at: number) =>
    insertPendingRefund(await shardDbOf(m.session.user.id), {
      paymentId,
      ownerId: m.session.user.id,
      amountMinor,
      processorReference,
      at,
    });
  const refund = (paymentId: string, value: string) =>
    postIdempotent(`/v1/payments/${paymentId}/refunds`, m.key.secret, { amount: { value, currency: 'USD' } });

  it('pending refunds are settled per the processor (.61 declined, others approved); a decline releases its reservation', async () => {
    const payment = await pay(m.pos.id, '100.00');
    const longAgo = Date.now() - 3600_000;
    const declining = await insertRefund(payment.id, 4061, 'sbx_ref_reconcile_declined', longAgo);
    const approving = await insertRefund(payment.id, 3000, 'sbx_ref_reconcile_approved', longAgo);
    // Both pending refunds reserve their amounts: 29.39 is left.
    const over = expectError(await refund(payment.id, '30.00'), 422, 'refund_exceeds_balance');
    expect(over.details).toEqual({ refundable_balance: { value: '29.39', currency: 'USD' } });

    await onEveryShard((deps) => reconcile(deps, Date.now(), ALL));
    const byId = Object.fromEntries((await refundRows(payment.id)).map((r) => [r.id, r.status]));
    expect(byId[declining]).toBe('declined');
    expect(byId[approving]).toBe('approved');
    expect((await row(payment.id)).status).toBe('partially_refunded');
    expect(await eventTypes(payment.id)).toEqual(['payment.approved', 'payment.refunded']);
    const bodies = await deliveredFor(payment.id);
    expect(bodies.find((b) => b.type === 'payment.refunded')!.data.payment.status).toBe('partially_refunded');

    // The declined refund's 40.61 is free again: 70.00 remains, and refunds it all.
    const rest = await refund(payment.id, '70.00');
    expect(rest.status, rest.text).toBe(201);
    expect(rest.body.data.status).toBe('approved');
    expect((await row(payment.id)).status).toBe('refunded');
  });

  it('a refund the processor never saw stays pending (reserved) for 25 h, then fails and releases its amount', async () => {
    const payment = await pay(m.pos.id, '80.00');
    const createdAt = Date.now() - 3600_000;
    const lost = await insertRefund(payment.id, 8000, null, createdAt);
    expectError(await refund(payment.id, '0.01'), 422, 'refund_exceeds_balance');
    await onEveryShard((deps) => reconcile(deps, Date.now(), ALL));
    expect((await refundRows(payment.id)).find((r) => r.id === lost)!.status).toBe('pending');
    await onEveryShard((deps) => reconcile(deps, createdAt + IDEMPOTENCY_RETENTION_MS + MINUTE, ALL));
    expect((await refundRows(payment.id)).find((r) => r.id === lost)!.status).toBe('failed');
    expect((await row(payment.id)).status).toBe('approved');
    expect((await refund(payment.id, '80.00')).body.data.status).toBe('approved');
  });
});

// The relay (src/jobs/relay-webhooks.ts) and the attempt's claim (services/webhooks/deliver.ts): a delivery whose
// queue message was lost with a crashed process, or never sent, is queued again by the cron run a minute after it
// was due; one still in flight (its message on its way, an attempt running) is not sent again.

/** A payment with a webhook URL whose first delivery's queue message is lost; its event id. */
async function lostDelivery(value: string) {
  const res = await m.pay(paymentBody(m.qr.id, value, { webhook_url: HOOK }));
  expect(res.status, res.text).toBe(201);
  const [eventId] = await eventIdsOf(res.body.data.id);
  expect(hooks.queue.pending).toEqual([eventId]);
  hooks.queue.pending.length = 0;
  return eventId!;
}

/** The delivery was due `ago` milliseconds ago (the clock moved on since its message was queued). */
async function dueAgo(eventId: string, ago: number) {
  const changed = await dataPlane
    .prepare("UPDATE webhook_deliveries SET next_attempt_at = ? WHERE event_id = ? AND destination = 'payment_url'")
    .bind(Date.now() - ago, eventId)
    .run();
  expect(changed.meta.changes).toBe(1);
}

/** The cron's relay, now, on every shard. */
const cronRun = (now = Date.now()) => onEveryShard((deps) => relayOverdueWebhooks(deps, now, ALL));

/** The messages queued for `eventId` (the relay also sends what other tests of this file left overdue). */
const queuedFor = (eventId: string) => hooks.queue.pending.filter((key) => key === eventId);

/** Takes the messages queued for `eventId` off the queue, to be consumed. */
function take(eventId: string): string[] {
  const taken = queuedFor(eventId);
  hooks.queue.pending = hooks.queue.pending.filter((key) => key !== eventId);
  return taken;
}

describe('relay: a delivery whose queue message was lost', () => {
  it('is queued again by the cron run a minute after it was due, once, and delivered once', async () => {
    const eventId = await lostDelivery('81.00');
    await dueAgo(eventId, MINUTE);
    await cronRun();
    expect(queuedFor(eventId)).toEqual([eventId]);
    // Its new message is on its way: a cron run that overlaps this one does not send it again.
    await cronRun();
    expect(queuedFor(eventId)).toEqual([eventId]);
    expect((await deliveryRow(eventId))!.next_attempt_at).toBeGreaterThan(Date.now() - MINUTE);

    hooks.rx = receiver();
    const round = await consumeOnce(take(eventId));
    expect(round.acked).toEqual([eventId]);
    expect(hooks.rx.requests.map((r) => verifyWith(secret, r).id)).toEqual([eventId]);
    expect(await deliveryRow(eventId)).toMatchObject({ status: 'succeeded', attempts: 1 });
    await cronRun(Date.now() + 24 * 3600 * SECOND);
    expect(queuedFor(eventId)).toEqual([]);
  });

  it('is left alone while its message may still be on its way to the consumer (due less than 15 s ago)', async () => {
    const eventId = await lostDelivery('82.00');
    await dueAgo(eventId, OVERDUE_AFTER_MS - SECOND);
    await cronRun();
    expect(queuedFor(eventId)).toEqual([]);
    await dueAgo(eventId, OVERDUE_AFTER_MS + SECOND);
    await cronRun();
    expect(queuedFor(eventId)).toEqual([eventId]);
  });

  it('the retry the consumer asked for, lost with its process: queued again a minute after it was due', async () => {
    const eventId = await lostDelivery('83.00');
    await dueAgo(eventId, MINUTE);
    await cronRun();
    hooks.rx = receiver(() => new Response(null, { status: 503 }));
    const failed = await consumeOnce(take(eventId));
    expect(failed.retried).toEqual([{ eventId, delaySeconds: expect.any(Number) }]);
    // The retry message is lost (the queue never hands it back); its time comes and goes.
    expect(await deliveryRow(eventId)).toMatchObject({ status: 'pending', attempts: 1 });
    await cronRun();
    expect(queuedFor(eventId)).toEqual([]);
    await dueAgo(eventId, MINUTE);
    await cronRun();
    expect(queuedFor(eventId)).toEqual([eventId]);
    hooks.rx.restore();
    hooks.rx = receiver();
    await consumeOnce(take(eventId));
    expect(await deliveryRow(eventId)).toMatchObject({ status: 'succeeded', attempts: 2 });
  });
});

describe('relay: a delivery in flight', () => {
  it('an attempt running now holds it: neither the cron nor a duplicate message sends it beside the attempt', async () => {
    const eventId = await lostDelivery('84.00');
    await dueAgo(eventId, MINUTE);
    let answer!: (response: Response) => void;
    let arrived!: () => void;
    const reached = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    hooks.rx = receiver(
      () =>
        new Promise<Response>((resolve) => {
          answer = resolve;
          arrived();
        }),
    );
    // The receiver is slow: the attempt is running while the cron runs and the message comes a second time.
    const running = consumeOnce([eventId]);
    await reached;
    const claimed = await dataPlane
      .prepare("SELECT leased_until FROM webhook_deliveries WHERE event_id = ? AND destination = 'payment_url'")
      .bind(eventId)
      .first<number>('leased_until');
    expect(claimed).toBeGreaterThan(Date.now());
    expect(claimed).toBeLessThanOrEqual(Date.now() + ATTEMPT_LEASE_MS);

    await cronRun();
    expect(queuedFor(eventId)).toEqual([]);
    const duplicate = await consumeOnce([eventId]);
    // The duplicate comes back once the claim would have ended, instead of sending beside the attempt.
    expect(duplicate.retried).toEqual([{ eventId, delaySeconds: expect.any(Number) }]);
    expect(duplicate.retried[0]!.delaySeconds).toBeLessThanOrEqual(ATTEMPT_LEASE_MS / SECOND);
    expect(hooks.rx.requests).toHaveLength(1);

    answer(new Response(null, { status: 204 }));
    expect((await running).acked).toEqual([eventId]);
    expect(await deliveryRow(eventId)).toMatchObject({ status: 'succeeded', attempts: 1 });
    // The duplicate, back: nothing left to do.
    expect((await consumeOnce([eventId])).acked).toEqual([eventId]);
    expect(hooks.rx.requests).toHaveLength(1);
  });

  it('a claim whose process died lapses: the cron queues the delivery again, and the attempt is made', async () => {
    const eventId = await lostDelivery('85.00');
    await dueAgo(eventId, MINUTE);
    const claim = (until: number) =>
      dataPlane
        .prepare("UPDATE webhook_deliveries SET leased_until = ? WHERE event_id = ? AND destination = 'payment_url'")
        .bind(until, eventId)
        .run();
    // An attempt claimed it and its process died before recording anything.
    await claim(Date.now() + 5 * SECOND);
    await cronRun();
    expect(queuedFor(eventId)).toEqual([]);
    await claim(Date.now() - SECOND);
    await cronRun();
    expect(queuedFor(eventId)).toEqual([eventId]);
    hooks.rx = receiver();
    await consumeOnce(take(eventId));
    expect(await deliveryRow(eventId)).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect(hooks.rx.requests).toHaveLength(1);
  });
});

describe('relay: a failed queue send', () => {
  it('a failed queue send loses nothing: the payment is created, and the relay sends the delivery later', async () => {
    hooks.queue.restore();
    const failing = vi.spyOn(env.WEBHOOKS, 'sendBatch').mockRejectedValue(new Error('queue unavailable'));
    let payment: { id: string };
    try {
      payment = await pay(m.qr.id, '77.00');
    } finally {
      failing.mockRestore();
      hooks.queue = captureQueue();
    }
    const [eventId] = await eventIdsOf(payment.id);
    expect((await deliveryRow(eventId!))!.status).toBe('pending');
    // The cron run a minute later (the clock moved on: the delivery was due a minute ago).
    await dataPlane
      .prepare('UPDATE webhook_deliveries SET next_attempt_at = next_attempt_at - ? WHERE event_id = ?')
      .bind(MINUTE, eventId)
      .run();
    await runScheduledJobs(env, Date.now());
    expect(hooks.queue.pending).toContain(eventId);
    hooks.rx = receiver();
    await consumeOnce([eventId!]);
    expect(hooks.rx.requests.map((r) => verifyWith(secret, r).id)).toEqual([eventId]);
  });
});

describe('jobs stay in their environment and owner-agnostic', () => {
  it('another owner’s pending QR payment expires by the same job', async () => {
    const other = await setupMerchant();
    const payment = await pay(other.qr.id, '78.00', {}, other);
    const { expires_at: expiresAt } = await row(payment.id);
    await onEveryShard((deps) => expireQrPayments(deps, expiresAt!, ALL));
    expect((await row(payment.id)).status).toBe('expired');
  });
});
