import fc from 'fast-check';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  MercadoPagoCredentials,
  mercadoPagoPosV1,
  mercadoPagoQrV1,
  MercadoPagoPosConfiguration,
  MercadoPagoQrConfiguration,
} from '../../src/connectors/mercadopago/index.ts';
import {
  amountString,
  HTTP_ERROR_TABLE,
  isoDuration,
  mapOrderStatus,
  mapRefundStatus,
  normalizeHttpError,
  ORDER_STATUS_TABLE,
  processorCodeOf,
  processorIdempotencyKey,
  REFUND_STATUS_TABLE,
  signatureManifest,
  signManifest,
  verifySignature,
} from '../../src/connectors/mercadopago/transformers.ts';
import { findConnectorVersion } from '../../src/connectors/registry.ts';
import { ConnectorError, type ConnectorVersion, type InboundNotification } from '../../src/connectors/types.ts';
import {
  connectorError,
  mpCtx,
  mpLookup,
  mpPayment,
  POS_ID,
  TERMINAL,
  type MpCtx,
  type MpCtxOptions,
} from '../helpers/mercadopago.ts';
import { SUPPORTED_CURRENCIES } from '../../src/domain/money.ts';
import { MercadoPagoSimulator, type SimAccount, type SimNotification } from '../simulators/mercadopago.ts';

/** The Mercado Pago adapter against the local Orders API simulator, injected as `ctx.fetch`. */

const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let sim: MercadoPagoSimulator;
let account: SimAccount;

beforeEach(() => {
  sim = new MercadoPagoSimulator();
  account = sim.addAccount({ currency: 'ARS' });
});

const ctx = (options: MpCtxOptions = {}) => mpCtx(sim, account, options);
const qrCtx = (options: MpCtxOptions = {}) => ctx({ ...options, type: 'qr' });
const payment = mpPayment;
const lookup = mpLookup;

const pos = mercadoPagoPosV1.adapter;
const qr = mercadoPagoQrV1.adapter;

const inbound = (n: SimNotification, headerOverrides: Record<string, string | null> = {}): InboundNotification => {
  const headers = new Headers(n.headers);
  for (const [k, v] of Object.entries(headerOverrides)) v === null ? headers.delete(k) : headers.set(k, v);
  return { headers, rawBody: n.rawBody, url: n.url };
};

