import { dataPlane, depsOfOwner } from '../helpers/shards.ts';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AUTO_DISABLE_AFTER_MS, subscribes } from '../../src/domain/webhook-endpoints.ts';
import { relayOverdueWebhooks, OVERDUE_AFTER_MS } from '../../src/jobs/relay-webhooks.ts';
import { deliverEvent } from '../../src/services/webhooks/deliver.ts';
import { call, expectError, type Session } from '../helpers/api.ts';
import { recordedLogLines } from '../helpers/leak-scan.ts';
import { paymentBody, setupMerchant, type Merchant } from '../helpers/merchant.ts';
import {
  consumeOnce,
  createEndpoint,
  deliveryRow,
  drainQueue,
  elapseUntilDue,
  ENDPOINTS,
  eventIdsOf,
  getWebhookSecret,
  receiver,
  verifyWith,
  type ReceivedWebhook,
  webhookTestSetup,
} from '../helpers/webhooks.ts';

/**
 * Account webhook endpoints, deliveries: every event of the owner goes to the payment's `webhook_url`
 * (if any) and to each enabled endpoint subscribed to its type, each its own delivery (attempts, backoff,
 * dead letter) with the same event id; endpoints that fail for 3 days are disabled (clock injected, never
 * waited for).
 */

const HOOK = 'https://hooks.example.com/payment';
const URL_A = 'https://a.example.com/hooks';
const URL_B = 'https://b.example.com/hooks';
const DAY_MS = 24 * 3600 * 1000;

const hooks = webhookTestSetup();

afterEach(() => {
  vi.useRealTimers();
});

async function approve(m: Merchant, paymentId: string) {
  const res = await call('POST', `/v1/test-helpers/payments/${paymentId}/approve`, { token: m.key.secret });
  expect(res.status, res.text).toBe(200);
}

async function pay(m: Merchant, value: string, extra: Record<string, unknown> = {}) {
  const res = await m.pay(paymentBody(m.qr.id, value, extra));
  expect(res.status, res.text).toBe(201);
  return res.body.data as { id: string };
}

const listEvents = (m: Merchant, paymentId: string) =>
  call('GET', `/v1/payments/${paymentId}/events`, { token: m.key.secret });
const redeliver = (m: Merchant, paymentId: string, eventId: string, destination?: string) =>
  call(
    'POST',
    `/v1/payments/${paymentId}/events/${eventId}/redeliver${destination ? `?destination=${encodeURIComponent(destination)}` : ''}`,
    { token: m.key.secret },
  );
const patchEndpoint = (session: Session, id: string, body: unknown) =>
  call('PATCH', `${ENDPOINTS}/${id}`, { token: session.accessToken, body });
const getEndpoint = (session: Session, id: string) => call('GET', `${ENDPOINTS}/${id}`, { token: session.accessToken });

const to = (url: string) => (r: ReceivedWebhook) => r.url === url;
const typesOf = (secret: string, requests: ReceivedWebhook[]) => requests.map((r) => verifyWith(secret, r).type).sort();

