import { dataPlane, onEveryShard } from '../helpers/shards.ts';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { deliverEvent } from '../../src/services/webhooks/deliver.ts';
import { call, expectError, seedSession } from '../helpers/api.ts';
import { paymentBody, setupMerchant, type Merchant } from '../helpers/merchant.ts';
import {
  drainQueue,
  eventIdsOf,
  getWebhookSecret,
  receiver,
  rotateWebhookSecret,
  verifyWith,
  type ReceivedWebhook,
  webhookTestSetup,
} from '../helpers/webhooks.ts';

const HOOK = 'https://hooks.example.com/webhooks';
const DAY_MS = 24 * 3600 * 1000;

const hooks = webhookTestSetup();

afterEach(() => {
  vi.useRealTimers();
});

function base64Bytes(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}

async function storedRow(ownerId: string) {
  return dataPlane
    .prepare('SELECT * FROM webhook_secrets WHERE owner_id = ?')
    .bind(ownerId)
    .first<Record<string, unknown>>();
}

/** A QR payment with a webhook: its `payment.pending` event, not yet delivered. */
async function pendingEvent(m: Merchant) {
  const res = await m.pay(paymentBody(m.qr.id, '20.00', { webhook_url: HOOK }));
  expect(res.status, res.text).toBe(201);
  const [eventId] = await eventIdsOf(res.body.data.id);
  hooks.queue.pending.length = 0;
  return eventId!;
}

/** Delivers one event at `now` (driving the clock) to an accepting receiver; returns the request. */
async function deliverAt(eventId: string, now: number): Promise<ReceivedWebhook> {
  hooks.rx = receiver();
  await onEveryShard((deps) => deliverEvent(deps, eventId, now));
  const request = hooks.rx.requests.at(-1)!;
  hooks.rx.restore();
  hooks.rx = undefined;
  return request;
}

/** Verifies with `standardwebhooks` as a receiver would at time `at` (its tolerance is 5 minutes of the clock). */
function verifiesAt(secret: string, request: ReceivedWebhook, at: number): boolean {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(at);
  try {
    verifyWith(secret, request);
    return true;
  } catch {
    return false;
  } finally {
    vi.useRealTimers();
  }
}

