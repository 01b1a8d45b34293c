import { dataPlane, depsOfPayment } from '../helpers/shards.ts';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { reconcile, RECONCILE_ACTION_REQUIRED_AFTER_MS, RECONCILE_AFTER_MS } from '../../src/jobs/reconcile.ts';
import { runTerminalChecks } from '../../src/jobs/terminal-checks.ts';
import {
  UNVERIFIED_NOTIFICATION_RATE_LIMIT,
  UNVERIFIED_REREAD_WINDOW_MS,
} from '../../src/services/payments/processor-notifications.ts';
import { call, createKey, expectError, seedSession, type ApiResponse, type Session } from '../helpers/api.ts';
import { MercadoPagoSimulator, MP_BASE, type SimAccount, type SimNotification } from '../simulators/mercadopago.ts';
import { findConnectorVersion } from '../../src/connectors/registry.ts';
import type { PaymentLookupInput } from '../../src/connectors/types.ts';
import { loadPayment } from '../../src/services/payments/store.ts';
import { processorLookup } from '../../src/services/payments/processor.ts';

/**
 * Mercado Pago end to end through the API: methods created with POST /v1/account/payment-methods, the
 * Worker's outbound fetch routed to the Orders API simulator (the Worker runs in the tests' isolate),
 * payments, cancels, refunds and processor notifications through their public routes.
 */

const TERMINAL = 'NEWLAND_N950__N950NCB801293324';
const POS_ID = 'STORE001POS001';

const sim = new MercadoPagoSimulator();
let session: Session;
let apiKey: { id: string; secret: string };
let account: SimAccount;
let pos: string;
let qr: string;

function outboundUrl(input: RequestInfo | URL): string {
  return typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
}

const originalFetch = globalThis.fetch;

beforeAll(async () => {
  vi.spyOn(globalThis, 'fetch').mockImplementation((input, init) =>
    outboundUrl(input).startsWith(`${MP_BASE}/`) ? sim.fetch(input, init) : originalFetch(input, init),
  );
  session = await seedSession();
  apiKey = await createKey(session);
  account = sim.addAccount({ currency: 'ARS' });
  pos = await addMethod('cnv_mercadopago_pos_v1', account, { terminal_id: TERMINAL });
  qr = await addMethod('cnv_mercadopago_qr_v1', account, { external_pos_id: POS_ID, qr_ttl_seconds: 600 });
});

afterAll(() => {
  vi.mocked(globalThis.fetch).mockRestore();
});

beforeEach(() => {
  sim.resetFaults();
});

afterEach(() => {
  vi.useRealTimers();
});

/** Moves the service's clock (not the simulator's) forward, as time passing between notifications would. */
function clockForward(ms: number) {
  const now = Date.now();
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(now + ms);
}

async function addMethod(versionId: string, a: SimAccount, configuration?: Record<string, unknown>): Promise<string> {
  const res = await call('POST', '/v1/account/payment-methods', {
    token: session.accessToken,
    body: {
      connector_definition_version_id: versionId,
      name: 'Mercado Pago',
      credentials: { access_token: a.accessToken, webhook_secret: a.webhookSecret },
      ...(configuration ? { configuration } : {}),
    },
  });
  expect(res.status, res.text).toBe(201);
  expect(res.body.data).toMatchObject({ provider: 'mercadopago', type: versionId.includes('_qr_') ? 'qr' : 'pos' });
  const link = await call('POST', `/v1/account/payment-methods/${res.body.data.id}/api-keys`, {
    token: session.accessToken,
    body: { api_key_id: apiKey.id },
  });
  expect(link.status, link.text).toBe(201);
  return res.body.data.id;
}

function pay(
  method: string,
  value: string,
  options: { key?: string; currency?: string; configuration?: Record<string, unknown>; reference?: string } = {},
) {
  const body = {
    amount: { value, currency: options.currency ?? 'ARS' },
    external_reference: options.reference ?? `order-${crypto.randomUUID()}`,
    payment_method: method,
    ...(options.configuration ? { configuration: options.configuration } : {}),
  };
  return call('POST', '/v1/payments', {
    token: apiKey.secret,
    body,
    headers: { 'Idempotency-Key': options.key ?? crypto.randomUUID() },
  });
}

const post = (path: string, body?: unknown, key: string = crypto.randomUUID()) =>
  call('POST', path, {
    token: apiKey.secret,
    ...(body !== undefined ? { body } : {}),
    headers: { 'Idempotency-Key': key },
  });

const getPayment = (id: string) => call('GET', `/v1/payments/${id}`, { token: apiKey.secret });

const deliver = (n: SimNotification, headers: Record<string, string> = {}) =>
  call('POST', n.path, { rawBody: n.rawBody, headers: { ...n.headers, ...headers } });

