import { dataPlane, shardDbOf } from '../helpers/shards.ts';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_SIGNATURE_HEADER, signSandboxNotification } from '../../src/connectors/sandbox/index.ts';
import { PAYMENT_TRANSITIONS, type PaymentStatus } from '../../src/domain/payment-state.ts';
import { newId } from '../../src/lib/ids.ts';
import { call, expectError } from '../helpers/api.ts';
import {
  paymentBody,
  paymentRow,
  postIdempotent,
  setupMerchant,
  type Merchant,
  insertPendingRefund,
} from '../helpers/merchant.ts';
import {
  consumeOnce,
  drainQueue,
  eventRowsOf,
  getWebhookSecret,
  receiver,
  verifyWith,
  type WebhookBody,
  webhookTestSetup,
} from '../helpers/webhooks.ts';

const HOOK = 'https://hooks.example.com/webhooks';

let m: Merchant;
let secret: string;
const hooks = webhookTestSetup();

beforeAll(async () => {
  m = await setupMerchant();
  ({ secret } = await getWebhookSecret(m.session));
});

async function qrPayment(value = '40.00', extra: Record<string, unknown> = { webhook_url: HOOK }) {
  const res = await m.pay(paymentBody(m.qr.id, value, extra));
  expect(res.status, res.text).toBe(201);
  expect(res.body.data.status).toBe('pending');
  return res.body.data as { id: string; status: string; processor_reference: string; updated_at: string };
}

function notify(methodId: string, rawBody: string, signature: string | null) {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  if (signature !== null) headers[SANDBOX_SIGNATURE_HEADER] = signature;
  return call('POST', `/v1/processor-notifications/${methodId}`, { rawBody, headers });
}

async function signedNotify(body: Record<string, unknown>, apiKey = m.qr.apiKey, methodId = m.qr.id) {
  const raw = JSON.stringify(body);
  return notify(methodId, raw, await signSandboxNotification({ api_key: apiKey }, raw));
}

const notificationBody = (reference: string, status: string, id = newId('sbxevt')) => ({
  id,
  resource: 'payment',
  reference,
  status,
});

async function snapshot(paymentId: string) {
  const row = await paymentRow(paymentId);
  const events = await eventRowsOf(paymentId);
  return { status: row!.status, version: row!.version, updatedAt: row!.updated_at, events: events.map((e) => e.id) };
}

async function notificationRows(eventId: string) {
  const { results } = await dataPlane
    .prepare('SELECT * FROM processor_notifications WHERE event_id = ?')
    .bind(eventId)
    .all<{ outcome: string }>();
  return results;
}

