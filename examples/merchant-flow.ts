// A whole merchant flow against a running `test` deployment, with the generated client
// (examples/api-types.ts from `npm run generate:client`, used through openapi-fetch):
//   log in as the admin -> create an API key -> create a sandbox QR payment method -> enable it for the key
//   -> QR payment (Idempotency-Key, webhook_url) -> recovery after a lost answer (the conflict's payment_id)
//   -> test-helper approval -> partial refund -> full refund -> every webhook received by a local receiver,
//   verified with the account's signing secret -> the same events at an account webhook endpoint (registered
//   and pinged first), verified with the endpoint's own secret -> catching up on events with GET /v1/events.
//
//   npm start                                   # in another terminal
//   npm run example:merchant-flow               # = node examples/merchant-flow.ts (Node 22.18+)
//
// BASE_URL (default http://127.0.0.1:8787, where `npm start` listens), ADMIN_EMAIL / ADMIN_PASSWORD (default the local bootstrap admin).
// The webhook receiver listens on 127.0.0.1 (random port): the local deployment may call it because
// `.dev.vars` sets ALLOW_INSECURE_WEBHOOKS=true. Amounts stay decimal strings throughout.
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import createClient from 'openapi-fetch';
import { Webhook } from 'standardwebhooks';
import type { components, paths, webhooks } from './api-types.ts';

type Schemas = components['schemas'];
type ApiError = Schemas['ErrorResponse'];
type Payment = Schemas['Payment'];

const BASE_URL = process.env.BASE_URL ?? 'http://127.0.0.1:8787';
const ADMIN_EMAIL = process.env.ADMIN_EMAIL ?? 'admin@example.com';
const ADMIN_PASSWORD = process.env.ADMIN_PASSWORD ?? 'admin-password';
/** Upper bound for the webhooks to arrive (the local queue delivers within seconds). */
const WEBHOOK_WAIT_MS = Number(process.env.WEBHOOK_WAIT_MS ?? 60_000);

/** Thrown for an answer in the error envelope; `error.code` is typed from the description. */
class ApiCallError extends Error {
  readonly status: number;
  readonly body: ApiError['error'];
  constructor(step: string, status: number, body: ApiError['error']) {
    super(`${step}: HTTP ${status} ${body.code} (${body.message}) request_id=${body.request_id}`);
    this.status = status;
    this.body = body;
  }
}

/** openapi-fetch answers `{ data }` on 2xx and `{ error }` (typed as the error envelope) otherwise. */
function must<T>(step: string, result: { data?: T; error?: ApiError; response: Response }): T {
  if (result.error !== undefined) throw new ApiCallError(step, result.response.status, result.error.error);
  if (result.data === undefined) throw new Error(`${step}: HTTP ${result.response.status} without a body`);
  return result.data;
}

function expectStatus(step: string, payment: Payment, status: Payment['status']) {
  if (payment.status !== status)
    throw new Error(`${step}: payment ${payment.id} is ${payment.status}, expected ${status}`);
}

const log = (message: string) => console.log(`merchant-flow: ${message}`);

interface ReceivedWebhook {
  headers: Record<string, string>;
  body: string;
}

/**
 * A tiny webhook receiver on 127.0.0.1: records every POST to /hook (the payment's webhook_url) and to
 * /endpoint (the account webhook endpoint) and answers 204.
 */