const events = async (id: string) =>
  (await call('GET', `/v1/payments/${id}/events?limit=100`, { token: apiKey.secret })).body.data as {
    type: string;
    data: { payment: { action?: unknown } };
  }[];

async function paymentRowByReference(reference: string) {
  return dataPlane
    .prepare('SELECT * FROM payments WHERE external_reference = ?')
    .bind(reference)
    .first<{ id: string; status: string; processor_reference: string | null }>();
}

async function refundRow(id: string) {
  return dataPlane
    .prepare('SELECT * FROM refunds WHERE id = ?')
    .bind(id)
    .first<{ status: string; processor_reference: string | null }>();
}

function notifyingTo(method: string) {
  account.notificationUrl = `http://localhost/v1/processor-notifications/${method}`;
}

/** Runs `test` with Mercado Pago notifying the Point method, its orders waiting at the terminal, and cancels there accepted (202). */
async function atTheTerminal(test: () => Promise<void>) {
  notifyingTo(pos);
  sim.faults.pointWaitsAtTerminal = true;
  sim.faults.cancelAtTerminal = 'accepted';
  try {
    await test();
  } finally {
    notifyingTo(qr);
  }
}

async function pendingQr(value = '40.00'): Promise<{ payment: any; orderId: string }> {
  const res = await pay(qr, value);
  expect(res.status, res.text).toBe(201);
  expect(res.body.data.status).toBe('pending');
  return { payment: res.body.data, orderId: res.body.data.processor_reference };
}

describe('Mercado Pago payments through the API', () => {
  it('lists both versions in GET /v1/connectors with their schemas', async () => {
    const res = await call('GET', '/v1/connectors?limit=100', { token: session.accessToken });
    const mp = (res.body.data as any[]).filter((c) => c.provider === 'mercadopago');
    expect(mp.map((c) => c.type).sort()).toEqual(['pos', 'qr']);
    for (const c of mp) {
      const schema = c.versions[0].credentials_schema;
      expect(schema.required.sort()).toEqual(['access_token', 'webhook_secret']);
      expect(schema.additionalProperties).toBe(false);
    }
  });

  it('Point: approved, the order named after our payment id', async () => {
    const reference = `order-${crypto.randomUUID()}`;
    const res = await pay(pos, '25.00', { reference });
    expect(res.status, res.text).toBe(201);
    expect(res.body.data).toMatchObject({
      status: 'approved',
      amount: { value: '25.00', currency: 'ARS' },
      action: { type: 'none' },
    });
    const [order] = sim.ordersFor(res.body.data.id);
    expect(order).toMatchObject({ id: res.body.data.processor_reference, totalAmount: '25.00', type: 'point' });
    expect(order!.description).toContain(reference);
  });

  it('Point: ending 51 → 201 declined; ending 54 → 201 failed', async () => {
    expect((await pay(pos, '25.51')).body.data.status).toBe('declined');
    expect((await pay(pos, '25.54')).body.data.status).toBe('failed');
  });

  it('ending 52: 504 processor_timeout, then the retry with the same key resumes the same order', async () => {
    const key = crypto.randomUUID();
    const reference = `order-${crypto.randomUUID()}`;
    expectError(await pay(pos, '25.52', { key, reference }), 504, 'processor_timeout');
    const row = await paymentRowByReference(reference);
    expect(row!.status).toBe('pending');
    expect(sim.ordersFor(row!.id)).toHaveLength(1);
    const retry = await pay(pos, '25.52', { key, reference });
    expect(retry.status, retry.text).toBe(201);
    expect(retry.body.data).toMatchObject({
      id: row!.id,
      status: 'approved',
      processor_reference: sim.ordersFor(row!.id)[0]!.id,
    });
    expect(sim.ordersFor(row!.id)).toHaveLength(1);
  });

  it('ending 53: 503 processor_unavailable with Mercado Pago’s code, then the retry creates one order', async () => {
    const key = crypto.randomUUID();
    const reference = `order-${crypto.randomUUID()}`;
    const error = expectError(await pay(qr, '25.53', { key, reference }), 503, 'processor_unavailable');
    expect(error.details).toEqual({ processor_code: 'service_unavailable' });
    const row = await paymentRowByReference(reference);
    expect(row!.status).toBe('created');
    expect(sim.ordersFor(row!.id)).toHaveLength(0);
    const retry = await pay(qr, '25.53', { key, reference });
    expect(retry.body.data.status).toBe('pending');
    expect(sim.ordersFor(row!.id)).toHaveLength(1);
  });

  it('5xx from Mercado Pago: 503, nothing of its body in the response', async () => {
    sim.faults.unavailableNext = 10;
    const res = await pay(pos, '25.00');
    expectError(res, 503, 'processor_unavailable');
    expect(res.text).not.toContain('Internal trace');
  });

  it('invalid credentials: 422 connector_configuration_invalid with the processor code only', async () => {
    const stranger = sim.addAccount();
    const method = await addMethod('cnv_mercadopago_pos_v1', stranger, { terminal_id: TERMINAL });
    sim.accounts.delete(stranger.accessToken);
    const res = await pay(method, '25.00');
    const error = expectError(res, 422, 'connector_configuration_invalid');
    expect(error.details).toEqual({ processor_code: 'unauthorized' });
    expect(res.text).not.toContain('invalid access token');
  });

  it('a payment in another currency than the account’s is refused with 422, and a currency Mercado Pago lacks with unsupported_currency', async () => {
    expect(
      expectError(await pay(pos, '25.00', { currency: 'BRL' }), 422, 'connector_configuration_invalid').details,
    ).toEqual({ processor_code: 'currency_mismatch' });
    expectError(await pay(pos, '25.00', { currency: 'USD' }), 422, 'unsupported_currency');
  });

  it('a Point method without terminal_id needs one per payment', async () => {
    const method = await addMethod('cnv_mercadopago_pos_v1', account);
    expect(expectError(await pay(method, '25.00'), 422, 'connector_configuration_invalid').details).toEqual({
      processor_code: 'missing_terminal_id',
    });
    const res = await pay(method, '25.00', { configuration: { terminal_id: TERMINAL } });
    expect(res.body.data.status).toBe('approved');
  });

  it('QR: pending with Mercado Pago’s qr_data unaltered, also when read again', async () => {
    sim.faults.qrData = '00020101021243650016COM.MERCADOLIBRE02013063638f1d2 <&> ünï 6304ABCD';
    const { payment, orderId } = await pendingQr();
    expect(payment.action).toEqual({
      type: 'display_qr',
      qr_data: sim.orders.get(orderId)!.qrData,
      expires_at: expect.any(String),
    });
    expect(payment.action.qr_data).toBe('00020101021243650016COM.MERCADOLIBRE02013063638f1d2 <&> ünï 6304ABCD');
    expect((await getPayment(payment.id)).body.data.action).toEqual(payment.action);
    expect(sim.orders.get(orderId)!.expirationTime).toBe('PT10M');
    // The QR stops being payable when Mercado Pago's order expires: 10 minutes after it was made.
    const ttl = Date.parse(payment.action.expires_at) - Date.parse(payment.updated_at);
    expect(ttl).toBeGreaterThanOrEqual(599_999);
    expect(ttl).toBeLessThanOrEqual(600_000);
  });
});