describe('fan-out', () => {
  it('payment URL + two endpoints with different filters: the same event ids, one delivery per destination; the failing one is retried while the others get each event once', async () => {
    const m = await setupMerchant();
    const accountSecret = (await getWebhookSecret(m.session)).secret;
    const a = await createEndpoint(m.session, { url: URL_A, enabled_events: ['payment.approved'] });
    const b = await createEndpoint(m.session, { url: URL_B, enabled_events: ['*'] });
    const disabled = await createEndpoint(m.session, { url: 'https://c.example.com/hooks', enabled_events: ['*'] });
    expect((await patchEndpoint(m.session, disabled.id, { disabled: true })).status).toBe(200);
    const stranger = await setupMerchant();
    await createEndpoint(stranger.session, { url: 'https://d.example.com/hooks', enabled_events: ['*'] });

    const payment = await pay(m, '40.00', { webhook_url: HOOK });
    await approve(m, payment.id);
    const [pendingId, approvedId] = await eventIdsOf(payment.id);
    // Queued: pending → HOOK, B; approved → HOOK, A, B.
    expect([...hooks.queue.pending].sort()).toEqual(
      [pendingId, `${pendingId}@${b.id}`, approvedId, `${approvedId}@${a.id}`, `${approvedId}@${b.id}`].sort(),
    );

    // B answers 500 twice per event, then 204; everyone else accepts at once.
    const seenAtB = new Map<string, number>();
    hooks.rx = receiver((request) => {
      if (request.url !== URL_B) return new Response(null, { status: 204 });
      const n = (seenAtB.get(request.headers['webhook-id']!) ?? 0) + 1;
      seenAtB.set(request.headers['webhook-id']!, n);
      return new Response(n <= 2 ? 'no' : null, { status: n <= 2 ? 500 : 204 });
    });
    const rounds = await drainQueue(hooks.queue);
    expect(rounds).toHaveLength(3);
    expect(rounds[1]!.eventIds.sort()).toEqual([`${pendingId}@${b.id}`, `${approvedId}@${b.id}`].sort());

    const hook = hooks.rx.requests.filter(to(HOOK));
    const atA = hooks.rx.requests.filter(to(URL_A));
    const atB = hooks.rx.requests.filter(to(URL_B));
    expect(hooks.rx.requests.filter((r) => ![HOOK, URL_A, URL_B].includes(r.url))).toEqual([]);
    // Each destination verifies with its own secret only.
    expect(typesOf(accountSecret, hook)).toEqual(['payment.approved', 'payment.pending']);
    expect(typesOf(a.secret, atA)).toEqual(['payment.approved']);
    expect(typesOf(b.secret, atB)).toEqual([
      'payment.approved',
      'payment.approved',
      'payment.approved',
      'payment.pending',
      'payment.pending',
      'payment.pending',
    ]);
    expect(() => verifyWith(a.secret, hook[0]!)).toThrow();
    expect(() => verifyWith(accountSecret, atB[0]!)).toThrow();
    expect(() => verifyWith(b.secret, atA[0]!)).toThrow();
    // The same event id (header and body) at every destination, and the same body.
    const approvedAt = (requests: ReceivedWebhook[]) => requests.find((r) => r.headers['webhook-id'] === approvedId)!;
    expect(approvedAt(hook).body).toBe(approvedAt(atA).body);
    expect(approvedAt(atA).body).toBe(approvedAt(atB).body);
    expect(new Set(hooks.rx.requests.map((r) => r.headers['webhook-id']))).toEqual(new Set([pendingId, approvedId]));

    // The listing: per destination, the payment URL first; `delivery` is the payment URL's as before.
    const listed = await listEvents(m, payment.id);
    expect(listed.status).toBe(200);
    const approvedView = listed.body.data.find((e: { id: string }) => e.id === approvedId);
    expect(approvedView.delivery).toMatchObject({ url: HOOK, status: 'succeeded', attempts: 1 });
    expect(
      approvedView.deliveries.map((d: any) => [
        d.destination.type,
        d.destination.endpoint_id,
        d.url,
        d.status,
        d.attempts,
      ]),
    ).toEqual([
      ['payment_url', null, HOOK, 'succeeded', 1],
      ...[
        ['endpoint', a.id, URL_A, 'succeeded', 1],
        ['endpoint', b.id, URL_B, 'succeeded', 3],
      ].sort((x, y) => String(x[1]).localeCompare(String(y[1]))),
    ]);
    const atBView = approvedView.deliveries.find((d: any) => d.destination.endpoint_id === b.id);
    expect(atBView.attempt_log.map((l: any) => [l.attempt, l.status_code, l.error])).toEqual([
      [1, 500, 'http_500'],
      [2, 500, 'http_500'],
      [3, 204, null],
    ]);
    const pendingView = listed.body.data.find((e: { id: string }) => e.id === pendingId);
    expect(pendingView.deliveries.map((d: any) => d.destination.endpoint_id)).toEqual([null, b.id]);
  });

  it('endpoints take every event of the owner, with or without a webhook_url, whichever key made the payment', async () => {
    const m = await setupMerchant();
    const all = await createEndpoint(m.session, { url: URL_A, enabled_events: ['*'] });
    const payment = await pay(m, '41.00');
    const [eventId] = await eventIdsOf(payment.id);
    expect(hooks.queue.pending).toEqual([`${eventId}@${all.id}`]);
    hooks.rx = receiver();
    await drainQueue(hooks.queue);
    expect(hooks.rx.requests.map((r) => r.url)).toEqual([URL_A]);
    const listed = await listEvents(m, payment.id);
    expect(listed.body.data[0].delivery).toBeNull();
    expect(listed.body.data[0].deliveries).toMatchObject([
      { destination: { type: 'endpoint', endpoint_id: all.id }, status: 'succeeded' },
    ]);
  });

  it('a chargeback (no status, its own event) reaches an endpoint subscribed to payment.charged_back alone, with the payment URL’s event id and body', async () => {
    const m = await setupMerchant();
    const chargebacks = await createEndpoint(m.session, { url: URL_A, enabled_events: ['payment.charged_back'] });
    const payment = await pay(m, '41.50', { webhook_url: HOOK });
    await approve(m, payment.id);
    expect(hooks.queue.pending.filter((key) => key.includes('@'))).toEqual([]);
    const charged = await call('POST', `/v1/test-helpers/payments/${payment.id}/charge_back`, { token: m.key.secret });
    expect(charged.status, charged.text).toBe(200);
    const [, , chargedBackId] = await eventIdsOf(payment.id);
    expect(hooks.queue.pending.filter((key) => key.includes('@'))).toEqual([`${chargedBackId}@${chargebacks.id}`]);
    hooks.rx = receiver();
    await drainQueue(hooks.queue);
    const atA = hooks.rx.requests.filter(to(URL_A));
    expect(atA).toHaveLength(1);
    const body = verifyWith(chargebacks.secret, atA[0]!);
    expect(body).toMatchObject({ id: chargedBackId, type: 'payment.charged_back' });
    expect(body.data.payment).toMatchObject({ status: 'approved', charged_back_at: charged.body.data.charged_back_at });
    expect(hooks.rx.requests.filter(to(HOOK)).find((r) => r.headers['webhook-id'] === chargedBackId)!.body).toBe(
      atA[0]!.body,
    );
  });

  it('an endpoint made or subscribed later gets the events from then on only', async () => {
    const m = await setupMerchant();
    const first = await pay(m, '42.00');
    const late = await createEndpoint(m.session, { url: URL_A, enabled_events: ['payment.pending'] });
    expect(hooks.queue.pending).toEqual([]);
    await approve(m, first.id);
    expect(hooks.queue.pending).toEqual([]);
    await patchEndpoint(m.session, late.id, { enabled_events: ['payment.approved'] });
    const second = await pay(m, '42.01');
    expect(hooks.queue.pending).toEqual([]);
    await approve(m, second.id);
    const [, approvedId] = await eventIdsOf(second.id);
    expect(hooks.queue.pending).toEqual([`${approvedId}@${late.id}`]);
  });
});

