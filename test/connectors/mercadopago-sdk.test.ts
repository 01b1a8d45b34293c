import fc from 'fast-check';
import type { OrderResponse } from 'mercadopago/dist/clients/order/commonTypes';
import type { RefundRequest } from 'mercadopago/dist/clients/order/refund/types';
import { WebhookSignatureValidator } from 'mercadopago/dist/utils/webhook/index.js';
import { beforeEach, describe, expect, it } from 'vitest';
import { mercadoPagoPosV1, mercadoPagoQrV1 } from '../../src/connectors/mercadopago/index.ts';
import {
  type DocsTerminalList,
  buildOrderRequest,
  buildRefundRequest,
  MercadoPagoOrder,
  minorOf,
  signatureManifest,
  signManifest,
  verifySignature,
  type ExpectConforms,
  type InPersonOrderRequest,
  type SdkMismatches,
} from '../../src/connectors/mercadopago/transformers.ts';
import { ConnectorError } from '../../src/connectors/types.ts';
import { connectorError, mpCtx, mpLookup, mpPayment } from '../helpers/mercadopago.ts';
import {
  DOCUMENTED_ERRORS,
  DOCUMENTED_ORDER_STATES,
  MercadoPagoSimulator,
  type SimAccount,
} from '../simulators/mercadopago.ts';

/**
 * The Mercado Pago connector checked against the publisher's own material (mercadopago 3.6.1): its
 * Orders types (at compile time: `npm run typecheck` fails on a field the SDK does not know or a wrong
 * type), its webhook signature validator, and every status and error the Orders API documents.
 */

// ---- Compile-time checks: each @ts-expect-error line must fail `npm run typecheck`, or the check itself fails.

const input = { paymentId: 'pay_1', amount: { minor: 1050, currency: 'ARS' }, externalReference: 'order-1' };
// The builders' results are the SDK's request types.
const built: InPersonOrderRequest = buildOrderRequest('pos', input, { terminalId: 'T1' });
void built;
// A misspelt request field: the SDK's CreateOrderRequest has no `total_ammount`.
export const misspelt: InPersonOrderRequest = {
  type: 'point',
  // @ts-expect-error the misspelt field
  total_ammount: '10.50',
  config: { point: { terminal_id: 'T1' } },
};
// A mistyped request field: `total_amount` is a decimal string, never a number.
export const mistyped: InPersonOrderRequest = {
  type: 'point',
  // @ts-expect-error the number
  total_amount: 10.5,
  config: { point: { terminal_id: 'T1' } },
};
// @ts-expect-error a refund amount as a number
export const badRefund: RefundRequest = { transactions: [{ id: 'PAY1', amount: 1 }] };
// A read schema with a misspelt field, or a field of another type than the SDK's, names the field.
export type ReadsConform = ExpectConforms<SdkMismatches<{ id: string; status_detail: string }, OrderResponse>>;
// @ts-expect-error `status_detial` is not a field of OrderResponse
export type MisspeltRead = ExpectConforms<SdkMismatches<{ id: string; status_detial: string }, OrderResponse>>;
// @ts-expect-error `total_amount` is a string in OrderResponse, not a number
export type MistypedRead = ExpectConforms<SdkMismatches<{ total_amount: number }, OrderResponse>>;
// Nested: a refund's `amount` is a string.
export type MistypedNestedRead = ExpectConforms<
  // @ts-expect-error the nested number
  SdkMismatches<{ transactions: { refunds: { amount: number }[] } }, OrderResponse>
>;
// The terminals list has no SDK type: the Point reference's fields (`DocsTerminalList`) hold it instead.
export type MisspeltTerminalRead = ExpectConforms<
  // @ts-expect-error `operation_mode` is not a field of the documented terminal
  SdkMismatches<{ data: { terminals: { id: string; operation_mode: string }[] } }, DocsTerminalList>
>;

// ---- Runtime

let sim: MercadoPagoSimulator;
let account: SimAccount;
beforeEach(() => {
  sim = new MercadoPagoSimulator();
  account = sim.addAccount({ currency: 'ARS' });
});

const ctx = (type: 'pos' | 'qr', a: SimAccount = account) => mpCtx(sim, account, { type, account: a });
const payment = (minor: number, currency = 'ARS') => mpPayment(minor, { currency });
const lookup = mpLookup;
const pos = mercadoPagoPosV1.adapter;
const qr = mercadoPagoQrV1.adapter;

describe('requests: what the SDK types accept', () => {
  it('the order and refund bodies sent are exactly the builders’ SDK-typed objects', async () => {
    await pos.createPayment(ctx('pos'), payment(1050));
    const [sent] = sim.requestsTo('POST', '/v1/orders');
    expect(sent!.body).toEqual(
      buildOrderRequest(
        'pos',
        {
          ...payment(1050),
          paymentId: (sent!.body as { external_reference: string }).external_reference,
          externalReference: (sent!.body as { description: string }).description,
        },
        { terminalId: 'NEWLAND_N950__N950NCB801293324' },
      ),
    );
    expect(buildRefundRequest(false, 'PAY1', { minor: 500, currency: 'ARS' })).toEqual({
      transactions: [{ id: 'PAY1', amount: '5.00' }],
    });
    expect(buildRefundRequest(true, 'PAY1', { minor: 500, currency: 'ARS' })).toBeUndefined();
  });

  it('an order without its POS or terminal is refused before anything is sent', async () => {
    expect(() => buildOrderRequest('qr', payment(100), {})).toThrow(ConnectorError);
    expect(() => buildOrderRequest('pos', payment(100), {})).toThrow(ConnectorError);
  });
});