describe('Mercado Pago cancel and refund through the API', () => {
  it('cancel of a pending QR payment cancels the order', async () => {
    const { payment, orderId } = await pendingQr();
    const res = await post(`/v1/payments/${payment.id}/cancel`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.status).toBe('canceled');
    expect(sim.orders.get(orderId)!.status).toBe('canceled');
  });

  it('cancel of an approved Point payment is a void: the order is refunded in full', async () => {
    const created = await pay(pos, '30.00');
    const res = await post(`/v1/payments/${created.body.data.id}/cancel`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.status).toBe('canceled');
    expect(sim.orders.get(created.body.data.processor_reference)!.status).toBe('refunded');
  });

  it('cancel of a Point order Mercado Pago will not cancel: 402 processor_declined, payment unchanged', async () => {
    sim.faults.pointWaitsAtTerminal = true;
    const created = await pay(pos, '30.00');
    expect(created.body.data.status).toBe('pending');
    const error = expectError(await post(`/v1/payments/${created.body.data.id}/cancel`), 402, 'processor_declined');
    expect(error.details).toEqual({ processor_code: 'order_cannot_be_canceled' });
    expect((await getPayment(created.body.data.id)).body.data.status).toBe('pending');
  });

  it('cancel of a Point order at the terminal that Mercado Pago accepts (202): 202 pending with cancel_requested_at, completed by the cancellation’s notification', () =>
    atTheTerminal(async () => {
      const created = await pay(pos, '30.00');
      expect(created.body.data).toMatchObject({ status: 'pending', action: { type: 'at_terminal' } });
      const id = created.body.data.id;
      const orderId = created.body.data.processor_reference;
      const key = crypto.randomUUID();
      const res = await post(`/v1/payments/${id}/cancel`, undefined, key);
      expect(res.status, res.text).toBe(202);
      expect(res.body.data).toMatchObject({ status: 'pending', action: { type: 'at_terminal' } });
      expect(res.body.data.cancel_requested_at).toEqual(expect.any(String));
      const sent = sim.requestsTo('POST', `/v1/orders/${orderId}/cancel`);
      expect(sent.at(-1)!.headers['x-allow-cancelable-status']).toBe('at_terminal');
      // The same key answers the same, byte for byte; another key asks Mercado Pago nothing more.
      const replay = await post(`/v1/payments/${id}/cancel`, undefined, key);
      expect(replay.status).toBe(202);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.text).toBe(res.text);
      const again = await post(`/v1/payments/${id}/cancel`);
      expect(again.status, again.text).toBe(202);
      expect(again.body.data.cancel_requested_at).toBe(res.body.data.cancel_requested_at);
      expect(sim.requestsTo('POST', `/v1/orders/${orderId}/cancel`)).toHaveLength(sent.length);
      // The terminal cancels it: Mercado Pago notifies order.canceled.
      expect(sim.completeCancellation(orderId)).toBe(true);
      const [n] = (await sim.delivered(orderId)).slice(-1);
      expect((await deliver(n!)).body.data.outcome).toBe('applied');
      const read = (await getPayment(id)).body.data;
      expect(read).toMatchObject({ status: 'canceled', cancel_requested_at: res.body.data.cancel_requested_at });
      expect(read.action).toBeUndefined();
      expect((await events(id)).map((e) => e.type)).toEqual(['payment.canceled', 'payment.pending']);
      // A retry with the first key still answers what it answered.
      expect((await post(`/v1/payments/${id}/cancel`, undefined, key)).text).toBe(res.text);
    }));

  it('cancel accepted at the terminal, but the customer pays first: approved (payment.approved), refundable', () =>
    atTheTerminal(async () => {
      const created = await pay(pos, '32.00');
      const id = created.body.data.id;
      const orderId = created.body.data.processor_reference;
      const key = crypto.randomUUID();
      expect((await post(`/v1/payments/${id}/cancel`, undefined, key)).status).toBe(202);
      sim.pay(orderId);
      expect(sim.completeCancellation(orderId)).toBe(false);
      const [n] = (await sim.delivered(orderId)).slice(-1);
      expect((await deliver(n!)).body.data.outcome).toBe('applied');
      const read = (await getPayment(id)).body.data;
      // The cancel it had requested is over: `cancel_requested_at` clears when the payment resolves otherwise.
      expect(read).toMatchObject({ status: 'approved', cancel_requested_at: null });
      expect((await events(id)).map((e) => e.type)).toEqual(['payment.approved', 'payment.pending']);
      // The cancel's own key answers what it answered; it never turns into a void of the paid order.
      const replay = await post(`/v1/payments/${id}/cancel`, undefined, key);
      expect(replay.status).toBe(202);
      expect(replay.body.data.status).toBe('pending');
      expect(sim.orders.get(orderId)!.status).toBe('processed');
      const refund = await post(`/v1/payments/${id}/refunds`, { amount: { value: '32.00', currency: 'ARS' } });
      expect(refund.status, refund.text).toBe(201);
    }));

  it('a Point order that goes action_required while its notification is lost: the scheduled terminal read finds it and tells the merchant (payment.action_required)', async () => {
    sim.faults.pointWaitsAtTerminal = true;
    const created = await pay(pos, '34.00');
    const id = created.body.data.id;
    sim.actionRequired(created.body.data.processor_reference);
    await runTerminalChecks(await depsOfPayment(id), Date.now() + 60_000);
    expect((await getPayment(id)).body.data).toMatchObject({ status: 'pending', action: { type: 'check_terminal' } });
    expect((await events(id)).map((e) => e.type)).toEqual(['payment.action_required', 'payment.pending']);
  });

  it('cancel accepted at the terminal whose notification is lost: the scheduled terminal read completes it', async () => {
    sim.faults.pointWaitsAtTerminal = true;
    sim.faults.cancelAtTerminal = 'accepted';
    const created = await pay(pos, '33.00');
    const id = created.body.data.id;
    expect((await post(`/v1/payments/${id}/cancel`)).status).toBe(202);
    sim.completeCancellation(created.body.data.processor_reference);
    const deps = await depsOfPayment(id);
    await runTerminalChecks(deps, Date.now() + 60_000);
    expect((await getPayment(id)).body.data.status).toBe('canceled');
  });

  it('partial then full refunds, and a rejected one', async () => {
    const created = await pay(pos, '100.00');
    const id = created.body.data.id;
    const order = sim.orders.get(created.body.data.processor_reference)!;
    const first = await post(`/v1/payments/${id}/refunds`, { amount: { value: '30.00', currency: 'ARS' } });
    expect(first.status, first.text).toBe(201);
    expect(first.body.data).toMatchObject({ status: 'approved', processor_reference: order.refunds[0]!.id });
    expect((await getPayment(id)).body.data.status).toBe('partially_refunded');
    const rejected = await post(`/v1/payments/${id}/refunds`, { amount: { value: '10.61', currency: 'ARS' } });
    expect(rejected.body.data.status).toBe('declined');
    const rest = await post(`/v1/payments/${id}/refunds`, { amount: { value: '70.00', currency: 'ARS' } });
    expect(rest.body.data.status).toBe('approved');
    expect((await getPayment(id)).body.data.status).toBe('refunded');
    expect(order.status).toBe('refunded');
    expect(order.refunds.filter((r) => r.status === 'processed')).toHaveLength(2);
  });

  it('a full refund of the whole payment sends Mercado Pago no body', async () => {
    const created = await pay(pos, '55.00');
    const res = await post(`/v1/payments/${created.body.data.id}/refunds`, {
      amount: { value: '55.00', currency: 'ARS' },
    });
    expect(res.body.data.status).toBe('approved');
    const orderId = created.body.data.processor_reference;
    expect(sim.requestsTo('POST', `/v1/orders/${orderId}/refund`).map((r) => r.body)).toEqual([undefined]);
    expect((await getPayment(created.body.data.id)).body.data.status).toBe('refunded');
  });
});