describe('per destination: redeliver, URL changes, SSRF, relay', () => {
  it('redeliver: to every destination by default, or to the one named; a destination the event lacks is 409', async () => {
    const m = await setupMerchant();
    const ep = await createEndpoint(m.session, { url: URL_A, enabled_events: ['*'] });
    const payment = await pay(m, '43.00', { webhook_url: HOOK });
    const [eventId] = await eventIdsOf(payment.id);
    hooks.rx = receiver();
    await drainQueue(hooks.queue);
    expect(hooks.rx.requests).toHaveLength(2);

    const all = await redeliver(m, payment.id, eventId!);
    expect(all.status, all.text).toBe(202);
    expect(all.body.data.deliveries.map((d: any) => d.status)).toEqual(['pending', 'pending']);
    expect([...hooks.queue.pending].sort()).toEqual([eventId, `${eventId}@${ep.id}`].sort());
    await drainQueue(hooks.queue);

    expect((await redeliver(m, payment.id, eventId!, ep.id)).status).toBe(202);
    expect(hooks.queue.pending).toEqual([`${eventId}@${ep.id}`]);
    await drainQueue(hooks.queue);
    expect((await redeliver(m, payment.id, eventId!, 'payment_url')).status).toBe(202);
    expect(hooks.queue.pending).toEqual([eventId]);
    await drainQueue(hooks.queue);
    expect(hooks.rx.requests.filter(to(URL_A))).toHaveLength(3);
    expect(hooks.rx.requests.filter(to(HOOK))).toHaveLength(3);
    expect(new Set(hooks.rx.requests.map((r) => r.headers['webhook-id']))).toEqual(new Set([eventId]));

    // Another owner's endpoint, a random id and the payment URL of a payment without one: 409 alike.
    const stranger = await setupMerchant();
    const theirs = await createEndpoint(stranger.session, { url: URL_B, enabled_events: ['*'] });
    const foreign = await redeliver(m, payment.id, eventId!, theirs.id);
    expectError(foreign, 409, 'invalid_state_transition');
    expect(foreign.body.error.message).toBe(
      (await redeliver(m, payment.id, eventId!, 'we_00000000000000000000')).body.error.message,
    );
    const bare = await pay(m, '43.01');
    const [bareEvent] = await eventIdsOf(bare.id);
    expectError(await redeliver(m, bare.id, bareEvent!, 'payment_url'), 409, 'invalid_state_transition');
    expect(hooks.queue.pending).toEqual([`${bareEvent}@${ep.id}`]);
  });

  it('a retry goes to the endpoint’s URL as it is now; a URL that became refused is not called (url_refused, dead)', async () => {
    const m = await setupMerchant();
    const ep = await createEndpoint(m.session, { url: URL_A, enabled_events: ['*'] });
    const payment = await pay(m, '44.00');
    const [eventId] = await eventIdsOf(payment.id);
    hooks.rx = receiver((request) =>
      request.url === URL_A ? new Response(null, { status: 503 }) : new Response(null, { status: 200 }),
    );
    const first = await consumeOnce(hooks.queue.pending.splice(0));
    expect(first.retried).toHaveLength(1);
    expect((await patchEndpoint(m.session, ep.id, { url: URL_B })).status).toBe(200);
    const retry = first.retried.map((r) => r.eventId);
    await elapseUntilDue(retry);
    await consumeOnce(retry, 2);
    expect(hooks.rx.requests.map((r) => r.url)).toEqual([URL_A, URL_B]);
    expect(await deliveryRow(eventId!, ep.id)).toMatchObject({ status: 'succeeded', attempts: 2, url: URL_B });

    const second = await pay(m, '44.01');
    const [secondEvent] = await eventIdsOf(second.id);
    await dataPlane
      .prepare('UPDATE webhook_endpoints SET url = ? WHERE id = ?')
      .bind('https://169.254.169.254/latest/meta-data/', ep.id)
      .run();
    const round = await consumeOnce(hooks.queue.pending.splice(0));
    expect(round.acked).toEqual([`${secondEvent}@${ep.id}`]);
    expect(hooks.rx.requests).toHaveLength(2);
    expect(await deliveryRow(secondEvent!, ep.id)).toMatchObject({
      status: 'dead',
      last_error: 'url_refused',
      last_status_code: null,
    });
  });

  it('the relay re-queues an overdue endpoint delivery with its endpoint', async () => {
    const m = await setupMerchant();
    const ep = await createEndpoint(m.session, { url: URL_A, enabled_events: ['*'] });
    const payment = await pay(m, '45.00', { webhook_url: HOOK });
    const [eventId] = await eventIdsOf(payment.id);
    hooks.queue.pending.length = 0;
    const row = await deliveryRow(eventId!, ep.id);
    await relayOverdueWebhooks(await depsOfOwner(m.session.user.id), row!.next_attempt_at! + OVERDUE_AFTER_MS);
    expect(hooks.queue.pending).toEqual(expect.arrayContaining([eventId, `${eventId}@${ep.id}`]));
  });
});