describe('responses: the simulator answers complete SDK objects, and the connector reads them', () => {
  it.each(DOCUMENTED_ORDER_STATES.map((state) => [`${state.status}/${state.detail}`, state] as const))(
    'order %s',
    async (_, state) => {
      const ref = (await qr.createPayment(ctx('qr'), payment(2500))).processorReference!;
      sim.setStatus(ref, state);
      const json = sim.orderJson(sim.orders.get(ref)!);
      expect(MercadoPagoOrder.safeParse(json).success).toBe(true);
      for (const channel of ['pos', 'qr'] as const) {
        const outcome = await (channel === 'pos' ? pos : qr).getPayment(ctx(channel), lookup(ref));
        // Never approved unless Mercado Pago says processed / refunded; a chargeback never pending.
        if (outcome.status === 'approved') expect(['processed', 'refunded']).toContain(state.status);
        if (state.status === 'charged_back') expect(outcome.status).toBe('charged_back');
        if (state.status === 'action_required' && (channel === 'pos' || state.detail === 'check_on_terminal')) {
          expect(outcome).toMatchObject({ status: 'pending', action: { type: 'check_terminal' } });
        }
      }
    },
  );
});

describe('defects of the issue, each against the simulator', () => {
  it('Point action_required: pending with check_terminal (not silently pending); cancel is refused without asking Mercado Pago', async () => {
    const created = await pos.createPayment(ctx('pos'), payment(3055));
    expect(created).toMatchObject({
      status: 'pending',
      action: { type: 'check_terminal' },
      processorStatus: 'action_required/check_on_terminal',
    });
    const error = await connectorError(
      pos.cancelPayment(ctx('pos'), { ...lookup(created.processorReference!, 3055), currentStatus: 'pending' }),
    );
    expect(error).toMatchObject({ kind: 'declined', processorCode: 'action_required' });
    expect(sim.requestsTo('POST', `/v1/orders/${created.processorReference}/cancel`)).toHaveLength(0);
    // A QR order waiting for the payer is still a QR to show.
    const ref = (await qr.createPayment(ctx('qr'), payment(2500))).processorReference!;
    sim.setStatus(ref, DOCUMENTED_ORDER_STATES.find((s) => s.detail === 'waiting_payment')!);
    expect((await qr.getPayment(ctx('qr'), lookup(ref))).action.type).toBe('display_qr');
  });

  it.each([423, 424])(
    '%d is “outcome unknown, retry with the same key” on every POST, never configuration_invalid',
    async (status) => {
      for (const method of ['POST'] as const) {
        sim.faults.errorNext = {
          status,
          code: DOCUMENTED_ERRORS.find((e) => e.status === status)!.code,
          count: 1,
          method,
        };
        const input = payment(2500);
        expect((await connectorError(pos.createPayment(ctx('pos'), input))).kind).toBe('timeout');
        expect((await pos.createPayment(ctx('pos'), { ...input, attemptNumber: 2 })).status).toBe('approved');
        expect(sim.ordersFor(input.paymentId)).toHaveLength(1);
      }
    },
  );

  it('every documented HTTP error status maps to a kind, and only 400/401/403/404/422 (and unknown 4xx) on create fail the payment for good', async () => {
    for (const { status, code } of DOCUMENTED_ERRORS) {
      sim.faults.errorNext = { status, code, count: 1, method: 'POST' };
      const error = await connectorError(pos.createPayment(ctx('pos'), payment(2500)));
      const expected =
        status === 402
          ? 'declined'
          : status === 423 || status === 424
            ? 'timeout'
            : status === 409 || status === 429 || status >= 500
              ? 'unavailable'
              : 'configuration_invalid';
      expect(error.kind, `HTTP ${status}`).toBe(expected);
      expect(error.processorCode).toBe(code);
    }
  });

  it('402 carrying the order is the order’s answer: its failed payment decides decline or failure', async () => {
    const order = {
      id: 'ORD01402',
      status: 'failed',
      status_detail: 'failed',
      transactions: { payments: [{ id: 'PAY01', status: 'failed', status_detail: 'rejected_by_issuer' }] },
    };
    const fetch402 = async () => new Response(JSON.stringify(order), { status: 402 });
    const userFetch = (async (input: RequestInfo | URL, init?: RequestInit) =>
      String(input instanceof Request ? input.url : input).endsWith('/users/me')
        ? sim.fetch(input, init)
        : fetch402()) as typeof fetch;
    const outcome = await pos.createPayment({ ...ctx('pos'), fetch: userFetch }, payment(2500));
    expect(outcome).toMatchObject({
      status: 'declined',
      processorReference: 'ORD01402',
      declineCode: 'rejected_by_issuer',
    });
  });

  it('charged_back is mapped explicitly: a chargeback of an approved payment never looks pending', async () => {
    const created = await pos.createPayment(ctx('pos'), payment(2500));
    expect(created.status).toBe('approved');
    sim.chargeBack(created.processorReference!);
    expect((await pos.getPayment(ctx('pos'), lookup(created.processorReference!))).status).toBe('charged_back');
  });

  it('amounts read back in Mercado Pago’s formats: a CLP "1500.00" order is refunded in full (no body), the refund found by its amount', async () => {
    const clp = sim.addAccount({ currency: 'CLP' });
    const created = await pos.createPayment(ctx('pos', clp), payment(1500, 'CLP'));
    sim.faults.amountFormat = 'padded';
    expect(sim.orderJson(sim.orders.get(created.processorReference!)!).total_amount).toBe('1500.00');
    const refund = await pos.refundPayment(ctx('pos', clp), {
      refundId: 'ref_1',
      processorIdempotencyKey: 'ref_1',
      attemptNumber: 1,
      paymentProcessorReference: created.processorReference!,
      amount: { minor: 1500, currency: 'CLP' },
    });
    expect(sim.requestsTo('POST', `/v1/orders/${created.processorReference}/refund`)[0]!.body).toBeUndefined();
    expect(refund).toMatchObject({ status: 'approved', processorReference: expect.stringMatching(/^REF/) });
    // A partial refund in ARS written short ("10.5") is still found by its amount.
    const ars = await pos.createPayment(ctx('pos'), payment(5000));
    sim.faults.amountFormat = 'short';
    const partial = await pos.refundPayment(ctx('pos'), {
      refundId: 'ref_2',
      processorIdempotencyKey: 'ref_2',
      attemptNumber: 1,
      paymentProcessorReference: ars.processorReference!,
      amount: { minor: 1050, currency: 'ARS' },
    });
    expect(partial.processorReference).toMatch(/^REF/);
  });

  it('minorOf: every format Mercado Pago may write, never rounding a non-zero digit away', () => {
    expect(['1500', '1500.0', '1500.00', '1500.000'].map((v) => minorOf(v, 'CLP'))).toEqual([1500, 1500, 1500, 1500]);
    expect(['10.5', '10.50', '10.500', '10'].map((v) => minorOf(v, 'ARS'))).toEqual([1050, 1050, 1050, 1000]);
    expect(
      ['10.505', '1500.5', '-1', '1e3', '', ' ', 'abc', '10.'].map((v) => minorOf(v, v === '1500.5' ? 'CLP' : 'ARS')),
    ).toEqual([null, null, null, null, null, null, null, null]);
    expect(minorOf('0.00', 'ARS')).toBe(0);
    expect(minorOf('10', 'XXX')).toBeNull();
  });
});

