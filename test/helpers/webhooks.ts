import { dataPlane, SHARDS } from './shards.ts';
import { createExecutionContext, createMessageBatch, getQueueResult } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { Webhook } from 'standardwebhooks';
import { afterEach, beforeEach, vi } from 'vitest';
import { handleWebhookBatch } from '../../src/queues/webhook-delivery.ts';
import type { WebhookMessage } from '../../src/env.ts';
import { call, type ApiResponse, type Session } from './api.ts';
import { checkWebhookConformance } from './conformance.ts';
import { allowSecretIn, trackSecret } from './leak-scan.ts';

/**
 * Webhook test plumbing. The test deployment has a real queue consumer: a message sent to
 * `env.WEBHOOKS` would be delivered in the background, racing the test. `captureQueue` keeps every
 * message instead, and `drainQueue` plays the consumer (with the queue's retry semantics) on demand.
 * `receiver` replaces global `fetch`, which is what the Worker's deliveries call in this isolate.
 */

export interface CapturedQueue {
  /** Deliveries sent to the queue and not yet consumed, as `deliveryKey`s. */
  pending: string[];
  /** Every delivery ever sent, in order. */
  sent: string[];
  restore: () => void;
}

/**
 * A queued delivery as one string: the event id for a delivery to the payment's `webhook_url` (as
 * before endpoints existed), `{eventId}@{endpointId}` for one to an endpoint.
 */
export const deliveryKey = (message: WebhookMessage) =>
  message.endpointId ? `${message.eventId}@${message.endpointId}` : message.eventId;

export function messageOf(key: string): WebhookMessage {
  const [eventId, endpointId] = key.split('@') as [string, string | undefined];
  return endpointId ? { eventId, endpointId } : { eventId };
}

/** The messages the Worker sent, by delivery key: they name the shard and owner, which the key does not. */
const sent = new Map<string, WebhookMessage>();

/** The message as the Worker would send it: as sent, or, for a key a test made, naming the event's shard and owner. */
async function fullMessageOf(key: string): Promise<WebhookMessage> {
  const known = sent.get(key);
  if (known) return known;
  const message = messageOf(key);
  for (const { name, d1 } of SHARDS) {
    const event = await d1
      .prepare('SELECT owner_id FROM payment_events WHERE id = ?')
      .bind(message.eventId)
      .first<{ owner_id: string }>();
    if (event) return { ...message, shard: name, ownerId: event.owner_id };
  }
  return message;
}

const destinationOf = (key: string) => messageOf(key).endpointId ?? 'payment_url';

export function captureQueue(): CapturedQueue {
  const queue: CapturedQueue = { pending: [], sent: [], restore: () => {} };
  const sendBatch = vi
    .spyOn(env.WEBHOOKS, 'sendBatch')
    .mockImplementation(async (messages: Iterable<MessageSendRequest<WebhookMessage>>) => {
      for (const m of messages) {
        sent.set(deliveryKey(m.body), m.body);
        queue.pending.push(deliveryKey(m.body));
        queue.sent.push(deliveryKey(m.body));
      }
      return undefined as never;
    });
  const send = vi.spyOn(env.WEBHOOKS, 'send').mockImplementation(async (body: WebhookMessage) => {
    sent.set(deliveryKey(body), body);
    queue.pending.push(deliveryKey(body));
    queue.sent.push(deliveryKey(body));
    return undefined as never;
  });
  queue.restore = () => {
    sendBatch.mockRestore();
    send.mockRestore();
  };
  return queue;
}

export interface ConsumerRound {
  eventIds: string[];
  acked: string[];
  retried: { eventId: string; delaySeconds: number | undefined }[];
}