describe('disabled and deleted endpoints', () => {
  it('disabling closes pending deliveries; enabling again resumes from new events only', async () => {
    const m = await setupMerchant();
    const ep = await createEndpoint(m.session, { url: URL_A, enabled_events: ['*'] });
    const before = await pay(m, '46.00');
    const [beforeEvent] = await eventIdsOf(before.id);
    const queued = hooks.queue.pending.splice(0);
    expect((await patchEndpoint(m.session, ep.id, { disabled: true })).status).toBe(200);
    expect(await deliveryRow(beforeEvent!, ep.id)).toMatchObject({
      status: 'dead',
      attempts: 0,
      last_error: 'endpoint_disabled',
    });
    const during = await pay(m, '46.01');
    expect(hooks.queue.pending).toEqual([]);
    expectError(await redeliver(m, before.id, beforeEvent!, ep.id), 409, 'invalid_state_transition');
    expectError(await redeliver(m, before.id, beforeEvent!), 409, 'invalid_state_transition');

    expect((await patchEndpoint(m.session, ep.id, { disabled: false })).status).toBe(200);
    hooks.rx = receiver();
    // The message queued before the disable finds a closed delivery: nothing is sent.
    await consumeOnce(queued);
    expect(hooks.rx.requests).toEqual([]);
    const after = await pay(m, '46.02');
    const [afterEvent] = await eventIdsOf(after.id);
    await drainQueue(hooks.queue);
    expect(hooks.rx.requests.map((r) => r.headers['webhook-id'])).toEqual([afterEvent]);
    const [duringEvent] = await eventIdsOf(during.id);
    expect(await deliveryRow(duringEvent!, ep.id)).toBeNull();
  });

  it('a message for a deleted endpoint sends nothing; the delivery is closed as endpoint_deleted and stays listed', async () => {
    const m = await setupMerchant();
    const ep = await createEndpoint(m.session, { url: URL_A, enabled_events: ['*'] });
    const payment = await pay(m, '47.00');
    const [eventId] = await eventIdsOf(payment.id);
    const queued = hooks.queue.pending.splice(0);
    expect((await call('DELETE', `${ENDPOINTS}/${ep.id}`, { token: m.session.accessToken })).status).toBe(204);
    hooks.rx = receiver();
    const round = await consumeOnce(queued);
    expect(round.acked).toEqual(queued);
    expect(hooks.rx.requests).toEqual([]);
    const listed = await listEvents(m, payment.id);
    expect(listed.body.data[0].deliveries).toMatchObject([
      {
        destination: { type: 'endpoint', endpoint_id: ep.id },
        status: 'dead',
        last_error: 'endpoint_deleted',
        attempts: 0,
      },
    ]);
    expect(eventId).toBe(listed.body.data[0].id);
  });
});