describe('POST /v1/processor-notifications/{payment_method_id}', () => {
  it('a correctly signed notification applies: the payment moves, with its event and webhook', async () => {
    const payment = await qrPayment();
    hooks.queue.pending.length = 0;
    const body = notificationBody(payment.processor_reference, 'approved');
    const res = await signedNotify(body);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toEqual({ received: true, outcome: 'applied' });
    const after = await call('GET', `/v1/payments/${payment.id}`, { token: m.key.secret });
    expect(after.body.data.status).toBe('approved');
    expect(Date.parse(after.body.data.updated_at)).toBeGreaterThan(Date.parse(payment.updated_at));
    expect((await eventRowsOf(payment.id)).map((e) => e.type)).toEqual(['payment.pending', 'payment.approved']);
    expect(await notificationRows(body.id)).toMatchObject([{ outcome: 'applied' }]);

    hooks.rx = receiver();
    await drainQueue(hooks.queue);
    expect(hooks.rx.requests).toHaveLength(1);
    const delivered = verifyWith(secret, hooks.rx.requests[0]!);
    expect(delivered).toMatchObject({
      type: 'payment.approved',
      data: { payment: { id: payment.id, status: 'approved', updated_at: after.body.data.updated_at } },
    });
  });

  it('a forged signature, a missing signature, a tampered body: 401 and nothing changes', async () => {
    const payment = await qrPayment('40.01');
    const before = await snapshot(payment.id);
    const body = notificationBody(payment.processor_reference, 'approved');
    const raw = JSON.stringify(body);
    const genuine = await signSandboxNotification({ api_key: m.qr.apiKey }, raw);

    const forged = await notify(m.qr.id, raw, await signSandboxNotification({ api_key: 'not-the-method-key' }, raw));
    expectError(forged, 401, 'unauthorized');
    expectError(await notify(m.qr.id, raw, null), 401, 'unauthorized');
    expectError(await notify(m.qr.id, raw, ''), 401, 'unauthorized');
    expectError(
      await notify(m.qr.id, raw, genuine.toUpperCase() === genuine ? genuine.toLowerCase() : genuine.toUpperCase()),
      401,
      'unauthorized',
    );
    const tampered = raw.replace('"approved"', '"declined"');
    expectError(await notify(m.qr.id, tampered, genuine), 401, 'unauthorized');
    // Another method's key does not sign for this one.
    expectError(
      await notify(m.qr.id, raw, await signSandboxNotification({ api_key: m.pos.apiKey }, raw)),
      401,
      'unauthorized',
    );
    // A signed body the sandbox does not understand is refused too (fail closed).
    const nonsense = JSON.stringify({
      id: newId('sbxevt'),
      resource: 'payment',
      reference: payment.processor_reference,
      status: 'teleported',
    });
    expectError(
      await notify(m.qr.id, nonsense, await signSandboxNotification({ api_key: m.qr.apiKey }, nonsense)),
      401,
      'unauthorized',
    );

    expect(await snapshot(payment.id)).toEqual(before);
    expect(await notificationRows(body.id)).toEqual([]);
    // The genuine one still applies afterwards: the refusals left no trace that blocks it.
    expect((await notify(m.qr.id, raw, genuine)).body.data.outcome).toBe('applied');
  });

  it('an unknown payment method: 404 payment_method_not_found', async () => {
    const raw = JSON.stringify(notificationBody('sbx_pay_unknown', 'approved'));
    const res = await notify(crypto.randomUUID(), raw, await signSandboxNotification({ api_key: m.qr.apiKey }, raw));
    expectError(res, 404, 'payment_method_not_found');
  });

  it('an unknown processor reference is received (unknown_resource) and changes nothing', async () => {
    const res = await signedNotify(notificationBody('sbx_pay_000000000000000000000000', 'approved'));
    expect(res.status).toBe(200);
    expect(res.body.data.outcome).toBe('unknown_resource');
  });

  it('a duplicate event id: outcome duplicate, no second change or event, even with another status', async () => {
    const payment = await qrPayment('40.02');
    const body = notificationBody(payment.processor_reference, 'approved');
    expect((await signedNotify(body)).body.data.outcome).toBe('applied');
    const afterFirst = await snapshot(payment.id);
    const again = await signedNotify(body);
    expect(again.status).toBe(200);
    expect(again.body.data.outcome).toBe('duplicate');
    expect((await signedNotify({ ...body, status: 'declined' })).body.data.outcome).toBe('duplicate');
    expect(await snapshot(payment.id)).toEqual(afterFirst);
    expect(afterFirst.events).toHaveLength(2);
  });

  it('a late pending after approved: outcome ignored, status stays approved, no event', async () => {
    const payment = await qrPayment('40.03');
    expect((await signedNotify(notificationBody(payment.processor_reference, 'approved'))).body.data.outcome).toBe(
      'applied',
    );
    const approved = await snapshot(payment.id);
    for (const late of ['pending', 'processing', 'declined', 'expired']) {
      const res = await signedNotify(notificationBody(payment.processor_reference, late));
      expect(res.status).toBe(200);
      expect(res.body.data.outcome, late).toBe('ignored');
    }
    expect(await snapshot(payment.id)).toEqual(approved);
    expect(approved.status).toBe('approved');
  });
});