describe('notifications: the official validator is the oracle', () => {
  it('what our verifier accepts, WebhookSignatureValidator accepts (data.id lower-cased as documented), and vice versa', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.stringMatching(/^[A-Za-z0-9]{1,40}$/),
        fc.option(fc.uuid(), { nil: null }),
        fc.integer({ min: 1_600_000_000, max: 1_900_000_000 }),
        fc.boolean(),
        async (dataId, requestId, ts, forge) => {
          const secret = 'secret-signature-0123456789';
          const v1 = await signManifest(
            forge ? 'another-secret-0123456789' : secret,
            signatureManifest({ dataId, requestId, ts: String(ts) }),
          );
          const header = `ts=${ts},v1=${v1}`;
          const ours = (await verifySignature(secret, header, { dataId, requestId }, ts * 1000)).ok;
          let sdk = true;
          try {
            WebhookSignatureValidator.validate({
              xSignature: header,
              xRequestId: requestId,
              dataId: dataId.toLowerCase(),
              secret,
              toleranceSeconds: 300,
              now: () => ts * 1000,
            });
          } catch {
            sdk = false;
          }
          expect(ours).toBe(sdk);
          expect(ours).toBe(!forge);
        },
      ),
    );
  });

  it('QR notifications (unsigned, as the SDKs document) are untrusted news, not errors; so is one signed without data.id', async () => {
    const ref = (await qr.createPayment(ctx('qr'), payment(2500))).processorReference!;
    sim.pay(ref);
    const unsigned = await sim.notification(ref, { kind: 'qr_unsigned' });
    const news = await qr.parseNotification(ctx('qr'), {
      headers: new Headers(unsigned.headers),
      rawBody: unsigned.rawBody,
      url: unsigned.url,
    });
    expect(news).toMatchObject({ processorReference: ref, trusted: false, status: null });
    const noId = await sim.notification(ref, { kind: 'signed_without_query_id' });
    // The SDK's validator accepts it (its manifest has no id part) — yet nothing names the order in what was signed.
    const bare = await qr.parseNotification(ctx('qr'), {
      headers: new Headers(noId.headers),
      rawBody: noId.rawBody,
      url: noId.url,
    });
    expect(bare).toMatchObject({ processorReference: ref, trusted: false, status: null });
  });
});