describe('automatic disable after 3 days of failures (clock injected)', () => {
  async function failingSetup() {
    const m = await setupMerchant();
    const ep = await createEndpoint(m.session, { url: URL_A, enabled_events: ['*'] });
    const failing = await createEndpoint(m.session, { url: URL_B, enabled_events: ['*'] });
    hooks.queue.pending.length = 0;
    return { m, ep, failing };
  }
  const newEvent = async (m: Merchant, value: string) => {
    const payment = await pay(m, value);
    hooks.queue.pending.length = 0;
    return (await eventIdsOf(payment.id))[0]!;
  };

  it('every attempt failing for 3 days disables the endpoint (log line, state in the API, pending deliveries closed); other endpoints carry on', async () => {
    const { m, ep, failing } = await failingSetup();
    hooks.rx = receiver((request) =>
      request.url === URL_B ? new Response(null, { status: 500 }) : new Response(null, { status: 204 }),
    );
    const deps = await depsOfOwner(m.session.user.id);
    const t0 = Date.now();
    const first = await newEvent(m, '48.00');
    expect(await deliverEvent(deps, first, t0, failing.id)).toMatchObject({ kind: 'retry' });
    const started = (await getEndpoint(m.session, failing.id)).body.data;
    expect(started).toMatchObject({ status: 'enabled' });
    expect(Date.parse(started.failing_since)).toBe(t0);

    // Just short of 3 days: still enabled.
    const second = await newEvent(m, '48.01');
    expect(await deliverEvent(deps, second, t0 + AUTO_DISABLE_AFTER_MS - 60_000, failing.id)).toMatchObject({
      kind: 'retry',
    });
    expect((await getEndpoint(m.session, failing.id)).body.data.status).toBe('enabled');

    const third = await newEvent(m, '48.02');
    const waiting = await newEvent(m, '48.03');
    const disabledAt = t0 + AUTO_DISABLE_AFTER_MS;
    expect(await deliverEvent(deps, third, disabledAt, failing.id)).toEqual({ kind: 'done' });
    const state = (await getEndpoint(m.session, failing.id)).body.data;
    expect(state).toMatchObject({ status: 'disabled', disabled_reason: 'failing' });
    expect(Date.parse(state.disabled_at)).toBe(disabledAt);
    expect(Date.parse(state.failing_since)).toBe(t0);
    const line = recordedLogLines().find(
      (l) => l.includes('"event":"webhook_endpoint_disabled"') && l.includes(failing.id),
    );
    expect(line).toBeDefined();
    expect(JSON.parse(line!)).toMatchObject({
      level: 'warn',
      endpoint_id: failing.id,
      owner_id: m.session.user.id,
      reason: 'failing',
    });
    // Its other pending deliveries are closed, unattempted; the healthy endpoint's are untouched.
    expect(await deliveryRow(waiting, failing.id)).toMatchObject({
      status: 'dead',
      attempts: 0,
      last_error: 'endpoint_disabled',
    });
    expect(await deliveryRow(third, failing.id)).toMatchObject({ status: 'dead', attempts: 1 });
    expect(await deliveryRow(waiting, ep.id)).toMatchObject({ status: 'pending' });
    const requestsToB = hooks.rx.requests.filter(to(URL_B)).length;
    expect(await deliverEvent(deps, waiting, disabledAt + 1000, failing.id)).toEqual({ kind: 'done' });
    expect(await deliverEvent(deps, waiting, disabledAt + 1000, ep.id)).toEqual({ kind: 'done' });
    expect(hooks.rx.requests.filter(to(URL_B))).toHaveLength(requestsToB);
    expect(await deliveryRow(waiting, ep.id)).toMatchObject({ status: 'succeeded' });

    // New events skip it; enabled again, it receives new events and its streak starts over.
    await pay(m, '48.04');
    expect(hooks.queue.pending.filter((k) => k.endsWith(failing.id))).toEqual([]);
    hooks.queue.pending.length = 0;
    expect((await patchEndpoint(m.session, failing.id, { disabled: false })).body.data).toMatchObject({
      status: 'enabled',
      failing_since: null,
      disabled_reason: null,
    });
    const fresh = await pay(m, '48.05');
    const [freshEvent] = await eventIdsOf(fresh.id);
    expect(hooks.queue.pending).toContain(`${freshEvent}@${failing.id}`);
  });

  it('one success within the 3 days starts the count over', async () => {
    const { m, failing } = await failingSetup();
    let up = false;
    hooks.rx = receiver((request) =>
      request.url === URL_B && !up ? new Response(null, { status: 500 }) : new Response(null, { status: 204 }),
    );
    const deps = await depsOfOwner(m.session.user.id);
    const t0 = Date.now();
    await deliverEvent(deps, await newEvent(m, '49.00'), t0, failing.id);
    up = true;
    await deliverEvent(deps, await newEvent(m, '49.01'), t0 + DAY_MS, failing.id);
    expect((await getEndpoint(m.session, failing.id)).body.data.failing_since).toBeNull();
    up = false;
    const later = t0 + 2 * DAY_MS;
    await deliverEvent(deps, await newEvent(m, '49.02'), later, failing.id);
    await deliverEvent(deps, await newEvent(m, '49.03'), t0 + AUTO_DISABLE_AFTER_MS + 60_000, failing.id);
    const state = (await getEndpoint(m.session, failing.id)).body.data;
    expect(state).toMatchObject({ status: 'enabled' });
    expect(Date.parse(state.failing_since)).toBe(later);
  });

  it('a success recorded after the failing attempt read the streak keeps the endpoint enabled (compare-and-set)', async () => {
    const { m, failing } = await failingSetup();
    hooks.rx = receiver(() => new Response(null, { status: 500 }));
    const deps = await depsOfOwner(m.session.user.id);
    const t0 = Date.now();
    await deliverEvent(deps, await newEvent(m, '50.00'), t0, failing.id);
    const event = await newEvent(m, '50.01');
    // While this attempt is in flight, another attempt succeeds and clears the streak.
    hooks.rx.restore();
    hooks.rx = receiver(async () => {
      await dataPlane.prepare('UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ?').bind(failing.id).run();
      return new Response(null, { status: 500 });
    });
    await deliverEvent(deps, event, t0 + AUTO_DISABLE_AFTER_MS + 60_000, failing.id);
    expect((await getEndpoint(m.session, failing.id)).body.data.status).toBe('enabled');
  });
});