describe('GET /v1/account/webhook-secret', () => {
  it('whsec_ + base64 of 32 bytes, stable across calls, no previous secret before a rotation', async () => {
    const m = await setupMerchant();
    const first = await getWebhookSecret(m.session);
    expect(first.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(base64Bytes(first.secret.slice('whsec_'.length))).toHaveLength(32);
    expect(first.previousExpiresAt).toBeNull();
    expect(Object.keys(first.res.body.data).sort()).toEqual(['previous_secret_expires_at', 'secret']);
    const second = await getWebhookSecret(m.session);
    expect(second.secret).toBe(first.secret);
  });

  it('is stored encrypted: the D1 row holds neither the secret nor its key bytes', async () => {
    const m = await setupMerchant();
    const { secret } = await getWebhookSecret(m.session);
    const row = await storedRow(m.session.user.id);
    expect(row).not.toBeNull();
    const stored = JSON.stringify(row);
    expect(stored).not.toContain(secret);
    expect(stored).not.toContain(secret.slice('whsec_'.length));
    // Nor in hex.
    const hex = Array.from(base64Bytes(secret.slice('whsec_'.length)), (b) => b.toString(16).padStart(2, '0')).join('');
    expect(stored.toLowerCase()).not.toContain(hex);
    expect(typeof row!.current_ciphertext).toBe('string');
  });

  it('each owner has its own secret, and deliveries of one owner do not verify with another’s', async () => {
    const [a, b] = await Promise.all([setupMerchant(), setupMerchant()]);
    const secretA = (await getWebhookSecret(a.session)).secret;
    const secretB = (await getWebhookSecret(b.session)).secret;
    expect(secretA).not.toBe(secretB);
    await b.pay(paymentBody(b.qr.id, '21.00', { webhook_url: HOOK }));
    hooks.rx = receiver();
    await drainQueue(hooks.queue);
    expect(hooks.rx.requests).toHaveLength(1);
    expect(verifyWith(secretB, hooks.rx.requests[0]!).type).toBe('payment.pending');
    expect(() => verifyWith(secretA, hooks.rx!.requests[0]!)).toThrow();
    // Rotating one owner's secret leaves the other's alone.
    await rotateWebhookSecret(a.session);
    expect((await getWebhookSecret(b.session)).secret).toBe(secretB);
  });

  it('concurrent first reads agree on one secret', async () => {
    const m = await setupMerchant();
    const reads = await Promise.all(Array.from({ length: 5 }, () => getWebhookSecret(m.session)));
    expect(new Set(reads.map((r) => r.secret)).size).toBe(1);
  });

  it('deliveries made before the owner ever read the secret verify with the secret read later', async () => {
    const m = await setupMerchant();
    const eventId = await pendingEvent(m);
    const delivered = await deliverAt(eventId, Date.now());
    const { secret } = await getWebhookSecret(m.session);
    expect(verifyWith(secret, delivered).id).toBe(eventId);
  });

  it('API keys get 401: the secret is managed by the signed-in user', async () => {
    const m = await setupMerchant();
    expectError(await call('GET', '/v1/account/webhook-secret', { token: m.key.secret }), 401, 'unauthorized');
    expectError(await call('POST', '/v1/account/webhook-secret/rotate', { token: m.key.secret }), 401, 'unauthorized');
    expectError(await call('GET', '/v1/account/webhook-secret'), 401, 'unauthorized');
  });
});

describe('POST /v1/account/webhook-secret/rotate', () => {
  it('a new secret; the previous one co-signs for 24 hours, then only the new one signs', async () => {
    const m = await setupMerchant();
    const old = (await getWebhookSecret(m.session)).secret;
    const before = Date.now();
    const rotated = await rotateWebhookSecret(m.session);
    const after = Date.now();
    expect(rotated.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(rotated.secret).not.toBe(old);
    const expiresAt = Date.parse(rotated.previousExpiresAt!);
    expect(expiresAt).toBeGreaterThanOrEqual(before + DAY_MS);
    expect(expiresAt).toBeLessThanOrEqual(after + DAY_MS);
    // The rotation is what GET answers from now on.
    const read = await getWebhookSecret(m.session);
    expect(read.secret).toBe(rotated.secret);
    expect(read.previousExpiresAt).toBe(rotated.previousExpiresAt);
    // The old secret is never shown again.
    expect(read.res.text).not.toContain(old);

    // During the overlap: two signatures, space-separated; a receiver on either secret accepts.
    const eventId = await pendingEvent(m);
    const now = Date.now();
    const during = await deliverAt(eventId, now);
    expect(during.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    for (const part of during.headers['webhook-signature']!.split(' ')) expect(part).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(verifyWith(old, during).id).toBe(eventId);
    expect(verifyWith(rotated.secret, during).id).toBe(eventId);

    // Just before the overlap ends, both still sign.
    const late = await pendingEvent(m);
    const lastMinute = await deliverAt(late, expiresAt - 60_000);
    expect(lastMinute.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(verifiesAt(old, lastMinute, expiresAt - 60_000)).toBe(true);
    expect(verifiesAt(rotated.secret, lastMinute, expiresAt - 60_000)).toBe(true);

    // After 24 hours only the new secret signs.
    const next = await pendingEvent(m);
    const afterOverlap = expiresAt + 60_000;
    const later = await deliverAt(next, afterOverlap);
    expect(later.headers['webhook-timestamp']).toBe(String(Math.floor(afterOverlap / 1000)));
    expect(later.headers['webhook-signature']!.split(' ')).toHaveLength(1);
    expect(verifiesAt(rotated.secret, later, afterOverlap)).toBe(true);
    expect(verifiesAt(old, later, afterOverlap)).toBe(false);
  });

  it('concurrent rotations: every secret a rotation answered signs the next delivery', async () => {
    const m = await setupMerchant();
    await getWebhookSecret(m.session);
    const answers = await Promise.all([
      rotateWebhookSecret(m.session),
      rotateWebhookSecret(m.session),
      rotateWebhookSecret(m.session),
    ]);
    const current = (await getWebhookSecret(m.session)).secret;
    expect(answers.map((a) => a.secret)).toContain(current);
    const eventId = await pendingEvent(m);
    const delivered = await deliverAt(eventId, Date.now());
    for (const answer of answers) expect(verifyWith(answer.secret, delivered).id).toBe(eventId);
  });

  it('a second rotation within the overlap keeps only the two newest secrets', async () => {
    const m = await setupMerchant();
    const first = (await getWebhookSecret(m.session)).secret;
    const second = (await rotateWebhookSecret(m.session)).secret;
    const third = (await rotateWebhookSecret(m.session)).secret;
    expect(new Set([first, second, third]).size).toBe(3);
    const eventId = await pendingEvent(m);
    const delivered = await deliverAt(eventId, Date.now());
    expect(delivered.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(verifyWith(third, delivered).id).toBe(eventId);
    expect(verifyWith(second, delivered).id).toBe(eventId);
    expect(() => verifyWith(first, delivered)).toThrow();
  });
});

describe('GET /v1/account/webhook-secret?user_id=', () => {
  it('answers that owner’s secret to an admin, and is refused to a client (it answered the caller’s own)', async () => {
    const m = await setupMerchant();
    const admin = await seedSession({ role: 'admin' });
    const owner = await getWebhookSecret(m.session);
    expect((await getWebhookSecret(admin, m.session.user.id)).secret).toBe(owner.secret);
    expect((await getWebhookSecret(admin)).secret).not.toBe(owner.secret);

    const other = await seedSession();
    const asClient = await call('GET', `/v1/account/webhook-secret?user_id=${m.session.user.id}`, {
      token: other.accessToken,
    });
    expectError(asClient, 403, 'insufficient_role');
    expect(asClient.text).not.toContain(owner.secret);
    expectError(
      await call('GET', '/v1/account/webhook-secret?user_id=usr_nobody', { token: admin.accessToken }),
      404,
      'user_not_found',
    );
  });
});