describe('refund notifications', () => {
  it('settle a pending refund through the state machine: approved moves the payment and sends payment.refunded; repeats change nothing', async () => {
    const pos = await m.pay(paymentBody(m.pos.id, '60.00', { webhook_url: HOOK }));
    expect(pos.body.data.status).toBe('approved');
    const paymentId = pos.body.data.id as string;
    // A refund the processor took but has not answered for yet (as after a timeout).
    const refundId = newId('ref');
    const reference = `sbx_ref_${crypto.randomUUID().slice(0, 8)}`;
    const at = Date.now() - 60_000;
    const ownerId = m.session.user.id;
    await insertPendingRefund(
      await shardDbOf(ownerId),
      { paymentId, ownerId, amountMinor: 2000, processorReference: reference, at },
      refundId,
    );
    const approved = { id: newId('sbxevt'), resource: 'refund', reference, status: 'approved' };
    const res = await signedNotify(approved, m.pos.apiKey, m.pos.id);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.outcome).toBe('applied');
    const after = await snapshot(paymentId);
    expect(after.status).toBe('partially_refunded');
    expect((await eventRowsOf(paymentId)).map((e) => e.type)).toEqual(['payment.approved', 'payment.refunded']);
    expect((await signedNotify(approved, m.pos.apiKey, m.pos.id)).body.data.outcome).toBe('duplicate');
    // A late `pending` cannot move an approved refund back (a failure after approval is a reversal instead:
    // refund-reversals.test.ts).
    expect(
      (await signedNotify({ ...approved, id: newId('sbxevt'), status: 'pending' }, m.pos.apiKey, m.pos.id)).body.data
        .outcome,
    ).toBe('ignored');
    expect(await snapshot(paymentId)).toEqual(after);
    const refunds = await call('GET', `/v1/payments/${paymentId}`, { token: m.key.secret });
    expect(refunds.body.data.status).toBe('partially_refunded');
  });
});

/** Every status reachable from `from` through the state machine (not `from` itself unless it repeats). */
function reachable(from: PaymentStatus): Set<PaymentStatus> {
  const seen = new Set<PaymentStatus>();
  const next = [...PAYMENT_TRANSITIONS[from]];
  while (next.length) {
    const s = next.pop()!;
    if (seen.has(s)) continue;
    seen.add(s);
    next.push(...PAYMENT_TRANSITIONS[s]);
  }
  return seen;
}

/**
 * A receiver following the interface's rules: verify, deduplicate by event id, and apply a payment's
 * state only when it is newer (`updated_at`) and reachable through valid transitions.
 */
function followingReceiver(initial: { status: PaymentStatus; updated_at: string }) {
  const seen = new Set<string>();
  const state = { ...initial };
  return {
    state,
    receive(body: WebhookBody) {
      if (seen.has(body.id)) return;
      seen.add(body.id);
      const incoming = body.data.payment as { status: PaymentStatus; updated_at: string };
      if (Date.parse(incoming.updated_at) <= Date.parse(state.updated_at)) return;
      if (incoming.status !== state.status && !reachable(state.status).has(incoming.status)) return;
      state.status = incoming.status;
      state.updated_at = incoming.updated_at;
    },
  };
}

describe('out-of-order delivery', () => {
  it('events delivered in reverse order never regress a receiver that compares updated_at; it ends in the final state', async () => {
    const payment = await qrPayment('50.00');
    await call('POST', `/v1/test-helpers/payments/${payment.id}/approve`, { token: m.key.secret });
    const refund = (value: string) =>
      postIdempotent(`/v1/payments/${payment.id}/refunds`, m.key.secret, { amount: { value, currency: 'USD' } });
    expect((await refund('20.00')).body.data.status).toBe('approved');
    expect((await refund('30.00')).body.data.status).toBe('approved');
    const final = (await call('GET', `/v1/payments/${payment.id}`, { token: m.key.secret })).body.data;
    expect(final.status).toBe('refunded');

    const events = await eventRowsOf(payment.id);
    expect(events.map((e) => e.type)).toEqual([
      'payment.pending',
      'payment.approved',
      'payment.refunded',
      'payment.refunded',
    ]);
    // The service delivers them newest first (one batch, in that order).
    hooks.queue.pending.length = 0;
    hooks.rx = receiver();
    await consumeOnce(events.map((e) => e.id).reverse());
    const delivered = hooks.rx.requests.map((r) => verifyWith(secret, r));
    expect(delivered.map((b) => b.data.payment.status)).toEqual([
      'refunded',
      'partially_refunded',
      'approved',
      'pending',
    ]);

    const follower = followingReceiver({ status: 'pending', updated_at: payment.updated_at });
    for (const body of delivered) follower.receive(body);
    expect(follower.state).toEqual({ status: final.status, updated_at: final.updated_at });
    // A receiver that just takes the last message would have regressed to `pending`.
    expect(delivered.at(-1)!.data.payment.status).toBe('pending');

    // Any order, with any duplicates, ends the same.
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: delivered.length - 1 }), { maxLength: 12 }),
        fc.shuffledSubarray(delivered, { minLength: delivered.length }),
        (dupes, order) => {
          const receiver = followingReceiver({ status: 'pending', updated_at: payment.updated_at });
          for (const body of [...order, ...dupes.map((i) => delivered[i]!)]) receiver.receive(body);
          return receiver.state.status === final.status && receiver.state.updated_at === final.updated_at;
        },
      ),
    );
  });
});

