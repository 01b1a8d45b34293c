import { dataPlane, depsOfOwner } from '../helpers/shards.ts';
import fc from 'fast-check';
import { WebhookVerificationError } from 'standardwebhooks';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  DELIVERY_WINDOW_MS,
  nextAttemptAt,
  RETRY_DELAYS_SECONDS,
  retryDelaySeconds,
  STEADY_RETRY_SECONDS,
} from '../../src/domain/webhook-schedule.ts';
import { newId } from '../../src/lib/ids.ts';
import { DELIVERY_TIMEOUT_MS, deliverEvent } from '../../src/services/webhooks/deliver.ts';
import { call, createKey, expectError } from '../helpers/api.ts';
import { trackSecret } from '../helpers/leak-scan.ts';
import { paymentBody, postIdempotent, setupMerchant, type Merchant } from '../helpers/merchant.ts';
import {
  consumeOnce,
  deliveryRow,
  drainQueue,
  elapseUntilDue,
  eventIdsOf,
  eventRowsOf,
  getWebhookSecret,
  hang,
  receiver,
  verifyWith,
  type WebhookBody,
  webhookTestSetup,
} from '../helpers/webhooks.ts';
import { withoutRequestId } from '../helpers/methods.ts';

const HOOK = 'https://hooks.example.com/webhooks';
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let m: Merchant;
let other: Merchant;
let secret: string;
const hooks = webhookTestSetup();
const restores: (() => void)[] = [];

beforeAll(async () => {
  [m, other] = await Promise.all([setupMerchant(), setupMerchant()]);
  ({ secret } = await getWebhookSecret(m.session));
});

afterEach(() => {
  // Not vi.restoreAllMocks(): test/setup.ts spies on console to record log lines for the leak scan.
  for (const restore of restores.splice(0)) restore();
});

async function pay(
  method: string,
  value: string,
  extra: Record<string, unknown> = { webhook_url: HOOK },
  merchant = m,
) {
  const res = await merchant.pay(paymentBody(method, value, extra));
  expect(res.status, res.text).toBe(201);
  return res.body.data as { id: string; status: string; updated_at: string; webhook_url: string | null };
}