describe('Mercado Pago notifications through the API', () => {
  beforeAll(() => notifyingTo(qr));

  it('a signed notification: the order is read from Mercado Pago and the payment moves; its redelivery is a duplicate', async () => {
    const { payment, orderId } = await pendingQr();
    sim.pay(orderId);
    const [n] = await sim.delivered(orderId);
    const res = await deliver(n!);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toEqual({ received: true, outcome: 'applied' });
    expect((await getPayment(payment.id)).body.data.status).toBe('approved');
    expect((await deliver(n!)).body.data).toEqual({ received: true, outcome: 'duplicate' });
  });

  it('forged and stale notifications are answered 200 but not believed: the order is read from Mercado Pago', async () => {
    const { payment, orderId } = await pendingQr();
    // The forged body claims the order was processed; Mercado Pago still says `created`.
    const forged = await sim.notification(orderId, { kind: 'forged' });
    const body = JSON.parse(forged.rawBody);
    body.data.status = 'processed';
    const res = await deliver({ ...forged, rawBody: JSON.stringify(body) });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.outcome).toBe('ignored');
    // Each after the window in which one read covers unverifiable news about the order.
    clockForward(UNVERIFIED_REREAD_WINDOW_MS);
    expect((await deliver(await sim.notification(orderId, { kind: 'stale' }))).body.data.outcome).toBe('ignored');
    const good = await sim.notification(orderId);
    clockForward(UNVERIFIED_REREAD_WINDOW_MS);
    expect((await deliver(good, { 'x-request-id': crypto.randomUUID() })).status).toBe(200);
    expect((await getPayment(payment.id)).body.data.status).toBe('pending');
    // What Mercado Pago itself says is applied, however the news came.
    sim.pay(orderId);
    clockForward(UNVERIFIED_REREAD_WINDOW_MS);
    expect((await deliver(await sim.notification(orderId, { kind: 'forged' }))).body.data.outcome).toBe('applied');
    expect((await getPayment(payment.id)).body.data.status).toBe('approved');
  });

  it('a QR notification (unsigned, as Mercado Pago’s SDKs say) is answered 200 and the order re-read', async () => {
    const { payment, orderId } = await pendingQr();
    sim.pay(orderId);
    const n = await sim.notification(orderId, { kind: 'qr_unsigned' });
    expect(n.headers['x-signature']).toBeUndefined();
    const before = sim.requestsTo('GET', `/v1/orders/${orderId}`).length;
    const res = await deliver(n);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.outcome).toBe('applied');
    expect(sim.requestsTo('GET', `/v1/orders/${orderId}`).length).toBe(before + 1);
    expect((await getPayment(payment.id)).body.data.status).toBe('approved');
  });

  it('a notification and reconciliation ask Mercado Pago about a payment with the same lookup, from one builder', async () => {
    const { payment, orderId } = await pendingQr();
    const getPayment = vi.spyOn(findConnectorVersion('cnv_mercadopago_qr_v1')!.adapter, 'getPayment');
    try {
      expect((await deliver(await sim.notification(orderId, { kind: 'qr_unsigned' }))).status).toBe(200);
      await reconcile(await depsOfPayment(payment.id), Date.now() + RECONCILE_AFTER_MS + 60_000);
      const asked = getPayment.mock.calls
        .map(([, input]) => input as PaymentLookupInput)
        .filter((input) => input.paymentId === payment.id);
      const row = await loadPayment(await depsOfPayment(payment.id), payment.id);
      expect(asked).toEqual([processorLookup(row!), processorLookup(row!)]);
    } finally {
      getPayment.mockRestore();
    }
  });

  it('a signed notification whose query string has no data.id is not trusted: the order is re-read', async () => {
    const { payment, orderId } = await pendingQr();
    const n = await sim.notification(orderId, {
      kind: 'signed_without_query_id',
      event: {
        orderId,
        action: 'order.processed',
        data: { id: orderId, status: 'processed', status_detail: 'accredited', type: 'qr' },
      },
    });
    expect(n.url).not.toContain('data.id');
    const before = sim.requestsTo('GET', `/v1/orders/${orderId}`).length;
    // Its body says processed; Mercado Pago says created: nothing happens.
    expect((await deliver(n)).body.data.outcome).toBe('ignored');
    expect(sim.requestsTo('GET', `/v1/orders/${orderId}`).length).toBe(before + 1);
    expect((await getPayment(payment.id)).body.data.status).toBe('pending');
  });

  it('an unsigned (IPN-style) notification is not believed: the order is re-fetched', async () => {
    const { payment, orderId } = await pendingQr();
    const n = await sim.notification(orderId, { kind: 'unsigned' });
    expect(n.path).toContain('topic=order');
    const before = sim.requestsTo('GET', `/v1/orders/${orderId}`).length;
    // Mercado Pago still says `created`: nothing to apply.
    expect((await deliver(n)).body.data.outcome).toBe('ignored');
    sim.pay(orderId);
    clockForward(UNVERIFIED_REREAD_WINDOW_MS);
    expect((await deliver(n)).body.data.outcome).toBe('applied');
    expect(sim.requestsTo('GET', `/v1/orders/${orderId}`).length).toBe(before + 2);
    expect((await getPayment(payment.id)).body.data.status).toBe('approved');
  });

  it('a correctly signed notification whose body claims a payment that did not happen changes nothing', async () => {
    const { payment, orderId } = await pendingQr();
    const res = await deliver(await sim.notification(orderId, { kind: 'altered_body' }));
    expect(res.status).toBe(200);
    expect(res.body.data.outcome).not.toBe('applied');
    expect((await getPayment(payment.id)).body.data.status).toBe('pending');
  });

  it('a decline arrives as a notification (QR ending 51)', async () => {
    const { payment, orderId } = await pendingQr('40.51');
    sim.decline(orderId);
    const [n] = await sim.delivered(orderId);
    expect((await deliver(n!)).body.data.outcome).toBe('applied');
    expect((await getPayment(payment.id)).body.data.status).toBe('declined');
  });

  it('a late notification after a cancel changes nothing', async () => {
    const { payment, orderId } = await pendingQr();
    const early = await sim.notification(orderId); // the order was `created` when Mercado Pago sent this
    expect((await post(`/v1/payments/${payment.id}/cancel`)).body.data.status).toBe('canceled');
    expect((await deliver(early)).body.data.outcome).toBe('ignored');
    expect((await getPayment(payment.id)).body.data.status).toBe('canceled');
  });

  it('refund news: a refund still processing is settled by Mercado Pago’s notification', async () => {
    notifyingTo(pos);
    try {
      const created = await pay(pos, '80.00');
      sim.faults.refundsProcessing = true;
      const refund = await post(`/v1/payments/${created.body.data.id}/refunds`, {
        amount: { value: '20.00', currency: 'ARS' },
      });
      expect(refund.status, refund.text).toBe(201);
      expect(refund.body.data.status).toBe('processing');
      const orderId = created.body.data.processor_reference;
      sim.settleRefund(orderId, refund.body.data.processor_reference);
      const [n] = await sim.delivered(orderId);
      const res: ApiResponse = await deliver(n!);
      expect(res.body.data.outcome).toBe('applied');
      expect((await refundRow(refund.body.data.id))!.status).toBe('approved');
      expect((await getPayment(created.body.data.id)).body.data.status).toBe('partially_refunded');
    } finally {
      notifyingTo(qr);
    }
  });
});