/** One consumer run over `eventIds` (delivery keys, one batch), as the queue would deliver them. */
export async function consumeOnce(eventIds: string[], attempts = 1): Promise<ConsumerRound> {
  const messages = await Promise.all(
    eventIds.map(async (key, i) => ({
      id: `msg-${i}-${key}`,
      timestamp: new Date(),
      attempts,
      body: await fullMessageOf(key),
    })),
  );
  const batch = createMessageBatch<WebhookMessage>('payment-webhooks-test', messages);
  // getQueueResult reports which messages were retried but not the delay asked for: record it here.
  const delays = new Map<string, number | undefined>();
  for (const message of batch.messages) {
    const retry = message.retry.bind(message);
    Object.defineProperty(message, 'retry', {
      value: (options?: QueueRetryOptions) => {
        delays.set(message.id, options?.delaySeconds);
        retry(options);
      },
    });
  }
  await handleWebhookBatch(batch, env);
  const result = await getQueueResult(batch, createExecutionContext());
  const byMsg = new Map(messages.map((m) => [m.id, deliveryKey(m.body)]));
  return {
    eventIds,
    acked: result.explicitAcks.map((id) => byMsg.get(id)!),
    retried: result.retryMessages.map((r) => ({ eventId: byMsg.get(r.msgId)!, delaySeconds: delays.get(r.msgId) })),
  };
}

/**
 * The retry delay has passed: the consumer reads the clock (Date.now()), so instead of waiting, the
 * deliveries' planned attempt time is brought to now, as it would be when the queue hands the retry back.
 */
export async function elapseUntilDue(eventIds: string[]) {
  const now = Date.now();
  for (const key of new Set(eventIds)) {
    await dataPlane
      .prepare(
        "UPDATE webhook_deliveries SET next_attempt_at = ? WHERE event_id = ? AND destination = ? AND status = 'pending' AND next_attempt_at > ?",
      )
      .bind(now, messageOf(key).eventId, destinationOf(key), now)
      .run();
  }
}

/**
 * Plays the queue until nothing is left: the captured messages, then every message the consumer asked
 * to retry, once its delay has passed (`elapseUntilDue`; the delay asked for is returned for inspection).
 */
export async function drainQueue(queue: CapturedQueue, maxRounds = 50): Promise<ConsumerRound[]> {
  const rounds: ConsumerRound[] = [];
  let next = queue.pending.splice(0);
  for (let round = 1; next.length > 0; round++) {
    if (round > maxRounds) throw new Error('queue did not drain');
    const result = await consumeOnce(next, round);
    rounds.push(result);
    const retried = result.retried.map((r) => r.eventId);
    await elapseUntilDue(retried);
    next = [...retried, ...queue.pending.splice(0)];
  }
  return rounds;
}

export interface ReceivedWebhook {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string;
  redirect: RequestInit['redirect'];
  signal: AbortSignal | null | undefined;
}

export type ReceiverAnswer = (request: ReceivedWebhook, nthForThisId: number) => Response | Promise<Response>;

export interface Receiver {
  /** Every request the Worker sent, in order (whatever the answer). */
  requests: ReceivedWebhook[];
  restore: () => void;
}

/** Replaces global fetch with a webhook receiver; `answer` decides each response (or throws). */
export function receiver(answer: ReceiverAnswer = () => new Response(null, { status: 204 })): Receiver {
  const requests: ReceivedWebhook[] = [];
  const perId = new Map<string, number>();
  const spy = vi.spyOn(globalThis, 'fetch').mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const headers = new Headers(init?.headers);
    const received: ReceivedWebhook = {
      url: input instanceof Request ? input.url : String(input),
      method: init?.method ?? 'GET',
      headers: Object.fromEntries(headers),
      body: typeof init?.body === 'string' ? init.body : await new Response(init?.body ?? null).text(),
      redirect: init?.redirect,
      signal: init?.signal,
    };
    requests.push(received);
    // Every webhook the suite receives is checked against the served description's `webhooks`.
    if (received.headers['webhook-id'] !== undefined) await checkWebhookConformance(received);
    const id = received.headers['webhook-id'] ?? '';
    const n = (perId.get(id) ?? 0) + 1;
    perId.set(id, n);
    return answer(received, n);
  });
  return { requests, restore: () => spy.mockRestore() };
}