describe('signing with the endpoint’s secret during a rotation (standardwebhooks)', () => {
  it('both secrets verify a delivery during the 24-hour overlap; only the new one after', async () => {
    const m = await setupMerchant();
    const ep = await createEndpoint(m.session, { url: URL_A, enabled_events: ['*'] });
    const rotated = await call('POST', `${ENDPOINTS}/${ep.id}/rotate-secret`, { token: m.session.accessToken });
    expect(rotated.status).toBe(200);
    const newSecret = rotated.body.data.secret as string;
    const expiresAt = Date.parse(rotated.body.data.previous_secret_expires_at);
    hooks.rx = receiver();
    const deps = await depsOfOwner(m.session.user.id);

    const during = await pay(m, '51.00');
    const [duringEvent] = await eventIdsOf(during.id);
    await deliverEvent(deps, duringEvent!, Date.now(), ep.id);
    const signedDuring = hooks.rx.requests.at(-1)!;
    expect(signedDuring.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(verifyWith(ep.secret, signedDuring).id).toBe(duringEvent);
    expect(verifyWith(newSecret, signedDuring).id).toBe(duringEvent);

    const after = await pay(m, '51.01');
    const [afterEvent] = await eventIdsOf(after.id);
    const later = expiresAt + 60_000;
    await deliverEvent(deps, afterEvent!, later, ep.id);
    const signedAfter = hooks.rx.requests.at(-1)!;
    expect(signedAfter.headers['webhook-signature']!.split(' ')).toHaveLength(1);
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(later);
    expect(verifyWith(newSecret, signedAfter).id).toBe(afterEvent);
    expect(() => verifyWith(ep.secret, signedAfter)).toThrow();
  });
});

describe('the subscription rule, as the event batch applies it in SQL', () => {
  it('agrees with domain/webhook-endpoints.ts `subscribes` for every kind of list and the event types sent', async () => {
    const m = await setupMerchant();
    const lists = [
      ['*'],
      ['payment.pending'],
      ['payment.approved'],
      ['payment.approved', 'payment.refunded'],
      ['payment.refunded'],
      ['payment.canceled', 'payment.pending'],
    ];
    const endpoints = [];
    for (const [i, enabled_events] of lists.entries())
      endpoints.push({
        ...(await createEndpoint(m.session, { url: `https://s${i}.example.com/hooks`, enabled_events })),
        enabled_events,
      });
    const payment = await pay(m, '41.00');
    await approve(m, payment.id);
    const events = await dataPlane
      .prepare('SELECT id, type FROM payment_events WHERE payment_id = ?')
      .bind(payment.id)
      .all<{ id: string; type: string }>();
    expect(events.results.map((e) => e.type).sort()).toEqual(['payment.approved', 'payment.pending']);
    for (const event of events.results) {
      const rows = await dataPlane
        .prepare('SELECT destination FROM webhook_deliveries WHERE event_id = ?')
        .bind(event.id)
        .all<{ destination: string }>();
      const expected = endpoints.filter((e) => subscribes(e.enabled_events, event.type)).map((e) => e.id);
      expect(rows.results.map((r) => r.destination).sort()).toEqual(expected.sort());
      // And the queue was told about exactly those.
      expect(
        hooks.queue.pending
          .filter((key) => key.startsWith(`${event.id}@`))
          .map((key) => key.split('@')[1])
          .sort(),
      ).toEqual(expected.sort());
    }
  });
});