describe('unverifiable notifications cost nothing', () => {
  /** Unsigned news in the IPN style, as anyone who knows the method id can send it, padded to `bytes`. */
  const unsigned = (method: string, orderId: string, bytes = 0) =>
    call('POST', `/v1/processor-notifications/${method}?id=${orderId}&topic=order`, {
      rawBody: JSON.stringify({
        resource: `${MP_BASE}/v1/orders/${orderId}`,
        topic: 'order',
        pad: 'p'.repeat(Math.max(0, bytes - 120)),
      }),
      headers: { 'Content-Type': 'application/json' },
    });
  const notificationRows = async (method: string) =>
    (await dataPlane
      .prepare('SELECT count(*) AS n FROM processor_notifications WHERE payment_method_id = ?')
      .bind(method)
      .first<{ n: number }>())!.n;
  const unknownOrder = () => `ORD01J${crypto.randomUUID().replace(/-/g, '').slice(0, 20).toUpperCase()}`;

  it('is limited to 60 a minute per method: about unknown orders 200 and nothing stored, then 429 with Retry-After', async () => {
    expect(UNVERIFIED_NOTIFICATION_RATE_LIMIT).toEqual({ limit: 60, windowMs: 60_000 });
    const method = await addMethod('cnv_mercadopago_qr_v1', account, { external_pos_id: POS_ID });
    const other = await addMethod('cnv_mercadopago_qr_v1', account, { external_pos_id: POS_ID });
    const reads = sim.requestsTo('GET', '/v1/orders/').length;
    // The attack of the issue: 60 KB posts about orders nobody has.
    for (let i = 0; i < 60; i++) {
      const res = await unsigned(method, unknownOrder(), 60_000);
      expect(res.status, res.text).toBe(200);
      expect(res.body.data).toEqual({ received: true, outcome: 'unknown_resource' });
    }
    expect(await notificationRows(method)).toBe(0);
    expect(sim.requestsTo('GET', '/v1/orders/').length).toBe(reads);

    const refused = await unsigned(method, unknownOrder());
    const error = expectError(refused, 429, 'rate_limited');
    expect(error.retryable).toBe(true);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(error.details).toEqual({ retry_after_seconds: retryAfter });
    // Per method: another method of the same account is not affected.
    expect((await unsigned(other, unknownOrder())).status).toBe(200);

    // Verified news is never limited: a signed notification about a payment of the method still applies.
    notifyingTo(method);
    try {
      const res = await pay(method, '40.00');
      sim.pay(res.body.data.processor_reference);
      const [signed] = await sim.delivered(res.body.data.processor_reference);
      expect((await deliver(signed!)).body.data.outcome).toBe('applied');
    } finally {
      notifyingTo(qr);
    }
    // A minute later the method takes unverifiable news again.
    clockForward(UNVERIFIED_NOTIFICATION_RATE_LIMIT.windowMs);
    expect((await unsigned(method, unknownOrder())).status).toBe(200);
  });

  it('about a known order: Mercado Pago is read once per 10 seconds, later news within them is a duplicate and stores nothing', async () => {
    expect(UNVERIFIED_REREAD_WINDOW_MS).toBe(10_000);
    const method = await addMethod('cnv_mercadopago_qr_v1', account, { external_pos_id: POS_ID });
    const created = await pay(method, '40.00');
    expect(created.status, created.text).toBe(201);
    const { id, processor_reference: orderId } = created.body.data;
    sim.pay(orderId);
    const reads = () => sim.requestsTo('GET', `/v1/orders/${orderId}`).length;
    const before = reads();

    expect((await unsigned(method, orderId)).body.data.outcome).toBe('applied');
    expect((await getPayment(id)).body.data.status).toBe('approved');
    for (let i = 0; i < 5; i++) {
      const res = await unsigned(method, orderId);
      expect(res.status, res.text).toBe(200);
      expect(res.body.data.outcome).toBe('duplicate');
    }
    expect(reads()).toBe(before + 1);
    expect(await notificationRows(method)).toBe(1);

    clockForward(UNVERIFIED_REREAD_WINDOW_MS);
    expect((await unsigned(method, orderId)).body.data.outcome).toBe('ignored');
    expect(reads()).toBe(before + 2);
    expect(await notificationRows(method)).toBe(2);
  });
});