/** A receiver answer that never comes: rejects when the request's signal fires (as fetch does). */
export function hang(request: ReceivedWebhook): Promise<Response> {
  return new Promise((_, reject) => {
    const signal = request.signal;
    if (!signal) return reject(new Error('no timeout signal on the delivery'));
    if (signal.aborted) return reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason));
  });
}

/** `standardwebhooks` verification of a received request; returns the parsed body or throws. */
export function verifyWith(secret: string, request: Pick<ReceivedWebhook, 'headers' | 'body'>) {
  return new Webhook(secret).verify(request.body, request.headers) as WebhookBody;
}

export interface WebhookBody {
  id: string;
  type: string;
  created_at: string;
  data: { payment: Record<string, any> & { id: string; status: string; updated_at: string } };
}

/**
 * GET /v1/account/webhook-secret. The response legitimately carries the secret: the leak scan allows
 * it there (and in every later GET of the same secret) and nowhere else.
 */
export async function getWebhookSecret(session: Session, userId?: string) {
  const query = userId === undefined ? '' : `?user_id=${encodeURIComponent(userId)}`;
  const res = await call('GET', `/v1/account/webhook-secret${query}`, { token: session.accessToken });
  if (res.status !== 200) throw new Error(`webhook secret: ${res.status} ${res.text}`);
  trackOrAllow(res.body.data.secret, res.id);
  return {
    res,
    secret: res.body.data.secret as string,
    previousExpiresAt: res.body.data.previous_secret_expires_at as string | null,
  };
}

export async function rotateWebhookSecret(session: Session) {
  const res = await call('POST', '/v1/account/webhook-secret/rotate', { token: session.accessToken });
  if (res.status !== 200) throw new Error(`webhook secret rotation: ${res.status} ${res.text}`);
  trackOrAllow(res.body.data.secret, res.id);
  return {
    res,
    secret: res.body.data.secret as string,
    previousExpiresAt: res.body.data.previous_secret_expires_at as string | null,
  };
}

// Every response that legitimately returned each secret. `call` also tracks any `data.secret` (as an
// API key secret, allowed in its own response only), so each entry for the value is allowed in all of them.
const returnedIn = new Map<string, number[]>();
function trackOrAllow(secret: string, responseId: number) {
  const ids = returnedIn.get(secret) ?? [];
  if (ids.length === 0) trackSecret('webhook_secret', secret, responseId);
  ids.push(responseId);
  returnedIn.set(secret, ids);
  for (const id of ids) allowSecretIn(secret, id);
}

/** Event ids of a payment, oldest first, from D1. */
export async function eventIdsOf(paymentId: string): Promise<string[]> {
  const { results } = await dataPlane
    .prepare('SELECT id FROM payment_events WHERE payment_id = ? ORDER BY created_at, rowid')
    .bind(paymentId)
    .all<{ id: string }>();
  return results.map((r) => r.id);
}

export interface EventRow {
  id: string;
  payment_id: string;
  type: string;
  payload: string;
  created_at: number;
}

export async function eventRowsOf(paymentId: string): Promise<EventRow[]> {
  const { results } = await dataPlane
    .prepare('SELECT * FROM payment_events WHERE payment_id = ? ORDER BY created_at, rowid')
    .bind(paymentId)
    .all<EventRow>();
  return results;
}

export interface DeliveryRow {
  event_id: string;
  destination: string;
  url: string;
  status: string;
  attempts: number;
  next_attempt_at: number | null;
  last_status_code: number | null;
  last_error: string | null;
}

/** The delivery of an event to the payment's `webhook_url`, or to the endpoint `endpointId`. */
export async function deliveryRow(eventId: string, endpointId?: string): Promise<DeliveryRow | null> {
  return dataPlane
    .prepare('SELECT * FROM webhook_deliveries WHERE event_id = ? AND destination = ?')
    .bind(eventId, endpointId ?? 'payment_url')
    .first<DeliveryRow>();
}