describe('test helpers', () => {
  it.each([
    ['approve', 'approved', 'payment.approved'],
    ['decline', 'declined', 'payment.declined'],
    ['expire', 'expired', 'payment.expired'],
    ['fail', 'failed', 'payment.failed'],
  ] as const)(
    '%s moves a pending QR payment to %s through the notification path and sends %s',
    async (action, status, type) => {
      const payment = await qrPayment('41.00');
      hooks.queue.pending.length = 0;
      const res = await call('POST', `/v1/test-helpers/payments/${payment.id}/${action}`, { token: m.key.secret });
      expect(res.status, res.text).toBe(200);
      expect(res.body.data).toMatchObject({ id: payment.id, status });
      expect(Date.parse(res.body.data.updated_at)).toBeGreaterThan(Date.parse(payment.updated_at));
      expect(res.body.data.action).toBeUndefined();
      // Through the same path as a processor's notification: recorded like one.
      const { results } = await dataPlane
        .prepare('SELECT outcome FROM processor_notifications WHERE processor_reference = ? AND payment_method_id = ?')
        .bind(payment.processor_reference, m.qr.id)
        .all<{ outcome: string }>();
      expect(results).toEqual([{ outcome: 'applied' }]);
      hooks.rx = receiver();
      await drainQueue(hooks.queue);
      expect(hooks.rx.requests.map((r) => verifyWith(secret, r))).toMatchObject([
        { type, data: { payment: { id: payment.id, status, updated_at: res.body.data.updated_at } } },
      ]);
    },
  );

  it('on a payment that is not pending, a test helper changes nothing and sends nothing', async () => {
    const pos = await m.pay(paymentBody(m.pos.id, '42.00', { webhook_url: HOOK }));
    expect(pos.body.data.status).toBe('approved');
    const expired = await qrPayment('42.01');
    await call('POST', `/v1/test-helpers/payments/${expired.id}/expire`, { token: m.key.secret });
    const before = [await snapshot(pos.body.data.id), await snapshot(expired.id)];
    hooks.queue.pending.length = 0;
    const sentBefore = hooks.queue.sent.length;
    for (const action of ['approve', 'decline', 'expire', 'fail']) {
      for (const id of [pos.body.data.id, expired.id]) {
        const res = await call('POST', `/v1/test-helpers/payments/${id}/${action}`, { token: m.key.secret });
        expect(res.status, res.text).toBe(200);
      }
    }
    expect([await snapshot(pos.body.data.id), await snapshot(expired.id)]).toEqual(before);
    expect(hooks.queue.sent.slice(sentBefore)).toEqual([]);
  });

  it('another owner’s payment: 404, as for a random id', async () => {
    const other = await setupMerchant();
    const payment = await qrPayment('43.00');
    const foreign = await call('POST', `/v1/test-helpers/payments/${payment.id}/approve`, { token: other.key.secret });
    expectError(foreign, 404, 'payment_not_found');
    expectError(
      await call('POST', `/v1/test-helpers/payments/${newId('pay')}/approve`, { token: other.key.secret }),
      404,
      'payment_not_found',
    );
    expect((await snapshot(payment.id)).status).toBe('pending');
  });
});