async function startReceiver() {
  const received: ReceivedWebhook[] = [];
  const atEndpoint: ReceivedWebhook[] = [];
  const readBody = (req: IncomingMessage) =>
    new Promise<string>((resolve, reject) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      req.on('error', reject);
    });
  const server = createServer(async (req, res) => {
    if (req.method !== 'POST' || (req.url !== '/hook' && req.url !== '/endpoint')) {
      res.writeHead(404).end();
      return;
    }
    const body = await readBody(req);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers[name] = value;
    (req.url === '/hook' ? received : atEndpoint).push({ headers, body });
    res.writeHead(204).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    endpointUrl: `http://127.0.0.1:${port}/endpoint`,
    received,
    atEndpoint,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

type MerchantClient = ReturnType<typeof createClient<paths>>;

/** Every body the service POSTs to a webhook URL, typed from the description's `webhooks`: a union over `type`. */
type Event = webhooks[keyof webhooks]['post']['requestBody']['content']['application/json'];

/**
 * Waits until `received` holds, each verified with `verifier`, every label of `expected` for `paymentId`.
 * `onlyThisPayment`: the payment's own webhook_url must receive no other payment's events.
 */
async function verifiedLabels(
  step: string,
  received: ReceivedWebhook[],
  verifier: Webhook,
  paymentId: string,
  expected: string[],
  onlyThisPayment = false,
): Promise<string[]> {
  const deadline = Date.now() + WEBHOOK_WAIT_MS;
  for (;;) {
    const seen: string[] = [];
    for (const hook of received) {
      const event = verifier.verify(hook.body, hook.headers) as Event;
      if (event.id !== hook.headers['webhook-id'])
        throw new Error(`${step}: webhook ${hook.headers['webhook-id']} carries event ${event.id}`);
      // The endpoint's test ping carries no payment.
      if (event.type === 'ping') continue;
      if (event.data.payment.id !== paymentId && onlyThisPayment)
        throw new Error(`${step}: webhook for another payment: ${event.data.payment.id}`);
      // An account endpoint receives every payment of the account: this flow looks at its own.
      if (event.data.payment.id !== paymentId) continue;
      const label = event.type === 'payment.refunded' ? `${event.type}:${event.data.payment.status}` : event.type;
      if (!seen.includes(label)) seen.push(label);
    }
    if (expected.every((label) => seen.includes(label))) return seen;
    if (Date.now() > deadline)
      throw new Error(
        `${step}: received ${JSON.stringify(seen)}, expected ${JSON.stringify(expected)} within ${WEBHOOK_WAIT_MS} ms`,
      );
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * Creates the payment with a fresh Idempotency-Key; when its reference is already taken (the earlier
 * attempt went through but its answer was lost), reads the payment the conflict names instead.
 */
async function recoverPayment(merchant: MerchantClient, request: Schemas['CreatePaymentRequest']): Promise<Payment> {
  const attempt = await merchant.POST('/v1/payments', {
    params: { header: { 'idempotency-key': randomUUID() } },
    body: request,
  });
  if (attempt.data) return attempt.data.data;
  const error = attempt.error?.error;
  const paymentId = error?.code === 'external_reference_conflict' ? error.details.payment_id : undefined;
  if (typeof paymentId !== 'string')
    throw new ApiCallError('create payment (fresh key)', attempt.response.status, error!);
  return must(
    'read the conflicting payment',
    await merchant.GET('/v1/payments/{payment_id}', { params: { path: { payment_id: paymentId } } }),
  ).data;
}

/**
 * Every event created at or after `since`, all pages, oldest first. The walk follows the last id of each page
 * (`starting_after`) while `has_more`: each page costs the same however deep, and events created meanwhile come
 * first in the newest-first list, so none is met twice or skipped.
 */
async function eventsSince(merchant: MerchantClient, since: string): Promise<Schemas['WebhookEvent'][]> {
  const events: Schemas['WebhookEvent'][] = [];
  let starting_after: string | undefined;
  for (;;) {
    const page = must(
      'list events',
      await merchant.GET('/v1/events', { params: { query: { created_gte: since, limit: 100, starting_after } } }),
    );
    events.push(...page.data);
    if (!page.pagination.has_more) break;
    starting_after = page.data.at(-1)!.id;
  }
  return events.reverse();
}

export async function runMerchantFlow(baseUrl = BASE_URL) {
  // 1. Log in as the admin: a user access token for the management routes.
  const anonymous = createClient<paths>({ baseUrl });
  const session = must(
    'login',
    await anonymous.POST('/v1/auth/login', { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } }),
  ).data;
  const admin = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${session.access_token}` } });
  log('logged in');

  // 2. An API key with every business scope; its secret is shown only in this answer.
  const key = must(
    'create API key',
    await admin.POST('/v1/account/api-keys', {
      body: {
        name: `merchant-flow ${new Date().toISOString()}`,
        scopes: ['payment_methods:read', 'payments:create', 'payments:read', 'payments:cancel', 'refunds:create'],
      },
    }),
  ).data;
  log(`API key ${key.id} (${key.environment})`);

  // 3. A sandbox QR method: its connector version comes from GET /v1/connectors.
  const connectors = must(
    'list connectors',
    await admin.GET('/v1/connectors', { params: { query: { limit: 100 } } }),
  ).data;
  const version = connectors
    .filter((connector) => connector.provider === 'sandbox' && connector.type === 'qr')
    .flatMap((connector) => connector.versions)
    .find((v) => v.status === 'published');
  if (!version) throw new Error('no published sandbox QR connector version');
  const method = must(
    'create payment method',
    await admin.POST('/v1/account/payment-methods', {
      body: {
        connector_definition_version_id: version.id,
        name: 'Counter QR (merchant-flow)',
        credentials: { api_key: `sandbox-${randomBytes(12).toString('hex')}` },
      },
    }),
  ).data;
  log(`payment method ${method.id} (${method.provider} ${method.type})`);

  // 4. Enable the method for the key.
  must(
    'enable method for key',
    await admin.POST('/v1/account/payment-methods/{payment_method_id}/api-keys', {
      params: { path: { payment_method_id: method.id } },
      body: { api_key_id: key.id },
    }),
  );

  // From here on the merchant's server uses the API key only.
  const merchant = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${key.secret}` } });
  const receiver = await startReceiver();
  let endpointId: string | undefined;
  try {
    // 4b. An account webhook endpoint for every event type, with its own signing secret (shown only in
    // this answer), checked with a signed ping before any payment.
    const endpoint = must(
      'register webhook endpoint',
      await admin.POST('/v1/account/webhook-endpoints', {
        body: { url: receiver.endpointUrl, enabled_events: ['*'], description: 'merchant-flow' },
      }),
    ).data;
    endpointId = endpoint.id;
    const ping = must(
      'ping webhook endpoint',
      await admin.POST('/v1/account/webhook-endpoints/{webhook_endpoint_id}/test', {
        params: { path: { webhook_endpoint_id: endpoint.id } },
      }),
    ).data;
    if (!ping.succeeded) throw new Error(`ping: ${ping.error ?? ping.status_code}`);
    const pinged = receiver.atEndpoint.find((hook) => hook.headers['webhook-id'] === ping.event_id);
    if (
      !pinged ||
      (new Webhook(endpoint.secret).verify(pinged.body, pinged.headers) as { type: string }).type !== 'ping'
    )
      throw new Error('ping: not received or not verified');
    log(
      `webhook endpoint ${endpoint.id} (${endpoint.enabled_events.join(', ')}) registered; ping verified (${ping.status_code} in ${ping.latency_ms} ms)`,
    );

    // 5. A QR payment: the sandbox answers `pending` with a QR to display.
    const createKey = randomUUID();
    const paymentRequest: Schemas['CreatePaymentRequest'] = {
      amount: { value: '25.00', currency: 'USD' },
      external_reference: `order-${randomUUID()}`,
      payment_method: method.id,
      description: 'Two coffees',
      webhook_url: receiver.url,
    };
    const created = must(
      'create payment',
      await merchant.POST('/v1/payments', {
        params: { header: { 'idempotency-key': createKey } },
        body: paymentRequest,
      }),
    ).data;
    expectStatus('create payment', created, 'pending');
    if (created.action?.type !== 'display_qr')
      throw new Error(`create payment: action ${created.action?.type}, expected display_qr`);
    log(
      `payment ${created.id} ${created.status}, ${created.amount.value} ${created.amount.currency}, action ${created.action.type} until ${created.action.expires_at}`,
    );

    // A network retry with the same key and body returns the stored result, not a second payment.
    const replay = await merchant.POST('/v1/payments', {
      params: { header: { 'idempotency-key': createKey } },
      body: paymentRequest,
    });
    const replayed = must('replay create payment', replay).data;
    if (replayed.id !== created.id) throw new Error(`replay created another payment (${replayed.id})`);
    if (replay.response.headers.get('Idempotent-Replayed') !== 'true')
      throw new Error('replay create payment: no Idempotent-Replayed: true');
    // The replay's bookmark is past the payment's writes: a read sent with it may be served by a nearby
    // replica and still finds the payment.
    const bookmark = replay.response.headers.get('X-Read-Bookmark');
    if (!bookmark) throw new Error('replay create payment: no X-Read-Bookmark');
    must(
      'read with the bookmark',
      await merchant.GET('/v1/payments/{payment_id}', {
        params: { path: { payment_id: created.id }, header: { 'x-read-bookmark': bookmark } },
      }),
    );

    // 5b. A checkout that lost both the answer and its Idempotency-Key (a crash) tries again with a fresh
    // key: the reference is taken, and the conflict names the payment that holds it. Read it back.
    const recovered = await recoverPayment(merchant, paymentRequest);
    if (recovered.id !== created.id) throw new Error(`recovered ${recovered.id}, expected ${created.id}`);
    log(`recovered payment ${recovered.id} (${recovered.status}) after a lost answer, from the conflict's payment_id`);

    // 6. The customer pays: the test helper delivers the processor's notification.
    const approved = must(
      'approve (test helper)',
      await merchant.POST('/v1/test-helpers/payments/{payment_id}/{action}', {
        params: { path: { payment_id: created.id, action: 'approve' } },
      }),
    ).data;
    expectStatus('approve', approved, 'approved');
    log(`payment ${approved.id} ${approved.status}`);

    // 7. A partial refund, then a refund of the rest.
    const refund = (value: string) =>
      merchant.POST('/v1/payments/{payment_id}/refunds', {
        params: { path: { payment_id: created.id }, header: { 'idempotency-key': randomUUID() } },
        body: { amount: { value, currency: 'USD' }, reason: 'Customer returned the item' },
      });
    const partial = must('partial refund', await refund('10.00')).data;
    if (partial.status !== 'approved') throw new Error(`partial refund is ${partial.status}`);
    const afterPartial = must(
      'get payment',
      await merchant.GET('/v1/payments/{payment_id}', { params: { path: { payment_id: created.id } } }),
    ).data;
    expectStatus('after partial refund', afterPartial, 'partially_refunded');
    log(`refund ${partial.id} ${partial.amount.value} ${partial.status}; payment ${afterPartial.status}`);

    // More than the balance is refused in the typed error envelope.
    const tooMuch = await refund('15.01');
    if (tooMuch.error?.error.code !== 'refund_exceeds_balance') {
      throw new Error(`refund over the balance: HTTP ${tooMuch.response.status}, expected 422 refund_exceeds_balance`);
    }
    log(
      `refund of 15.01 refused: ${tooMuch.response.status} ${tooMuch.error.error.code} (${tooMuch.error.error.category})`,
    );

    const rest = must('full refund', await refund('15.00')).data;
    if (rest.status !== 'approved') throw new Error(`refund of the rest is ${rest.status}`);
    const refunded = must(
      'get payment',
      await merchant.GET('/v1/payments/{payment_id}', { params: { path: { payment_id: created.id } } }),
    ).data;
    expectStatus('after full refund', refunded, 'refunded');
    log(`refund ${rest.id} ${rest.amount.value} ${rest.status}; payment ${refunded.status}`);

    // 8. The webhooks: payment.pending, payment.approved and one payment.refunded per refund, each
    // verified with the account's signing secret (Standard Webhooks).
    const { secret } = must('webhook secret', await admin.GET('/v1/account/webhook-secret')).data;
    const expected = [
      'payment.pending',
      'payment.approved',
      'payment.refunded:partially_refunded',
      'payment.refunded:refunded',
    ];
    const seen = await verifiedLabels('webhooks', receiver.received, new Webhook(secret), created.id, expected, true);
    log(`${receiver.received.length} webhooks received and verified: ${seen.join(', ')}`);

    // The service's own record of those deliveries agrees.
    const events = must(
      'list events',
      await merchant.GET('/v1/payments/{payment_id}/events', {
        params: { path: { payment_id: created.id }, query: { limit: 100 } },
      }),
    ).data;
    const receivedIds = new Set(receiver.received.map((hook) => hook.headers['webhook-id']));
    for (const event of events) {
      if (!receivedIds.has(event.id)) throw new Error(`event ${event.id} (${event.type}) was never received`);
    }
    log(`${events.length} events listed, each delivered`);

    // 8b. The same events at the account endpoint, verified with the endpoint's own secret (not the
    // account's), with the same ids; the listing shows a delivery per destination.
    const atEndpoint = await verifiedLabels(
      'endpoint webhooks',
      receiver.atEndpoint,
      new Webhook(endpoint.secret),
      created.id,
      expected,
    );
    const endpointIds = new Set(receiver.atEndpoint.map((hook) => hook.headers['webhook-id']));
    for (const event of events) {
      if (!endpointIds.has(event.id)) throw new Error(`event ${event.id} (${event.type}) never reached the endpoint`);
      const destinations = (event.deliveries ?? []).map((d) => d.destination.endpoint_id ?? d.destination.type);
      if (!destinations.includes('payment_url') || !destinations.includes(endpoint.id))
        throw new Error(`event ${event.id}: deliveries to ${destinations.join(', ')}`);
    }
    log(
      `webhook endpoint received and verified with its own secret: ${atEndpoint.join(', ')}; each event listed with 2 deliveries`,
    );

    // 9. Catching up: a receiver that was down asks for every event since the payment was created, and
    // applies those it has not seen (deduplicated by id, ordered by data.payment.updated_at).
    // (The account's other payments are in the list too; this flow looks at its own.)
    const received = new Set(receiver.received.map((hook) => hook.headers['webhook-id']!));
    const caughtUp = (await eventsSince(merchant, created.created_at)).filter(
      (event) => event.data.payment.id === created.id,
    );
    const missed = caughtUp.filter((event) => !received.has(event.id));
    const latest = [...caughtUp]
      .sort((a, b) => a.data.payment.updated_at.localeCompare(b.data.payment.updated_at))
      .at(-1);
    if (latest?.data.payment.status !== 'refunded')
      throw new Error(`catch-up: latest state ${latest?.data.payment.status}, expected refunded`);
    log(
      `caught up with GET /v1/events: ${caughtUp.length} events of the payment since ${created.created_at}, ${missed.length} not received by webhook; payment ${latest.data.payment.status}`,
    );
    return { paymentId: created.id, events: events.length, webhooks: receiver.received.length };
  } finally {
    // The account keeps at most 16 endpoints: this flow removes its own.
    if (endpointId)
      await admin.DELETE('/v1/account/webhook-endpoints/{webhook_endpoint_id}', {
        params: { path: { webhook_endpoint_id: endpointId } },
      });
    await receiver.close();
  }
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  runMerchantFlow().then(
    (result) => log(`done: ${JSON.stringify(result)}`),
    (error: unknown) => {
      console.error(`merchant-flow failed: ${error instanceof Error ? error.message : String(error)}`);
      process.exit(1);
    },
  );
}