/** Spellings of addresses a webhook must never go to (and URLs that are malformed for the same reason). */
export const REFUSED_WEBHOOK_URLS = [
  'https://127.1/',
  'https://2130706433/',
  'https://0x7f000001/',
  'https://[::ffff:127.0.0.1]/',
  'https://user:pass@hooks.example.com/',
  'https://hooks.example.com./',
  'http://hooks.example.com/',
  'https://169.254.169.254/',
  'https://10.0.0.1/',
  'https://100.64.0.1/',
  'https://metadata.google.internal/',
  // More of the same families.
  'https://127.0.0.1/',
  'https://localhost/',
  'http://localhost/',
  'http://127.0.0.1/',
  'https://0177.0.0.1/',
  'https://[::1]/',
  'https://[0:0:0:0:0:ffff:7f00:1]/',
  'https://@hooks.example.com/',
  'https://192.168.1.1/',
  'https://172.16.0.1/',
  'https://[fd00::1]/',
  'https://[fe80::1]/',
  'https://0.0.0.0/',
  'https://metadata/',
  'ftp://hooks.example.com/',
];

export const ENDPOINTS = '/v1/account/webhook-endpoints';

export interface CreatedEndpoint {
  id: string;
  secret: string;
  res: ApiResponse;
}

/**
 * POST /v1/account/webhook-endpoints as `session`. `call` tracks the returned `data.secret` for the leak
 * scan: allowed in this one response and nowhere else.
 */
export async function createEndpoint(session: Session, body: Record<string, unknown>): Promise<CreatedEndpoint> {
  const res = await call('POST', ENDPOINTS, { token: session.accessToken, body });
  if (res.status !== 201) throw new Error(`webhook endpoint: ${res.status} ${res.text}`);
  return { id: res.body.data.id, secret: res.body.data.secret, res };
}

/** Rows of the endpoint table, straight from D1. */
export async function endpointRow(id: string) {
  return dataPlane.prepare('SELECT * FROM webhook_endpoints WHERE id = ?').bind(id).first<Record<string, unknown>>();
}

export interface WebhookTestSetup {
  /** This test's captured queue (a fresh one per test; a test may put another in its place). */
  queue: CapturedQueue;
  /** The test's receiver, if it started one: stopped after the test. */
  rx: Receiver | undefined;
}

/**
 * The set-up every webhook test file shares: a captured queue for each test, and the receiver a test
 * started stopped after it. Call once at the top of a file.
 */
export function webhookTestSetup(): WebhookTestSetup {
  let queue: CapturedQueue | undefined;
  const setup = {
    get queue() {
      if (!queue) throw new Error('webhookTestSetup: the queue exists only inside a test');
      return queue;
    },
    set queue(next: CapturedQueue) {
      queue = next;
    },
    rx: undefined as Receiver | undefined,
  };
  beforeEach(() => {
    queue = captureQueue();
  });
  afterEach(() => {
    queue?.restore();
    queue = undefined;
    setup.rx?.restore();
    setup.rx = undefined;
  });
  return setup;
}

/**
 * Delivers what is queued to a fresh receiver and returns the bodies each destination received, verified with
 * its own secret: `destinations` names each by its URL and secret (e.g. the payment's URL, an endpoint).
 */
export async function deliveredBodies<K extends string>(
  hooks: WebhookTestSetup,
  destinations: Record<K, { url: string; secret: string }>,
): Promise<Record<K, { type: string; data: any }[]>> {
  hooks.rx = receiver();
  await drainQueue(hooks.queue);
  const requests = hooks.rx.requests;
  return Object.fromEntries(
    Object.entries<{ url: string; secret: string }>(destinations).map(([name, { url, secret }]) => [
      name,
      requests.filter((r) => r.url === url).map((r) => verifyWith(secret, r) as { type: string; data: any }),
    ]),
  ) as Record<K, { type: string; data: any }[]>;
}