describe('Mercado Pago connector versions', () => {
  it('publishes a QR and a Point version with payments, refunds and cancellations in local currencies', () => {
    for (const [version, type] of [
      [mercadoPagoQrV1, 'qr'],
      [mercadoPagoPosV1, 'pos'],
    ] as [ConnectorVersion, string][]) {
      expect(findConnectorVersion(version.id)).toBe(version);
      expect(version).toMatchObject({ provider: 'mercadopago', type, status: 'published', version: '1' });
      expect(version.capabilities).toEqual(['payments', 'refunds', 'cancellations']);
      expect(version.currencies).toEqual(['ARS', 'BRL', 'MXN', 'CLP', 'COP', 'UYU', 'PEN']);
      for (const c of version.currencies) expect(SUPPORTED_CURRENCIES).toContain(c);
    }
    expect(mercadoPagoQrV1.id).toBe('cnv_mercadopago_qr_v1');
    expect(mercadoPagoPosV1.id).toBe('cnv_mercadopago_pos_v1');
  });

  it('credentials: access_token APP_USR-… or TEST-… and webhook_secret, nothing else', () => {
    const secret = 'a'.repeat(64);
    expect(
      MercadoPagoCredentials.safeParse({
        access_token: 'APP_USR-1234567890123456-010203-abcdef-123456789',
        webhook_secret: secret,
      }).success,
    ).toBe(true);
    expect(
      MercadoPagoCredentials.safeParse({
        access_token: 'TEST-1234567890123456-010203-abcdef-123456789',
        webhook_secret: secret,
      }).success,
    ).toBe(true);
    for (const bad of [
      { access_token: 'sk_test_1234567890123456789', webhook_secret: secret },
      { access_token: 'APP_USR-1234567890123456 injected', webhook_secret: secret },
      { access_token: 'APP_USR-1234567890123456' },
      { webhook_secret: secret },
      { access_token: 'APP_USR-1234567890123456', webhook_secret: 'short' },
      { access_token: 'APP_USR-1234567890123456', webhook_secret: secret, extra: 'x' },
    ]) {
      expect(MercadoPagoCredentials.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
  });

  it('configuration: {} is valid (the POS / terminal may come with the payment), defaults applied, strict', () => {
    expect(MercadoPagoQrConfiguration.parse({})).toEqual({ qr_ttl_seconds: 900 });
    expect(MercadoPagoPosConfiguration.parse({})).toEqual({});
    expect(MercadoPagoQrConfiguration.parse({ external_pos_id: POS_ID, qr_ttl_seconds: 120 })).toEqual({
      external_pos_id: POS_ID,
      qr_ttl_seconds: 120,
    });
    expect(MercadoPagoPosConfiguration.parse({ terminal_id: TERMINAL })).toEqual({ terminal_id: TERMINAL });
    expect(MercadoPagoQrConfiguration.safeParse({ terminal_id: TERMINAL }).success).toBe(false);
    expect(MercadoPagoPosConfiguration.safeParse({ terminal_id: 'has spaces' }).success).toBe(false);
    expect(MercadoPagoQrConfiguration.safeParse({ qr_ttl_seconds: 10 }).success).toBe(false);
  });
});

describe('createPayment (Point)', () => {
  it('approves: one POST /v1/orders of type point, amounts as decimal strings, our payment id as external_reference', async () => {
    const input = payment(2500, { description: 'Two coffees' });
    const outcome = await pos.createPayment(ctx(), input);
    expect(outcome).toMatchObject({
      status: 'approved',
      action: { type: 'none' },
      processorStatus: 'processed/accredited',
    });
    expect(outcome.processorReference).toMatch(/^ORD[0-9A-Z]{26}$/);

    const [post] = sim.requestsTo('POST', '/v1/orders');
    expect(sim.requestsTo('POST', '/v1/orders')).toHaveLength(1);
    expect(post!.body).toEqual({
      type: 'point',
      external_reference: input.paymentId,
      description: `${input.externalReference}: Two coffees`,
      total_amount: '25.00',
      transactions: { payments: [{ amount: '25.00' }] },
      config: { point: { terminal_id: TERMINAL } },
    });
    expect(post!.headers.authorization).toBe(`Bearer ${account.accessToken}`);
    expect(post!.headers['x-idempotency-key']).toMatch(UUID_SHAPE);
    expect(post!.headers['x-idempotency-key']).toBe(
      await processorIdempotencyKey('order', input.processorIdempotencyKey),
    );
    expect(sim.ordersFor(input.paymentId)).toHaveLength(1);
  });

  it('formats amounts in the currency’s minor digits (CLP has none)', async () => {
    const chile = sim.addAccount({ currency: 'CLP' });
    await pos.createPayment(ctx({ account: chile }), payment(1500, { currency: 'CLP' }));
    expect((sim.requestsTo('POST', '/v1/orders')[0]!.body as { total_amount: string }).total_amount).toBe('1500');
  });

  it('ending 51 → declined with Mercado Pago’s detail as decline code', async () => {
    const outcome = await pos.createPayment(ctx(), payment(1051));
    expect(outcome).toMatchObject({ status: 'declined', declineCode: 'rejected_by_issuer', action: { type: 'none' } });
    expect(outcome.processorReference).toMatch(/^ORD/);
  });

  it('the decline switch declines any amount', async () => {
    sim.faults.declineAll = true;
    expect((await pos.createPayment(ctx(), payment(2500))).status).toBe('declined');
  });

  it('ending 54 → failed (not a decline)', async () => {
    const outcome = await pos.createPayment(ctx(), payment(1054));
    expect(outcome.status).toBe('failed');
    expect(outcome.declineCode).toBeUndefined();
  });

  it('an order waiting at the terminal is pending', async () => {
    sim.faults.pointWaitsAtTerminal = true;
    expect((await pos.createPayment(ctx(), payment(2500))).status).toBe('pending');
  });
});

describe('createPayment (QR)', () => {
  it('pending with the order’s qr_data, unaltered; dynamic mode on the configured POS; expiration from qr_ttl_seconds', async () => {
    const input = payment(4000);
    const outcome = await qr.createPayment(qrCtx(), input);
    const order = sim.ordersFor(input.paymentId)[0]!;
    expect(outcome).toMatchObject({
      status: 'pending',
      processorReference: order.id,
      action: { type: 'display_qr', qrData: order.qrData },
    });
    expect(order.qrData).toMatch(/^000201/);
    const body = sim.requestsTo('POST', '/v1/orders')[0]!.body as Record<string, any>;
    expect(body).toMatchObject({
      type: 'qr',
      external_reference: input.paymentId,
      total_amount: '40.00',
      expiration_time: 'PT15M',
      config: { qr: { external_pos_id: POS_ID, mode: 'dynamic' } },
    });
  });

  it('qr_data is passed through byte for byte, whatever it contains', async () => {
    const odd = '00020101021243650016COM.MERCADOLIBRE0201306 ünïcode ✓ "quoted" \\ back/slash 6304ABCD';
    sim.faults.qrData = odd;
    const outcome = await qr.createPayment(qrCtx(), payment(4000));
    expect(outcome.action).toEqual({ type: 'display_qr', qrData: odd });
  });

  it('ending 51 → the usual answer; the decline comes later from Mercado Pago', async () => {
    const input = payment(4051);
    const outcome = await qr.createPayment(qrCtx(), input);
    expect(outcome.status).toBe('pending');
    sim.decline(outcome.processorReference!);
    expect(await qr.getPayment(qrCtx(), lookup(outcome.processorReference, 4051))).toMatchObject({
      status: 'declined',
      declineCode: 'rejected_by_issuer',
      action: { type: 'none' },
    });
  });

  it('uses the per-payment configuration the core merged in', async () => {
    await qr.createPayment(
      qrCtx({ configuration: { external_pos_id: 'OTHERPOS', qr_ttl_seconds: 90 } }),
      payment(4000),
    );
    expect(sim.requestsTo('POST', '/v1/orders')[0]!.body).toMatchObject({
      expiration_time: 'PT1M30S',
      config: { qr: { external_pos_id: 'OTHERPOS' } },
    });
  });
});

describe('createPayment: failures', () => {
  for (const [name, adapter, context] of [
    ['point', pos, () => ctx()],
    ['qr', qr, () => qrCtx()],
  ] as const) {
    it(`${name}: ending 52 times out; the retry with the same key resumes the same order`, async () => {
      const input = payment(5052);
      const error = await connectorError(adapter.createPayment(context(), input));
      expect(error.kind).toBe('timeout');
      // Mercado Pago did create the order: only its answer was lost.
      expect(sim.ordersFor(input.paymentId)).toHaveLength(1);
      const outcome = await adapter.createPayment(context(), { ...input, attemptNumber: 2 });
      expect(outcome.processorReference).toBe(sim.ordersFor(input.paymentId)[0]!.id);
      expect(sim.ordersFor(input.paymentId)).toHaveLength(1);
      expect(sim.orders.size).toBe(1);
      const keys = sim.requestsTo('POST', '/v1/orders').map((r) => r.headers['x-idempotency-key']);
      expect(keys).toHaveLength(2);
      expect(new Set(keys).size).toBe(1);
    });

    it(`${name}: ending 53 is unavailable and creates nothing; the retry creates the order once`, async () => {
      const input = payment(5053);
      const error = await connectorError(adapter.createPayment(context(), input));
      expect(error).toMatchObject({ kind: 'unavailable', processorCode: 'service_unavailable' });
      expect(sim.orders.size).toBe(0);
      await adapter.createPayment(context(), { ...input, attemptNumber: 2 });
      expect(sim.ordersFor(input.paymentId)).toHaveLength(1);
    });
  }

  it('a 5xx is unavailable, with Mercado Pago’s code but none of its message', async () => {
    sim.faults.unavailableNext = 5;
    const error = await connectorError(pos.createPayment(ctx(), payment(2500)));
    expect(error).toMatchObject({ kind: 'unavailable', processorCode: 'service_unavailable' });
    expect(error.message).not.toContain('Internal trace');
    expect(JSON.stringify(error)).not.toContain('upstream');
  });

  it('429 is unavailable', async () => {
    sim.faults.rateLimitNext = 5;
    expect(await connectorError(pos.createPayment(ctx(), payment(2500)))).toMatchObject({
      kind: 'unavailable',
      processorCode: 'too_many_requests',
    });
  });

  it('an aborted request (our 15 s timeout) is a timeout; a network error is unavailable', async () => {
    sim.faults.timeoutNext = 1;
    expect(await connectorError(pos.createPayment(ctx(), payment(2500)))).toMatchObject({ kind: 'timeout' });
    sim.faults.networkError = true;
    expect(await connectorError(pos.createPayment(ctx(), payment(2500)))).toMatchObject({
      kind: 'unavailable',
      processorCode: 'network_error',
    });
  });

  it('an invalid access token is configuration_invalid, and the token is nowhere in the error', async () => {
    const stranger: MpCtx = {
      ...ctx(),
      credentials: {
        access_token: 'APP_USR-0000000000000000-000000-deadbeef-000000000',
        webhook_secret: account.webhookSecret,
      },
    };
    const error = await connectorError(pos.createPayment(stranger, payment(2500)));
    expect(error).toMatchObject({ kind: 'configuration_invalid', processorCode: 'unauthorized' });
    expect(error.message).not.toContain('APP_USR');
    sim.faults.invalidToken = true;
    expect(await connectorError(qr.createPayment(qrCtx(), payment(2500)))).toMatchObject({
      kind: 'configuration_invalid',
      processorCode: 'unauthorized',
    });
    expect(sim.orders.size).toBe(0);
  });

  it('a TEST- token is refused in live before any request; APP_USR- tokens work in test (Mercado Pago test users have them)', async () => {
    const error = await connectorError(pos.createPayment(ctx({ environment: 'live' }), payment(2500)));
    expect(error).toMatchObject({ kind: 'configuration_invalid', processorCode: 'test_token_in_live' });
    expect(sim.requests).toHaveLength(0);
    const testUser = sim.addAccount({ accessToken: 'APP_USR-1234567890123456-010203-abcdef0123456789-123456789' });
    expect((await pos.createPayment(ctx({ account: testUser }), payment(2500))).status).toBe('approved');
    expect((await pos.createPayment(ctx({ account: testUser, environment: 'live' }), payment(2500))).status).toBe(
      'approved',
    );
  });

  it('without external_pos_id / terminal_id: configuration_invalid at payment time, nothing sent', async () => {
    expect(
      await connectorError(qr.createPayment(qrCtx({ configuration: { qr_ttl_seconds: 900 } }), payment(2500))),
    ).toMatchObject({
      kind: 'configuration_invalid',
      processorCode: 'missing_external_pos_id',
    });
    expect(await connectorError(pos.createPayment(ctx({ configuration: {} }), payment(2500)))).toMatchObject({
      kind: 'configuration_invalid',
      processorCode: 'missing_terminal_id',
    });
    expect(sim.requests).toHaveLength(0);
  });

  it('an unknown POS or terminal is configuration_invalid with Mercado Pago’s code', async () => {
    const store = sim.addAccount({ posIds: [POS_ID], terminalIds: [TERMINAL] });
    expect(
      await connectorError(
        qr.createPayment(
          qrCtx({ account: store, configuration: { external_pos_id: 'NOPE', qr_ttl_seconds: 900 } }),
          payment(2500),
        ),
      ),
    ).toMatchObject({
      kind: 'configuration_invalid',
      processorCode: 'pos_not_found',
    });
    expect(
      await connectorError(
        pos.createPayment(ctx({ account: store, configuration: { terminal_id: 'NOPE' } }), payment(2500)),
      ),
    ).toMatchObject({
      kind: 'configuration_invalid',
      processorCode: 'terminal_not_found',
    });
  });

  it('a payment in another currency than the account’s is refused before any order exists', async () => {
    const error = await connectorError(pos.createPayment(ctx(), payment(2500, { currency: 'BRL' })));
    expect(error).toMatchObject({ kind: 'configuration_invalid', processorCode: 'currency_mismatch' });
    expect(sim.requestsTo('POST', '/v1/orders')).toHaveLength(0);
  });

  it('the same key with another body is Mercado Pago’s idempotency conflict (409): unavailable, no second order', async () => {
    const input = payment(2500);
    await pos.createPayment(ctx(), input);
    const error = await connectorError(
      pos.createPayment(ctx(), { ...input, amount: { minor: 2600, currency: 'ARS' } }),
    );
    expect(error).toMatchObject({ kind: 'unavailable', processorCode: 'idempotency_key_already_used' });
    expect(sim.orders.size).toBe(1);
  });
});

describe('getPayment', () => {
  it('follows the order through Mercado Pago’s statuses', async () => {
    const created = await qr.createPayment(qrCtx(), payment(2500));
    const ref = created.processorReference!;
    expect((await qr.getPayment(qrCtx(), lookup(ref))).status).toBe('pending');
    sim.pay(ref);
    expect(await qr.getPayment(qrCtx(), lookup(ref))).toMatchObject({
      status: 'approved',
      processorReference: ref,
      action: { type: 'none' },
    });
    const other = (await qr.createPayment(qrCtx(), payment(2500))).processorReference!;
    sim.expire(other);
    expect((await qr.getPayment(qrCtx(), lookup(other))).status).toBe('expired');
    const third = (await qr.createPayment(qrCtx(), payment(2500))).processorReference!;
    sim.fail(third);
    expect((await qr.getPayment(qrCtx(), lookup(third))).status).toBe('failed');
  });

  it('not_found: no reference (the Orders API is read by id), an unknown id, another account’s order', async () => {
    expect((await connectorError(pos.getPayment(ctx(), lookup(null)))).kind).toBe('not_found');
    expect(sim.requests).toHaveLength(0);
    expect(await connectorError(pos.getPayment(ctx(), lookup('ORD01JQ4S4KY8HWQ6NA5PXB65B3D3')))).toMatchObject({
      kind: 'not_found',
      processorCode: 'order_not_found',
    });
    const ref = (await pos.createPayment(ctx(), payment(2500))).processorReference!;
    const stranger = sim.addAccount();
    expect((await connectorError(pos.getPayment(ctx({ account: stranger }), lookup(ref)))).kind).toBe('not_found');
  });

  it('a path-unsafe reference never reaches the URL unescaped', async () => {
    await connectorError(pos.getPayment(ctx(), lookup('../users/me')));
    expect(sim.requests.at(-1)!.path).toBe('/v1/orders/..%2Fusers%2Fme');
  });
});

describe('cancelPayment', () => {
  const cancelInput = (ref: string | null, currentStatus: 'pending' | 'processing' | 'approved' = 'pending') => ({
    ...lookup(ref),
    processorIdempotencyKey: 'pay_x:cancel',
    currentStatus,
  });

  it('a QR order nobody paid is canceled at Mercado Pago', async () => {
    const ref = (await qr.createPayment(qrCtx(), payment(2500))).processorReference!;
    expect(await qr.cancelPayment(qrCtx(), cancelInput(ref))).toMatchObject({
      status: 'canceled',
      processorReference: ref,
    });
    expect(sim.orders.get(ref)!.status).toBe('canceled');
    const [post] = sim.requestsTo('POST', `/v1/orders/${ref}/cancel`);
    expect(post!.headers['x-idempotency-key']).toBe(await processorIdempotencyKey('cancel', 'pay_x:cancel'));
  });

  it('canceling again is idempotent: no second POST', async () => {
    const ref = (await qr.createPayment(qrCtx(), payment(2500))).processorReference!;
    await qr.cancelPayment(qrCtx(), cancelInput(ref));
    expect((await qr.cancelPayment(qrCtx(), cancelInput(ref))).status).toBe('canceled');
    expect(sim.requestsTo('POST', `/v1/orders/${ref}/cancel`)).toHaveLength(1);
  });

  it('a processed order is voided by a full refund, and is canceled once the refund is processed', async () => {
    const ref = (await pos.createPayment(ctx(), payment(2500))).processorReference!;
    expect(await pos.cancelPayment(ctx(), cancelInput(ref, 'approved'))).toMatchObject({
      status: 'canceled',
      processorReference: ref,
    });
    const order = sim.orders.get(ref)!;
    expect(order.status).toBe('refunded');
    expect(order.refunds).toHaveLength(1);
    const [post] = sim.requestsTo('POST', `/v1/orders/${ref}/refund`);
    expect(post!.body).toBeUndefined();
    expect(post!.headers['x-idempotency-key']).toBe(await processorIdempotencyKey('void', 'pay_x:cancel'));
  });

  it('a void still processing answers unavailable; the retried cancel finds the same refund', async () => {
    sim.faults.refundsProcessing = true;
    const ref = (await pos.createPayment(ctx(), payment(2500))).processorReference!;
    expect(await connectorError(pos.cancelPayment(ctx(), cancelInput(ref, 'approved')))).toMatchObject({
      kind: 'unavailable',
      processorCode: 'void_in_progress',
    });
    expect(await connectorError(pos.cancelPayment(ctx(), cancelInput(ref, 'approved')))).toMatchObject({
      kind: 'unavailable',
      processorCode: 'void_in_progress',
    });
    const order = sim.orders.get(ref)!;
    expect(order.refunds).toHaveLength(1);
    sim.settleRefund(ref, order.refunds[0]!.id);
    expect((await pos.cancelPayment(ctx(), cancelInput(ref, 'approved'))).status).toBe('canceled');
    expect(order.refunds).toHaveLength(1);
  });

  it('a rejected void is declined', async () => {
    const ref = (await pos.createPayment(ctx(), payment(2561))).processorReference!;
    expect(await connectorError(pos.cancelPayment(ctx(), cancelInput(ref, 'approved')))).toMatchObject({
      kind: 'declined',
      processorCode: 'void_refund_rejected',
    });
  });

  it('a payment we thought pending but Mercado Pago processed is voided too', async () => {
    const ref = (await qr.createPayment(qrCtx(), payment(2500))).processorReference!;
    sim.pay(ref);
    expect((await qr.cancelPayment(qrCtx(), cancelInput(ref, 'pending'))).status).toBe('canceled');
    expect(sim.orders.get(ref)!.status).toBe('refunded');
  });

  it('an order on the terminal that Mercado Pago will not cancel is declined, with its code', async () => {
    sim.faults.pointWaitsAtTerminal = true;
    const ref = (await pos.createPayment(ctx(), payment(2500))).processorReference!;
    expect(await connectorError(pos.cancelPayment(ctx(), cancelInput(ref)))).toMatchObject({
      kind: 'declined',
      processorCode: 'order_cannot_be_canceled',
    });
  });

  it('an order already final at Mercado Pago answers its final status', async () => {
    const ref = (await qr.createPayment(qrCtx(), payment(2500))).processorReference!;
    sim.expire(ref);
    expect((await qr.cancelPayment(qrCtx(), cancelInput(ref))).status).toBe('expired');
    expect(sim.requestsTo('POST', `/v1/orders/${ref}/cancel`)).toHaveLength(0);
  });

  it('a payment Mercado Pago never answered for is canceled without a call', async () => {
    expect(await pos.cancelPayment(ctx(), cancelInput(null))).toMatchObject({
      status: 'canceled',
      processorReference: null,
    });
    expect(sim.requests).toHaveLength(0);
  });
});

describe('refundPayment / getRefund', () => {
  const refundInput = (ref: string, minor: number, key = `ref_${crypto.randomUUID()}`) => ({
    refundId: key,
    processorIdempotencyKey: key,
    attemptNumber: 1,
    paymentProcessorReference: ref,
    amount: { minor, currency: 'ARS' },
  });

  it('partial refunds name the payment transaction and the amount', async () => {
    const ref = (await pos.createPayment(ctx(), payment(10_000))).processorReference!;
    const order = sim.orders.get(ref)!;
    const first = await pos.refundPayment(ctx(), refundInput(ref, 2500));
    expect(first).toMatchObject({ status: 'approved', processorStatus: 'processed' });
    expect(first.processorReference).toBe(order.refunds[0]!.id);
    expect(sim.requestsTo('POST', `/v1/orders/${ref}/refund`)[0]!.body).toEqual({
      transactions: [{ id: order.payment.id, amount: '25.00' }],
    });
    expect(order).toMatchObject({ status: 'processed', statusDetail: 'partially_refunded' });

    // A second partial of the same amount is told apart from the first.
    const second = await pos.refundPayment(ctx(), refundInput(ref, 2500));
    expect(second.processorReference).toBe(order.refunds[1]!.id);
    expect(second.processorReference).not.toBe(first.processorReference);

    const lookupRefund = (r: string | null) => ({
      refundId: 'ref_x',
      amount: { minor: 2500, currency: 'ARS' },
      processorReference: r,
      processorIdempotencyKey: 'ref_x',
      paymentProcessorReference: ref,
    });
    expect(await pos.getRefund(ctx(), lookupRefund(first.processorReference))).toEqual(first);
    expect((await connectorError(pos.getRefund(ctx(), lookupRefund(null)))).kind).toBe('not_found');
    expect((await connectorError(pos.getRefund(ctx(), lookupRefund('REF01JQ4S4KY8HWQ6NA5PXB65B3D3')))).kind).toBe(
      'not_found',
    );
  });

  it('a full refund sends no body and refunds the order', async () => {
    const ref = (await pos.createPayment(ctx(), payment(10_000))).processorReference!;
    const outcome = await pos.refundPayment(ctx(), refundInput(ref, 10_000));
    expect(outcome.status).toBe('approved');
    expect(sim.requestsTo('POST', `/v1/orders/${ref}/refund`)[0]!.body).toBeUndefined();
    expect(sim.orders.get(ref)!.status).toBe('refunded');
    // Refunded is still a payment that succeeded: our refund records carry the refund.
    expect((await pos.getPayment(ctx(), lookup(ref, 10_000))).status).toBe('approved');
  });

  it('a refund retried after a timeout with the same key is one refund', async () => {
    const ref = (await pos.createPayment(ctx(), payment(10_000))).processorReference!;
    const input = refundInput(ref, 3000);
    // The GET goes through; the POST times out before reaching Mercado Pago.
    const orig = sim.fetch;
    let calls = 0;
    const flaky = (async (i: RequestInfo | URL, init?: RequestInit) => {
      if (init?.method === 'POST' && calls++ === 0) {
        await orig(i, init);
        throw new DOMException('timeout', 'TimeoutError');
      }
      return orig(i, init);
    }) as typeof fetch;
    expect((await connectorError(pos.refundPayment({ ...ctx(), fetch: flaky }, input))).kind).toBe('timeout');
    const outcome = await pos.refundPayment({ ...ctx(), fetch: flaky }, { ...input, attemptNumber: 2 });
    expect(outcome.status).toBe('approved');
    expect(sim.orders.get(ref)!.refunds).toHaveLength(1);
  });

  it('a refund ending in 61 is rejected → declined; a processing one settles later', async () => {
    const ref = (await pos.createPayment(ctx(), payment(10_000))).processorReference!;
    expect((await pos.refundPayment(ctx(), refundInput(ref, 1061))).status).toBe('declined');
    sim.faults.refundsProcessing = true;
    const pending = await pos.refundPayment(ctx(), refundInput(ref, 2000));
    expect(pending.status).toBe('processing');
    sim.settleRefund(ref, pending.processorReference!);
    const read = await pos.getRefund(ctx(), {
      refundId: 'r',
      amount: { minor: 2000, currency: 'ARS' },
      processorReference: pending.processorReference,
      processorIdempotencyKey: 'r',
      paymentProcessorReference: ref,
    });
    expect(read.status).toBe('approved');
  });

  it('refunding an order that was not processed is declined by Mercado Pago', async () => {
    const ref = (await qr.createPayment(qrCtx(), payment(10_000))).processorReference!;
    expect(await connectorError(qr.refundPayment(qrCtx(), refundInput(ref, 1000)))).toMatchObject({
      kind: 'declined',
      processorCode: 'order_cannot_be_refunded',
    });
  });

  it('more than the order is refused (400 → configuration_invalid with the code)', async () => {
    const ref = (await pos.createPayment(ctx(), payment(10_000))).processorReference!;
    await pos.refundPayment(ctx(), refundInput(ref, 9000));
    expect(await connectorError(pos.refundPayment(ctx(), refundInput(ref, 2000)))).toMatchObject({
      kind: 'configuration_invalid',
      processorCode: 'invalid_refund_amount',
    });
  });
});

describe('parseNotification', () => {
  async function qrOrder() {
    const ref = (await qr.createPayment(qrCtx(), payment(2500))).processorReference!;
    return ref;
  }

  it('a correctly signed order notification: the order, verified, its status left for the core to read', async () => {
    const ref = await qrOrder();
    sim.pay(ref);
    const [n] = await sim.delivered(ref);
    const news = await qr.parseNotification(qrCtx(), inbound(n!));
    expect(news).toMatchObject({ resource: 'payment', processorReference: ref, trusted: true, status: null });
    expect(news.eventId).toMatch(/^mp_[0-9a-f]{40}$/);
  });

  it('a duplicated delivery has the same event id; another delivery has another', async () => {
    const ref = await qrOrder();
    const n = await sim.notification(ref);
    const a = await qr.parseNotification(qrCtx(), inbound(n));
    const b = await qr.parseNotification(qrCtx(), inbound(n));
    expect(a.eventId).toBe(b.eventId);
    const other = await qr.parseNotification(qrCtx(), inbound(await sim.notification(ref)));
    expect(other.eventId).not.toBe(a.eventId);
  });

  it('forged, stale, future, tampered, malformed or missing signatures: not refused (Mercado Pago would retry forever), not trusted', async () => {
    const ref = await qrOrder();
    const untrusted = async (n: InboundNotification) => {
      const news = await qr.parseNotification(qrCtx(), n);
      expect(news).toMatchObject({ resource: 'payment', processorReference: ref, status: null, trusted: false });
      expect(news.eventId).toMatch(/^mp_unsigned_/);
    };
    await untrusted(inbound(await sim.notification(ref, { kind: 'forged' })));
    await untrusted(inbound(await sim.notification(ref, { kind: 'stale' })));
    await untrusted(inbound(await sim.notification(ref, { ts: Math.floor(Date.now() / 1000) + 600 })));
    // Mercado Pago lower-cases an alphanumeric data.id in the manifest; one signed as written does not verify.
    await untrusted(inbound(await sim.notification(ref, { lowercaseIdInManifest: false })));
    const good = await sim.notification(ref);
    // The signature covers x-request-id: changing it breaks it.
    await untrusted(inbound(good, { 'x-request-id': crypto.randomUUID() }));
    await untrusted(inbound(good, { 'x-signature': null }));
    for (const header of [
      '',
      'garbage',
      'ts=abc,v1=00',
      'v1=00',
      `ts=${Math.floor(Date.now() / 1000)}`,
      `ts=${Math.floor(Date.now() / 1000)},v1=`,
    ]) {
      await untrusted(inbound(good, { 'x-signature': header }));
    }
    // A method holding another secret does not trust it either.
    expect((await qr.parseNotification(qrCtx({ secret: 'f'.repeat(64) }), inbound(good))).trusted).toBe(false);
    // A signed data.id pointed at another order is untrusted news of that other order, nothing more.
    const otherRef = await qrOrder();
    expect(
      await qr.parseNotification(qrCtx(), { ...inbound(good), url: good.url.replace(ref, otherRef) }),
    ).toMatchObject({ processorReference: otherRef, trusted: false });
    // A valid signature whose body names another order than the signed data.id is refused.
    const body = JSON.parse(good.rawBody);
    body.data.id = otherRef;
    expect(
      (await connectorError(qr.parseNotification(qrCtx(), { ...inbound(good), rawBody: JSON.stringify(body) }))).kind,
    ).toBe('invalid_notification');
  });

  it('accepts a ts in milliseconds and a notification without x-request-id (omitted from the manifest)', async () => {
    const ref = await qrOrder();
    expect(
      (await qr.parseNotification(qrCtx(), inbound(await sim.notification(ref, { ts: Date.now() })))).trusted,
    ).toBe(true);
    expect(
      (await qr.parseNotification(qrCtx(), inbound(await sim.notification(ref, { requestId: null }))))
        .processorReference,
    ).toBe(ref);
  });

  it('an altered body under a valid signature changes nothing: its status is never read', async () => {
    const ref = await qrOrder();
    const news = await qr.parseNotification(qrCtx(), inbound(await sim.notification(ref, { kind: 'altered_body' })));
    expect(news.status).toBeNull();
    expect((await qr.getPayment(qrCtx(), lookup(ref))).status).toBe('pending');
  });

  it('late notifications (delivered out of order) are each verified, and say nothing the core would believe', async () => {
    const ref = (await pos.createPayment(ctx(), payment(10_000))).processorReference!;
    await pos.refundPayment(ctx(), {
      refundId: 'r1',
      processorIdempotencyKey: 'r1',
      attemptNumber: 1,
      paymentProcessorReference: ref,
      amount: { minor: 10_000, currency: 'ARS' },
    });
    const delivered = (await sim.delivered(ref)).reverse();
    expect(delivered.length).toBeGreaterThan(0);
    for (const n of delivered) expect((await pos.parseNotification(ctx(), inbound(n))).status).toBeNull();
  });

  it('refund news names the refund', async () => {
    const ref = (await pos.createPayment(ctx(), payment(10_000))).processorReference!;
    const refund = await pos.refundPayment(ctx(), {
      refundId: 'r1',
      processorIdempotencyKey: 'r1',
      attemptNumber: 1,
      paymentProcessorReference: ref,
      amount: { minor: 4000, currency: 'ARS' },
    });
    const [n] = await sim.delivered(ref);
    expect(JSON.parse(n!.rawBody).action).toBe('order.refunded');
    expect(await pos.parseNotification(ctx(), inbound(n!))).toMatchObject({
      resource: 'refund',
      processorReference: refund.processorReference,
      trusted: true,
      status: null,
    });
  });

  it('an unsigned (IPN-style) notification is accepted untrusted, for the core to re-fetch; each gets its own event id', async () => {
    const ref = await qrOrder();
    const n = await sim.notification(ref, { kind: 'unsigned' });
    expect(n.headers['x-signature']).toBeUndefined();
    const a = await qr.parseNotification(qrCtx(), inbound(n));
    expect(a).toMatchObject({ resource: 'payment', processorReference: ref, trusted: false, status: null });
    const b = await qr.parseNotification(qrCtx(), inbound(n));
    expect(b.eventId).not.toBe(a.eventId);
    // Unsigned news that names nothing is refused.
    expect(
      (
        await connectorError(
          qr.parseNotification(qrCtx(), { headers: new Headers(), rawBody: '{}', url: 'https://merchant.example/n' }),
        )
      ).kind,
    ).toBe('invalid_notification');
    expect(
      (
        await connectorError(
          qr.parseNotification(qrCtx(), {
            headers: new Headers(),
            rawBody: 'not json',
            url: `https://merchant.example/n?id=${ref}`,
          }),
        )
      ).kind,
    ).toBe('invalid_notification');
  });
});

describe('transformers: status tables', () => {
  it.each<[string, string | null, string]>([
    ['created', null, 'pending'],
    ['at_terminal', null, 'pending'],
    ['action_required', 'waiting_payment', 'pending'],
    ['action_required', 'check_on_terminal', 'pending'],
    ['charged_back', 'charged_back', 'charged_back'],
    ['charged_back', null, 'charged_back'],
    ['processing', 'in_process', 'processing'],
    ['processed', 'accredited', 'approved'],
    ['processed', 'partially_refunded', 'approved'],
    ['refunded', 'refunded', 'approved'],
    ['canceled', 'canceled', 'canceled'],
    ['expired', 'expired', 'expired'],
    ['failed', 'rejected_by_issuer', 'declined'],
    ['failed', 'insufficient_amount', 'declined'],
    ['failed', 'rejected_other_reason', 'declined'],
    ['failed', 'cc_rejected_call_for_authorize', 'declined'],
    ['failed', 'processing_error', 'failed'],
    ['failed', 'failed', 'failed'],
    ['failed', null, 'failed'],
  ])('order %s / %s → %s', (status, detail, ours) => {
    expect(mapOrderStatus(status, detail)).toBe(ours);
  });

  it('a failed order whose payment says rejected is a decline', () => {
    expect(mapOrderStatus('failed', 'failed', 'rejected_by_issuer')).toBe('declined');
  });

  it('every status of the table is covered above; anything unknown is pending, never approved', () => {
    expect(Object.keys(ORDER_STATUS_TABLE).sort()).toEqual(
      [
        'action_required',
        'at_terminal',
        'cancelled',
        'canceled',
        'charged_back',
        'created',
        'expired',
        'failed',
        'processed',
        'processing',
        'refunded',
      ].sort(),
    );
    for (const unknown of [
      'approved',
      'accredited',
      'PROCESSED',
      '',
      'toString',
      '__proto__',
      'constructor',
      'partially_processed',
    ])
      expect(mapOrderStatus(unknown, 'accredited')).toBe('pending');
    fc.assert(
      fc.property(fc.string(), fc.option(fc.string()), (status, detail) => {
        const mapped = mapOrderStatus(status, detail);
        if (!Object.hasOwn(ORDER_STATUS_TABLE, status)) expect(mapped).toBe('pending');
        if (mapped === 'approved') expect(['processed', 'refunded']).toContain(status);
      }),
    );
  });

  it.each<[string | null, string]>([
    ['processed', 'approved'],
    ['processing', 'processing'],
    ['in_process', 'pending'],
    ['pending', 'pending'],
    ['rejected', 'declined'],
    ['failed', 'failed'],
    ['canceled', 'failed'],
    [null, 'pending'],
    ['mystery', 'pending'],
    ['__proto__', 'pending'],
  ])('refund %s → %s', (status, ours) => {
    expect(mapRefundStatus(status)).toBe(ours);
    if (status && Object.hasOwn(REFUND_STATUS_TABLE, status)) expect(REFUND_STATUS_TABLE[status]).toBe(ours);
  });
});

describe('transformers: errors', () => {
  it.each<[number, 'create' | 'lookup' | 'cancel' | 'refund', unknown, string, string]>([
    [
      400,
      'create',
      { errors: [{ code: 'required_properties', message: 'x' }] },
      'configuration_invalid',
      'required_properties',
    ],
    [401, 'create', { code: 'unauthorized', message: 'invalid access token' }, 'configuration_invalid', 'unauthorized'],
    [
      403,
      'lookup',
      { message: 'forbidden', error: 'forbidden', status: 403, cause: [] },
      'configuration_invalid',
      'forbidden',
    ],
    [404, 'lookup', { errors: [{ code: 'order_not_found' }] }, 'not_found', 'order_not_found'],
    [404, 'create', { errors: [{ code: 'pos_not_found' }] }, 'configuration_invalid', 'pos_not_found'],
    [
      409,
      'create',
      { errors: [{ code: 'idempotency_key_already_used' }] },
      'unavailable',
      'idempotency_key_already_used',
    ],
    [
      409,
      'refund',
      { errors: [{ code: 'idempotency_key_already_used' }] },
      'unavailable',
      'idempotency_key_already_used',
    ],
    [409, 'cancel', { errors: [{ code: 'order_cannot_be_canceled' }] }, 'declined', 'order_cannot_be_canceled'],
    [402, 'create', { error: 'failed', message: 'x' }, 'declined', 'failed'],
    [402, 'refund', { error: 'failed' }, 'declined', 'failed'],
    [423, 'create', { error: 'resource_locked' }, 'timeout', 'resource_locked'],
    [423, 'refund', { error: 'resource_locked' }, 'timeout', 'resource_locked'],
    [423, 'cancel', { error: 'resource_locked' }, 'timeout', 'resource_locked'],
    [423, 'lookup', { error: 'resource_locked' }, 'unavailable', 'resource_locked'],
    [424, 'create', { error: 'failed_dependency' }, 'timeout', 'failed_dependency'],
    [424, 'refund', null, 'timeout', 'http_424'],
    [422, 'refund', { errors: [{ code: 'insufficient_balance' }] }, 'declined', 'insufficient_balance'],
    [429, 'lookup', null, 'unavailable', 'http_429'],
    [500, 'create', 'not json at all', 'unavailable', 'http_500'],
    [503, 'refund', { errors: [{ code: 'service_unavailable' }] }, 'unavailable', 'service_unavailable'],
    [418, 'create', {}, 'configuration_invalid', 'http_418'],
  ])('%d on %s → %s (%s)', (status, operation, body, kind, code) => {
    const error = normalizeHttpError(operation, status, body);
    expect(error).toBeInstanceOf(ConnectorError);
    expect(error.kind).toBe(kind);
    expect(error.processorCode).toBe(code);
  });

  it('the table covers every operation for every row', () => {
    for (const row of HTTP_ERROR_TABLE)
      expect(Object.keys(row.kinds).sort()).toEqual(['cancel', 'create', 'lookup', 'refund']);
  });

  it('never carries free text of the payload: codes are short identifiers or http_<status>', () => {
    expect(processorCodeOf(400, { errors: [{ code: 'has spaces <script>' }] })).toBe('http_400');
    expect(processorCodeOf(400, { errors: [{ code: 'x'.repeat(65) }] })).toBe('http_400');
    expect(processorCodeOf(400, { errors: [{ code: 1234 }] })).toBe('1234');
    const error = normalizeHttpError('create', 400, {
      errors: [{ code: 'bad', message: 'SECRET-DETAIL' }],
      message: 'SECRET-DETAIL',
    });
    expect(JSON.stringify({ ...error, message: error.message })).not.toContain('SECRET-DETAIL');
  });
});

describe('transformers: requests and signatures', () => {
  it('amounts and durations', () => {
    expect(amountString({ minor: 1050, currency: 'ARS' })).toBe('10.50');
    expect(amountString({ minor: 1, currency: 'BRL' })).toBe('0.01');
    expect(amountString({ minor: 1500, currency: 'CLP' })).toBe('1500');
    expect([60, 90, 900, 3600, 5400, 86_400].map(isoDuration)).toEqual([
      'PT1M',
      'PT1M30S',
      'PT15M',
      'PT1H',
      'PT1H30M',
      'PT24H',
    ]);
  });

  it('idempotency keys: stable per attempt, distinct per operation, UUID-shaped', async () => {
    const a = await processorIdempotencyKey('order', 'pay_1');
    expect(a).toMatch(UUID_SHAPE);
    expect(await processorIdempotencyKey('order', 'pay_1')).toBe(a);
    expect(await processorIdempotencyKey('order', 'pay_2')).not.toBe(a);
    expect(await processorIdempotencyKey('refund', 'pay_1')).not.toBe(a);
  });

  it('the manifest: id (lower-cased when alphanumeric), request-id, ts; missing parts omitted', () => {
    expect(signatureManifest({ dataId: 'ORD01ABC', requestId: 'req-1', ts: '1704908010' })).toBe(
      'id:ord01abc;request-id:req-1;ts:1704908010;',
    );
    expect(signatureManifest({ dataId: '123456', requestId: null, ts: '1704908010' })).toBe('id:123456;ts:1704908010;');
    expect(signatureManifest({ dataId: 'ORD_01-X', ts: '1' })).toBe('id:ORD_01-X;ts:1;');
    expect(signatureManifest({ ts: '1' })).toBe('ts:1;');
  });

  it('verifies hex HMAC-SHA256 over the manifest within ±300 s', async () => {
    const secret = 'secret-signature-0123456789';
    const ts = 1_704_908_010;
    const v1 = await signManifest(secret, `id:123456;request-id:abc;ts:${ts};`);
    const at = (seconds: number) => seconds * 1000;
    expect(
      await verifySignature(secret, `ts=${ts},v1=${v1}`, { dataId: '123456', requestId: 'abc' }, at(ts + 300)),
    ).toEqual({ ok: true });
    expect(
      await verifySignature(
        secret,
        ` ts=${ts} , v1=${v1.toUpperCase()} `,
        { dataId: '123456', requestId: 'abc' },
        at(ts - 300),
      ),
    ).toEqual({ ok: true });
    expect(
      await verifySignature(secret, `ts=${ts},v1=${v1}`, { dataId: '123456', requestId: 'abc' }, at(ts + 301)),
    ).toEqual({ ok: false, reason: 'stale' });
    expect(await verifySignature(secret, `ts=${ts},v1=${v1}`, { dataId: '123457', requestId: 'abc' }, at(ts))).toEqual({
      ok: false,
      reason: 'mismatch',
    });
    expect(
      await verifySignature(
        'other-secret-0123456789',
        `ts=${ts},v1=${v1}`,
        { dataId: '123456', requestId: 'abc' },
        at(ts),
      ),
    ).toEqual({ ok: false, reason: 'mismatch' });
    expect(await verifySignature(secret, `v1=${v1}`, { dataId: '123456', requestId: 'abc' }, at(ts))).toEqual({
      ok: false,
      reason: 'malformed',
    });
  });
});