async function testHelper(paymentId: string, action: 'approve' | 'decline' | 'expire' | 'fail', token = m.key.secret) {
  const res = await call('POST', `/v1/test-helpers/payments/${paymentId}/${action}`, { token });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

const listEvents = (paymentId: string, token = m.key.secret) =>
  call('GET', `/v1/payments/${paymentId}/events`, { token });
const redeliver = (paymentId: string, eventId: string, token = m.key.secret) =>
  call('POST', `/v1/payments/${paymentId}/events/${eventId}/redeliver`, { token });

/** Delivers everything queued to a receiver that accepts, verifying each with `standardwebhooks`. */
async function deliverAllVerified(): Promise<WebhookBody[]> {
  const accepted = receiver();
  hooks.rx = accepted;
  await drainQueue(hooks.queue);
  accepted.restore();
  hooks.rx = undefined;
  return accepted.requests.map((r) => verifyWith(secret, r));
}

describe('signed deliveries', () => {
  it('verify with the standardwebhooks package; webhook-id is the body id, webhook-timestamp unix seconds; body {id, type, created_at, data: {payment}}', async () => {
    const payment = await pay(m.qr.id, '10.00');
    const approved = await testHelper(payment.id, 'approve');
    const accepted = receiver();
    hooks.rx = accepted;
    await drainQueue(hooks.queue);

    expect(accepted.requests).toHaveLength(2);
    const bodies = accepted.requests.map((request) => {
      const verified = verifyWith(secret, request);
      expect(request.url).toBe(HOOK);
      expect(request.method).toBe('POST');
      expect(request.headers['content-type']).toMatch(/^application\/json/);
      expect(request.headers['webhook-id']).toBe(verified.id);
      expect(request.headers['webhook-timestamp']).toMatch(/^\d{10}$/);
      expect(Math.abs(Number(request.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(300);
      expect(request.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
      // The signed text is the raw body: parsing and re-serialising must not be needed to verify.
      expect(JSON.parse(request.body)).toEqual(verified);
      expect(Object.keys(verified).sort()).toEqual(['created_at', 'data', 'id', 'type']);
      expect(Object.keys(verified.data)).toEqual(['payment']);
      expect(verified.id).toMatch(/^evt_/);
      expect(verified.created_at).toMatch(ISO_MS);
      expect(verified.data.payment.id).toBe(payment.id);
      // The event happened when the payment changed: its time is the payment's `updated_at`.
      expect(verified.created_at).toBe(verified.data.payment.updated_at);
      return verified;
    });
    const byType = Object.fromEntries(bodies.map((b) => [b.type, b]));
    expect(Object.keys(byType).sort()).toEqual(['payment.approved', 'payment.pending']);
    expect(byType['payment.pending']!.data.payment).toMatchObject({
      status: 'pending',
      updated_at: payment.updated_at,
      webhook_url: HOOK,
    });
    expect(byType['payment.approved']!.data.payment).toMatchObject({
      status: 'approved',
      updated_at: approved.updated_at,
    });
    // The listing carries the same ids and types.
    const listed = await listEvents(payment.id);
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((e: { id: string }) => e.id).sort()).toEqual(bodies.map((b) => b.id).sort());
    expect(listed.body.pagination).toMatchObject({ total: 2 });
  });

  it('a tampered body, an altered timestamp and a stale (10 minutes old) delivery are refused by the package', async () => {
    const payment = await pay(m.qr.id, '11.00');
    const accepted = receiver();
    hooks.rx = accepted;
    await drainQueue(hooks.queue);
    const [genuine] = accepted.requests;
    expect(verifyWith(secret, genuine!).data.payment.id).toBe(payment.id);

    const tampered = { ...genuine!, body: genuine!.body.replace('"11.00"', '"1100.00"') };
    expect(tampered.body).not.toBe(genuine!.body);
    expect(() => verifyWith(secret, tampered)).toThrow(WebhookVerificationError);
    const otherEvent = { ...genuine!, headers: { ...genuine!.headers, 'webhook-id': newId('evt') } };
    expect(() => verifyWith(secret, otherEvent)).toThrow(WebhookVerificationError);
    const olderHeader = {
      ...genuine!,
      headers: {
        ...genuine!.headers,
        'webhook-timestamp': String(Number(genuine!.headers['webhook-timestamp']) - 600),
      },
    };
    expect(() => verifyWith(secret, olderHeader)).toThrow(WebhookVerificationError);
    expect(() =>
      verifyWith(`whsec_${btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))))}`, genuine!),
    ).toThrow(WebhookVerificationError);

    // A delivery the service signed 10 minutes ago (due then): a correct signature, but too old to accept.
    const signedAt = Date.now() - 10 * 60 * 1000;
    await dataPlane
      .prepare("UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ? WHERE event_id = ?")
      .bind(signedAt, genuine!.headers['webhook-id'])
      .run();
    await deliverEvent(await depsOfOwner(m.session.user.id), genuine!.headers['webhook-id']!, signedAt);
    const stale = accepted.requests.at(-1)!;
    expect(stale.headers['webhook-timestamp']).toBe(String(Math.floor(signedAt / 1000)));
    expect(() => verifyWith(secret, stale)).toThrow(/too old/);
    // Only its age is wrong: at the time it was signed, the same package accepts it.
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(signedAt);
      expect(verifyWith(secret, stale).id).toBe(genuine!.headers['webhook-id']);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('event types', () => {
  it('payment.pending, approved, declined, failed, expired and canceled, each with the payment in that state', async () => {
    const pending = await pay(m.qr.id, '12.00');
    const approved = await pay(m.qr.id, '12.01');
    await testHelper(approved.id, 'approve');
    const declinedQr = await pay(m.qr.id, '12.51');
    await testHelper(declinedQr.id, 'decline');
    const declinedPos = await pay(m.pos.id, '12.51');
    expect(declinedPos.status).toBe('declined');
    const failedPos = await pay(m.pos.id, '12.54');
    expect(failedPos.status).toBe('failed');
    const failedQr = await pay(m.qr.id, '12.02');
    await testHelper(failedQr.id, 'fail');
    const expired = await pay(m.qr.id, '12.03');
    await testHelper(expired.id, 'expire');
    const canceled = await pay(m.qr.id, '12.04');
    const cancel = await postIdempotent(`/v1/payments/${canceled.id}/cancel`, m.key.secret);
    expect(cancel.status, cancel.text).toBe(200);

    const bodies = await deliverAllVerified();
    const seen = (paymentId: string) =>
      bodies
        .filter((b) => b.data.payment.id === paymentId)
        .map((b) => `${b.type}:${b.data.payment.status}`)
        .sort();
    expect(seen(pending.id)).toEqual(['payment.pending:pending']);
    expect(seen(approved.id)).toEqual(['payment.approved:approved', 'payment.pending:pending']);
    expect(seen(declinedQr.id)).toEqual(['payment.declined:declined', 'payment.pending:pending']);
    expect(seen(declinedPos.id)).toEqual(['payment.declined:declined']);
    expect(seen(failedPos.id)).toEqual(['payment.failed:failed']);
    expect(seen(failedQr.id)).toEqual(['payment.failed:failed', 'payment.pending:pending']);
    expect(seen(expired.id)).toEqual(['payment.expired:expired', 'payment.pending:pending']);
    expect(seen(canceled.id)).toEqual(['payment.canceled:canceled', 'payment.pending:pending']);
    // Each event is delivered once when the receiver accepts at once.
    expect(new Set(bodies.map((b) => b.id)).size).toBe(bodies.length);
  });

  it('payment.refunded for each approved refund: partially_refunded, then refunded; a declined refund sends nothing', async () => {
    const payment = await pay(m.pos.id, '100.00');
    expect(payment.status).toBe('approved');
    const refund = (value: string) =>
      postIdempotent(`/v1/payments/${payment.id}/refunds`, m.key.secret, { amount: { value, currency: 'USD' } });
    const partial = await refund('30.00');
    expect(partial.body.data.status).toBe('approved');
    const declined = await refund('10.61');
    expect(declined.body.data.status).toBe('declined');
    const rest = await refund('70.00');
    expect(rest.body.data.status).toBe('approved');

    const bodies = (await deliverAllVerified()).filter((b) => b.data.payment.id === payment.id);
    const refunded = bodies
      .filter((b) => b.type === 'payment.refunded')
      .sort((a, b) => a.data.payment.updated_at.localeCompare(b.data.payment.updated_at));
    expect(refunded.map((b) => b.data.payment.status)).toEqual(['partially_refunded', 'refunded']);
    expect(bodies.map((b) => b.type).sort()).toEqual(['payment.approved', 'payment.refunded', 'payment.refunded']);
  });

  it('a payment without webhook_url records its events but no deliveries', async () => {
    hooks.rx = receiver();
    const payment = await pay(m.qr.id, '13.00', {});
    expect(payment.webhook_url).toBeNull();
    await testHelper(payment.id, 'approve');
    const listed = await listEvents(payment.id);
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((e: { type: string }) => e.type)).toEqual(['payment.approved', 'payment.pending']);
    for (const event of listed.body.data) expect(event.delivery).toBeNull();
    const { results } = await dataPlane
      .prepare('SELECT count(*) AS n FROM webhook_deliveries WHERE payment_id = ?')
      .bind(payment.id)
      .all<{ n: number }>();
    expect(results[0]!.n).toBe(0);
    expect(hooks.queue.sent).toEqual([]);
    await drainQueue(hooks.queue);
    expect(hooks.rx.requests).toEqual([]);
  });
});

describe('retries', () => {
  it('a receiver failing its first attempts (500, network error, timeout) gets every event exactly once after dedup, and the events listing shows each attempt', async () => {
    const receiverBody = `receiver-secret-body-${crypto.randomUUID()}`;
    // The receiver's answer is never shown to anyone (leak scan: no response, no log line).
    trackSecret('receiver_body', receiverBody);
    const payment = await pay(m.qr.id, '14.00');
    await testHelper(payment.id, 'approve');
    const events = await eventIdsOf(payment.id);
    expect(events).toHaveLength(2);

    // A delivery's timeout is the signal fetch gets: this one fires at once on the third attempt.
    const timeouts: number[] = [];
    let fireTimeout = false;
    const timeoutSpy = vi.spyOn(AbortSignal, 'timeout').mockImplementation((ms: number) => {
      timeouts.push(ms);
      return fireTimeout
        ? AbortSignal.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'))
        : new AbortController().signal;
    });
    restores.push(() => timeoutSpy.mockRestore());
    const persisted = new Map<string, WebhookBody>();
    let duplicatesSeen = 0;
    hooks.rx = receiver(async (request, n) => {
      if (n === 1) return new Response(receiverBody, { status: 500 });
      if (n === 2) throw new TypeError(`connection reset ${receiverBody}`);
      if (n === 3) return hang(request);
      // The interface's receiver: verify, deduplicate by id, persist, then 2xx.
      const body = verifyWith(secret, request);
      if (persisted.has(body.id)) duplicatesSeen++;
      else persisted.set(body.id, body);
      return new Response(receiverBody, { status: 200 });
    });

    const first = await consumeOnce(hooks.queue.pending.splice(0));
    expect(first.acked).toEqual([]);
    expect(first.retried.map((r) => r.eventId).sort()).toEqual([...events].sort());
    for (const r of first.retried)
      expect(r.delaySeconds).toBeGreaterThanOrEqual(27), expect(r.delaySeconds).toBeLessThanOrEqual(33);

    const afterFirst = await listEvents(payment.id);
    expect(afterFirst.status).toBe(200);
    for (const event of afterFirst.body.data) {
      expect(event.delivery).toMatchObject({
        url: HOOK,
        status: 'pending',
        attempts: 1,
        last_status_code: 500,
        last_error: 'http_500',
      });
      expect(event.delivery.attempt_log).toEqual([
        {
          attempt: 1,
          status_code: 500,
          error: 'http_500',
          latency_ms: expect.any(Number),
          attempted_at: expect.stringMatching(ISO_MS),
        },
      ]);
      const wait = Date.parse(event.delivery.next_attempt_at) - Date.parse(event.delivery.attempt_log[0].attempted_at);
      expect(wait).toBeGreaterThanOrEqual(27_000);
      expect(wait).toBeLessThanOrEqual(33_000);
    }

    hooks.queue.pending.push(...first.retried.map((r) => r.eventId));
    await elapseUntilDue(hooks.queue.pending);
    const second = await consumeOnce(hooks.queue.pending.splice(0), 2);
    for (const r of second.retried)
      expect(r.delaySeconds).toBeGreaterThanOrEqual(108), expect(r.delaySeconds).toBeLessThanOrEqual(132);
    fireTimeout = true;
    await elapseUntilDue(events);
    const third = await consumeOnce(
      second.retried.map((r) => r.eventId),
      3,
    );
    fireTimeout = false;
    for (const r of third.retried)
      expect(r.delaySeconds).toBeGreaterThanOrEqual(540), expect(r.delaySeconds).toBeLessThanOrEqual(660);
    await elapseUntilDue(events);
    const fourth = await consumeOnce(
      third.retried.map((r) => r.eventId),
      4,
    );
    expect(fourth.retried).toEqual([]);
    expect(fourth.acked.sort()).toEqual([...events].sort());
    expect(timeouts.length).toBe(8);
    expect(new Set(timeouts)).toEqual(new Set([DELIVERY_TIMEOUT_MS]));

    // Every event arrived; each is persisted once.
    expect([...persisted.keys()].sort()).toEqual([...events].sort());
    expect(duplicatesSeen).toBe(0);
    expect(hooks.rx.requests).toHaveLength(8);
    expect(new Set(hooks.rx.requests.map((r) => r.headers['webhook-id']))).toEqual(new Set(events));

    const listed = await listEvents(payment.id);
    expect(listed.text).not.toContain(receiverBody);
    for (const event of listed.body.data) {
      expect(event.delivery).toMatchObject({
        status: 'succeeded',
        attempts: 4,
        last_status_code: 200,
        last_error: null,
        next_attempt_at: null,
      });
      expect(
        event.delivery.attempt_log.map((a: Record<string, unknown>) => [a.attempt, a.status_code, a.error]),
      ).toEqual([
        [1, 500, 'http_500'],
        [2, null, 'network_error'],
        [3, null, 'timeout'],
        [4, 200, null],
      ]);
    }
  });

  it('duplicate messages (redeliver clicked while a retry is queued) do not multiply attempts or retry chains', async () => {
    const payment = await pay(m.qr.id, '14.50');
    const [eventId] = await eventIdsOf(payment.id);
    hooks.rx = receiver(() => new Response(null, { status: 503 }));
    const first = await consumeOnce(hooks.queue.pending.splice(0));
    expect(first.retried).toHaveLength(1);
    // The merchant clicks redeliver three times while the queued retry waits.
    for (let i = 0; i < 3; i++) expect((await redeliver(payment.id, eventId!)).status).toBe(202);
    expect(hooks.queue.pending).toEqual([eventId, eventId, eventId]);
    const clicks = await consumeOnce(hooks.queue.pending.splice(0));
    // One attempt for the clicks, and one retry chain left: the queued retry (its message is acked).
    expect(hooks.rx.requests).toHaveLength(2);
    expect(clicks.retried).toHaveLength(1);
    expect(clicks.acked).toHaveLength(2);
    expect(await deliveryRow(eventId!)).toMatchObject({ status: 'pending', attempts: 2 });
    // The retry queued before the clicks comes at its old time: no longer due, it attempts nothing.
    const stale = await consumeOnce([eventId!]);
    expect(stale.acked).toEqual([eventId]);
    expect(hooks.rx.requests).toHaveLength(2);
  });

  it('redirects are not followed: a 302 is a failed attempt, and the Location is never called', async () => {
    const payment = await pay(m.qr.id, '15.00');
    hooks.rx = receiver(
      () => new Response(null, { status: 302, headers: { Location: 'https://169.254.169.254/latest/meta-data/' } }),
    );
    const round = await consumeOnce(hooks.queue.pending.splice(0));
    expect(round.retried).toHaveLength(1);
    expect(hooks.rx.requests).toHaveLength(1);
    expect(hooks.rx.requests[0]!.url).toBe(HOOK);
    expect(hooks.rx.requests[0]!.redirect).toBe('manual');
    const [event] = (await listEvents(payment.id)).body.data;
    expect(event.delivery).toMatchObject({
      status: 'pending',
      attempts: 1,
      last_status_code: 302,
      last_error: 'http_302',
    });
  });

  it('a delivery still failing 3 days after its event is dead-lettered and kept; redeliver revives it with the same event id', async () => {
    const payment = await pay(m.qr.id, '16.00');
    const [row] = await eventRowsOf(payment.id);
    hooks.queue.pending.length = 0;
    hooks.rx = receiver(() => new Response('down', { status: 503 }));
    const deps = await depsOfOwner(m.session.user.id);
    // Inside the window a failure is retried...
    expect(await deliverEvent(deps, row!.id, row!.created_at + 60_000)).toMatchObject({ kind: 'retry' });
    expect((await deliveryRow(row!.id))!.status).toBe('pending');
    // ...past it, it is dead.
    expect(await deliverEvent(deps, row!.id, row!.created_at + DELIVERY_WINDOW_MS + 60_000)).toEqual({ kind: 'done' });
    expect(await deliveryRow(row!.id)).toMatchObject({
      status: 'dead',
      attempts: 2,
      next_attempt_at: null,
      last_status_code: 503,
    });
    // A dead delivery is not attempted again by a stray message.
    await consumeOnce([row!.id]);
    expect(hooks.rx.requests).toHaveLength(2);

    const listed = await listEvents(payment.id);
    expect(listed.body.data[0].delivery).toMatchObject({ status: 'dead', attempts: 2, next_attempt_at: null });
    expect(listed.body.data[0].delivery.attempt_log).toHaveLength(2);

    hooks.rx.restore();
    const revived = await redeliver(payment.id, row!.id);
    expect(revived.status, revived.text).toBe(202);
    expect(revived.body.data).toMatchObject({ id: row!.id, type: 'payment.pending', delivery: { status: 'pending' } });
    expect(hooks.queue.pending).toEqual([row!.id]);
    const bodies = await deliverAllVerified();
    expect(bodies.map((b) => b.id)).toEqual([row!.id]);
    expect(bodies[0]!.data.payment.status).toBe('pending');
    expect(await deliveryRow(row!.id)).toMatchObject({ status: 'succeeded', attempts: 3, last_status_code: 204 });
  });

  it('redeliver of a delivered event sends the same id again (a deduplicating receiver keeps it once)', async () => {
    const payment = await pay(m.qr.id, '17.00');
    const first = await deliverAllVerified();
    expect(first).toHaveLength(1);
    const res = await redeliver(payment.id, first[0]!.id);
    expect(res.status).toBe(202);
    const again = await deliverAllVerified();
    expect(again).toHaveLength(1);
    expect(again[0]!.id).toBe(first[0]!.id);
    expect(again[0]!.data).toEqual(first[0]!.data);
    const persisted = new Map([...first, ...again].map((b) => [b.id, b]));
    expect(persisted.size).toBe(1);
  });

  it('redeliver: 409 for a payment without webhook_url; 404 for another owner’s payment or event, exactly as for random ids', async () => {
    const noHook = await pay(m.qr.id, '18.00', {});
    const [noHookEvent] = await eventIdsOf(noHook.id);
    expectError(await redeliver(noHook.id, noHookEvent!), 409, 'invalid_state_transition');

    const mine = await pay(m.qr.id, '18.01');
    const [myEvent] = await eventIdsOf(mine.id);
    const theirs = await pay(other.qr.id, '18.02', { webhook_url: HOOK }, other);
    const [theirEvent] = await eventIdsOf(theirs.id);
    hooks.queue.pending.length = 0;
    const sentBefore = hooks.queue.sent.length;

    const foreignPayment = await redeliver(theirs.id, theirEvent!);
    const randomPayment = await redeliver(newId('pay'), theirEvent!);
    expectError(foreignPayment, 404, 'payment_not_found');
    expect(withoutRequestId(foreignPayment)).toEqual(withoutRequestId(randomPayment));
    const foreignEvent = await redeliver(mine.id, theirEvent!);
    const randomEvent = await redeliver(mine.id, newId('evt'));
    expectError(foreignEvent, 404, 'payment_not_found');
    expect(withoutRequestId(foreignEvent)).toEqual(withoutRequestId(randomEvent));
    // An event of one's own payment, under another payment of one's own, is not found either.
    expectError(await redeliver(noHook.id, myEvent!), 404, 'payment_not_found');

    const foreignList = await listEvents(theirs.id);
    expectError(foreignList, 404, 'payment_not_found');
    expect(withoutRequestId(foreignList)).toEqual(withoutRequestId(await listEvents(newId('pay'))));
    expect(hooks.queue.sent.slice(sentBefore)).toEqual([]);
    expect((await deliveryRow(theirEvent!))!.status).toBe('pending');
  });
});

describe('scopes', () => {
  it('listing and redelivering need payments:read', async () => {
    const payment = await pay(m.qr.id, '19.00');
    const [eventId] = await eventIdsOf(payment.id);
    const writeOnly = await createKey(m.session, ['payments:create', 'refunds:create']);
    expectError(await listEvents(payment.id, writeOnly.secret), 403, 'insufficient_scope');
    expectError(await redeliver(payment.id, eventId!, writeOnly.secret), 403, 'insufficient_scope');
    expectError(await listEvents(payment.id, 'sk_test_not_a_key'), 401, 'unauthorized');
    // The owner's session reads them too.
    expect((await listEvents(payment.id, m.session.accessToken)).status).toBe(200);
  });
});

describe('retry schedule', () => {
  it('about 30 s, 2 min, 10 min, 1 h, then every 6 h', () => {
    const middle = () => 0.5;
    expect([1, 2, 3, 4, 5, 6, 20].map((n) => retryDelaySeconds(n, middle))).toEqual([
      30, 120, 600, 3600, 21600, 21600, 21600,
    ]);
    expect(RETRY_DELAYS_SECONDS).toEqual([30, 120, 600, 3600]);
    expect(STEADY_RETRY_SECONDS).toBe(6 * 3600);
  });

  it('with at most ±10% jitter', () => {
    expect(retryDelaySeconds(1, () => 0)).toBe(27);
    expect(retryDelaySeconds(1, () => 0.999999)).toBe(33);
    expect(retryDelaySeconds(5, () => 0)).toBe(19440);
    expect(retryDelaySeconds(5, () => 0.999999)).toBe(23760);
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (n, r) => {
          const base = RETRY_DELAYS_SECONDS[n - 1] ?? STEADY_RETRY_SECONDS;
          const delay = retryDelaySeconds(n, () => r);
          return delay >= Math.floor(base * 0.9) && delay <= Math.ceil(base * 1.1) && delay <= 12 * 3600;
        },
      ),
    );
  });

  it('nextAttemptAt: now + the delay, or null (dead) once past 3 days from the event', () => {
    const created = Date.UTC(2030, 0, 1);
    expect(nextAttemptAt(created, 1, created, () => 0.5)).toBe(created + 30_000);
    expect(nextAttemptAt(created, 4, created + 1000, () => 0.5)).toBe(created + 1000 + 3_600_000);
    expect(nextAttemptAt(created, 9, created + DELIVERY_WINDOW_MS - 6 * 3600_000, () => 0.5)).toBe(
      created + DELIVERY_WINDOW_MS,
    );
    expect(nextAttemptAt(created, 9, created + DELIVERY_WINDOW_MS - 6 * 3600_000 + 1, () => 0.5)).toBeNull();
    // A receiver down for good: attempts at the scheduled times until the window closes.
    let now = created;
    const times: number[] = [now];
    for (let failures = 1; ; failures++) {
      const next = nextAttemptAt(created, failures, now, () => 0.5);
      if (next === null) break;
      times.push((now = next));
    }
    expect(times.slice(1, 5).map((t, i) => t - times[i]!)).toEqual([30_000, 120_000, 600_000, 3_600_000]);
    expect(times.at(-1)!).toBeLessThanOrEqual(created + DELIVERY_WINDOW_MS);
    expect(times.at(-1)!).toBeGreaterThan(created + DELIVERY_WINDOW_MS - 6 * 3600_000);
    expect(times.length).toBe(16);
  });
});