describe('Mercado Pago outcomes a merchant must act on', () => {
  it('Point action_required (check_on_terminal): pending with action check_terminal, told once, not canceled, polled rarely, settled by the terminal’s outcome', async () => {
    notifyingTo(pos);
    try {
      const res = await pay(pos, '30.55');
      expect(res.status, res.text).toBe(201);
      expect(res.body.data).toMatchObject({ status: 'pending', action: { type: 'check_terminal' } });
      const id = res.body.data.id;
      const orderId = res.body.data.processor_reference;
      expect((await getPayment(id)).body.data.action).toEqual({ type: 'check_terminal' });
      const told = await events(id);
      expect(told.map((e) => e.type)).toEqual(['payment.action_required']);
      expect(told[0]!.data.payment.action).toEqual({ type: 'check_terminal' });

      // Mercado Pago cannot cancel it: our cancel says why and does not ask.
      const cancels = sim.requestsTo('POST', `/v1/orders/${orderId}/cancel`).length;
      const cancel = expectError(await post(`/v1/payments/${id}/cancel`), 409, 'invalid_state_transition');
      expect(cancel.details).toMatchObject({ status: 'pending', action: 'check_terminal' });
      expect(sim.requestsTo('POST', `/v1/orders/${orderId}/cancel`).length).toBe(cancels);

      // Reconciliation does not ask on every run, only every few hours.
      const reads = () => sim.requestsTo('GET', `/v1/orders/${orderId}`).length;
      const before = reads();
      const now = Date.now();
      await reconcile(await depsOfPayment(id), now + RECONCILE_AFTER_MS + 60_000);
      expect(reads()).toBe(before);
      await reconcile(await depsOfPayment(id), now + RECONCILE_ACTION_REQUIRED_AFTER_MS + 60_000);
      expect(reads()).toBe(before + 1);
      expect((await getPayment(id)).body.data).toMatchObject({ status: 'pending', action: { type: 'check_terminal' } });
      expect((await events(id)).map((e) => e.type)).toEqual(['payment.action_required']);

      // The operator confirms on the terminal; Mercado Pago's news settles it.
      sim.pay(orderId);
      const [n] = await sim.delivered(orderId);
      expect((await deliver(n!)).body.data.outcome).toBe('applied');
      const settled = (await getPayment(id)).body.data;
      expect(settled.status).toBe('approved');
      expect(settled.action).toBeUndefined();
    } finally {
      notifyingTo(qr);
    }
  });

  it('a Point order that goes action_required later: its notification makes the payment visible as check_terminal', async () => {
    notifyingTo(pos);
    try {
      sim.faults.pointWaitsAtTerminal = true;
      const res = await pay(pos, '31.00');
      expect(res.body.data).toMatchObject({ status: 'pending', action: { type: 'at_terminal' } });
      const orderId = res.body.data.processor_reference;
      sim.actionRequired(orderId);
      const [n] = await sim.delivered(orderId);
      expect((await deliver(n!)).body.data.outcome).toBe('applied');
      expect((await getPayment(res.body.data.id)).body.data).toMatchObject({
        status: 'pending',
        action: { type: 'check_terminal' },
      });
      expect((await events(res.body.data.id)).map((e) => e.type)).toEqual([
        'payment.action_required',
        'payment.pending',
      ]);
      // Redelivered news of the same state tells nobody twice.
      expect((await deliver(await sim.notification(orderId))).body.data.outcome).toBe('ignored');
    } finally {
      notifyingTo(qr);
    }
  });

  it('charged_back: an approved Point payment charged back stays approved with charged_back_at, never pending; no refund', async () => {
    notifyingTo(pos);
    try {
      const res = await pay(pos, '45.00');
      expect(res.body.data.status).toBe('approved');
      const orderId = res.body.data.processor_reference;
      sim.chargeBack(orderId);
      const [n] = (await sim.delivered(orderId)).slice(-1);
      expect((await deliver(n!)).body.data.outcome).toBe('applied');
      const read = (await getPayment(res.body.data.id)).body.data;
      expect(read.status).toBe('approved');
      expect(read.charged_back_at).toEqual(expect.any(String));
      expect((await events(res.body.data.id)).map((e) => e.type)).toContain('payment.charged_back');
      expectError(
        await post(`/v1/payments/${res.body.data.id}/refunds`, { amount: { value: '1.00', currency: 'ARS' } }),
        409,
        'invalid_state_transition',
      );
    } finally {
      notifyingTo(qr);
    }
  });

  it.each([423, 424])(
    '%d on create: 504 processor_timeout (outcome unknown), the payment kept pending; the retry with the same key resumes it',
    async (status) => {
      const reference = `order-${crypto.randomUUID()}`;
      const key = crypto.randomUUID();
      sim.faults.errorNext = { status, code: status === 423 ? 'resource_locked' : 'failed_dependency', count: 1 };
      const first = await pay(pos, '12.00', { key, reference });
      const error = expectError(first, 504, 'processor_timeout');
      expect(error.retryable).toBe(true);
      const kept = await paymentRowByReference(reference);
      expect(kept!.status).toBe('pending');
      const retry = await pay(pos, '12.00', { key, reference });
      expect(retry.status, retry.text).toBe(201);
      expect(retry.body.data).toMatchObject({ id: kept!.id, status: 'approved' });
      expect(sim.ordersFor(kept!.id)).toHaveLength(1);
    },
  );

  it('424 on a refund: the refund stays open (not failed) and the retry with the same key refunds once', async () => {
    const created = await pay(pos, '50.00');
    const key = crypto.randomUUID();
    sim.faults.errorNext = { status: 424, code: 'failed_dependency', count: 1, method: 'POST' };
    expectError(
      await post(`/v1/payments/${created.body.data.id}/refunds`, { amount: { value: '50.00', currency: 'ARS' } }, key),
      504,
      'processor_timeout',
    );
    const retry = await post(
      `/v1/payments/${created.body.data.id}/refunds`,
      { amount: { value: '50.00', currency: 'ARS' } },
      key,
    );
    expect(retry.status, retry.text).toBe(201);
    expect(retry.body.data.status).toBe('approved');
    expect((await getPayment(created.body.data.id)).body.data.status).toBe('refunded');
  });

  it('402 on create is a decline (201 declined), not a configuration problem', async () => {
    sim.faults.errorNext = { status: 402, code: 'failed', count: 1 };
    const res = await pay(pos, '13.00');
    expect(res.status, res.text).toBe(201);
    expect(res.body.data.status).toBe('declined');
  });
});
