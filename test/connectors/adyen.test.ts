import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  AdyenCredentials,
  adyenPosV1,
  adyenQrV1,
  ADYEN_POS_CURRENCIES,
  ADYEN_QR_CURRENCIES,
  TERMINAL_REQUESTS_PER_PAYMENT,
} from '../../src/connectors/adyen/index.ts';
import {
  ADYEN_CURRENCY_DECIMALS,
  checkoutStatus,
  decimalOf,
  decimalOfTerminalAmount,
  EVENT_RULES,
  fromCheckoutAmount,
  fromTerminalAmount,
  hmacPayload,
  hmacSignature,
  minorOfDecimal,
  terminalStatus,
  toCheckoutAmount,
  toTerminalAmount,
  verifyHmac,
} from '../../src/connectors/adyen/transformers.ts';
import type { ConnectorContext, InboundNotification } from '../../src/connectors/types.ts';
import { SUPPORTED_CURRENCIES } from '../../src/domain/money.ts';
import { connectorError } from '../helpers/connectors.ts';
import { AdyenSimulator } from '../simulators/adyen.ts';
import { specEventCodes, specProblems } from '../simulators/adyen-spec.ts';

afterEach(() => vi.restoreAllMocks());

const POIID = 'S1F2-000158215131748';

function setup(channel: 'pos' | 'qr') {
  const sim = new AdyenSimulator();
  sim.addTerminal(POIID);
  const ctx: ConnectorContext = {
    credentials: { api_key: sim.apiKey, merchant_account: sim.merchantAccount, hmac_key: sim.hmacKey },
    configuration:
      channel === 'pos'
        ? { poiid: POIID, sale_id: 'till-1' }
        : { qr_ttl_seconds: 900, return_url: 'https://shop.example/return' },
    environment: 'test',
    fetch: sim.fetch,
  };
  return { sim, ctx, adapter: (channel === 'pos' ? adyenPosV1 : adyenQrV1).adapter };
}

const createInput = (minor: number, currency: string, paymentId = `pay_${crypto.randomUUID().slice(0, 20)}`) => ({
  paymentId,
  processorIdempotencyKey: paymentId,
  attemptNumber: 1,
  amount: { minor, currency },
  externalReference: `order-${paymentId}`,
});

const inbound = (rawBody: string): InboundNotification => ({
  headers: new Headers({ 'Content-Type': 'application/json' }),
  rawBody,
  url: 'https://api.example/v1/processor-notifications/pm',
});

describe('the Adyen versions', () => {
  it('are published for POS and QR in currencies the service takes', () => {
    expect([adyenPosV1.id, adyenQrV1.id]).toEqual(['cnv_adyen_pos_v1', 'cnv_adyen_qr_v1']);
    for (const c of [...ADYEN_POS_CURRENCIES, ...ADYEN_QR_CURRENCIES]) expect(SUPPORTED_CURRENCIES).toContain(c);
    expect(ADYEN_QR_CURRENCIES).toEqual(expect.arrayContaining(['BRL', 'SGD', 'THB', 'MYR']));
    // Adyen's minor units agree with ISO 4217 for every currency taken, except CLP (2 at Adyen, 0 in ISO).
    for (const c of SUPPORTED_CURRENCIES) expect(ADYEN_CURRENCY_DECIMALS[c]).toBeDefined();
  });

  it('validates credentials by the version’s schema: an HMAC key is 64 hex characters, nothing else is accepted', () => {
    const good = {
      api_key: 'AQEyhmfxKonIYxZGw0m/n3Q5qf3VaY9UCJ14XWZE03G',
      merchant_account: 'Shop_ECOM',
      hmac_key: 'A'.repeat(64),
    };
    expect(AdyenCredentials.safeParse(good).success).toBe(true);
    for (const bad of [
      { ...good, hmac_key: 'A'.repeat(63) },
      { ...good, hmac_key: 'G'.repeat(64) },
      { ...good, merchant_account: 'Shop ECOM' },
      { ...good, api_key: 'short' },
      { ...good, live_url_prefix: 'has space' },
      { ...good, cloud_device_region: 'mars' },
      { ...good, extra: 'x' },
    ])
      expect(AdyenCredentials.safeParse(bad).success).toBe(false);
  });

  it('refuses test credentials in live and live credentials in test, before any request', async () => {
    const { ctx, adapter } = setup('qr');
    const fetch = vi.fn(ctx.fetch);
    const live = await connectorError(
      adapter.createPayment({ ...ctx, fetch, environment: 'live' }, createInput(1000, 'BRL')),
    );
    expect([live.kind, live.processorCode]).toEqual(['configuration_invalid', 'adyen_environment_mismatch']);
    const credentials = { ...(ctx.credentials as object), live_url_prefix: '1797a841fbb37ca7-AdyenDemo' };
    const test = await connectorError(adapter.createPayment({ ...ctx, fetch, credentials }, createInput(1000, 'BRL')));
    expect(test.processorCode).toBe('adyen_environment_mismatch');
    expect(fetch).not.toHaveBeenCalled();
  });

  it('in live sends Checkout to the company’s prefix and the Cloud device API to its region', async () => {
    const urls: string[] = [];
    const fetch = vi.fn(async (input: RequestInfo | URL) => {
      urls.push(String(input instanceof Request ? input.url : input));
      return new Response(JSON.stringify({ deviceId: POIID, status: 'ONLINE' }), { status: 200 });
    });
    const { ctx } = setup('pos');
    const credentials = { ...(ctx.credentials as object), live_url_prefix: 'abc123-Shop', cloud_device_region: 'us' };
    await adyenPosV1.adapter.getTerminal!({ ...ctx, credentials, environment: 'live', fetch: fetch as never });
    await adyenQrV1.adapter
      .cancelPayment(
        { ...ctx, credentials, environment: 'live', fetch: fetch as never },
        { ...createInput(1000, 'BRL'), processorReference: 'PSP0000000000001', currentStatus: 'pending' },
      )
      .catch(() => undefined);
    expect(urls[0]).toBe(
      `https://device-api-live-us.adyen.com/v1/merchants/PaymentServiceECOM/devices/${POIID}/status`,
    );
    expect(urls[1]).toBe(
      'https://abc123-Shop-checkout-live.adyenpayments.com/checkout/v72/payments/PSP0000000000001/cancels',
    );
  });
});

describe('one amount conversion: ours (ISO 4217 minor units), Checkout (Adyen’s minor units), Terminal API (major units)', () => {
  it('zero decimals (JPY, KRW; CLP in ISO) and three (KWD, BHD, OMR) convert exactly both ways', () => {
    expect([decimalOf(1500, 0), decimalOf(1050, 2), decimalOf(1250, 3), decimalOf(5, 3)]).toEqual([
      '1500',
      '10.50',
      '1.250',
      '0.005',
    ]);
    expect(minorOfDecimal('1500', ADYEN_CURRENCY_DECIMALS.JPY!)).toBe(1500);
    expect(minorOfDecimal('1.250', ADYEN_CURRENCY_DECIMALS.KWD!)).toBe(1250);
    expect(minorOfDecimal('0.005', ADYEN_CURRENCY_DECIMALS.BHD!)).toBe(5);
    expect(minorOfDecimal('1.2505', ADYEN_CURRENCY_DECIMALS.OMR!)).toBeNull();
    expect(minorOfDecimal('1500.5', ADYEN_CURRENCY_DECIMALS.KRW!)).toBeNull();
    // A Terminal API amount (a JSON number) is read at the currency's precision, never rounded.
    expect(decimalOfTerminalAmount(1.25, 3)).toBe('1.250');
    expect(decimalOfTerminalAmount(1500, 0)).toBe('1500');
    expect(decimalOfTerminalAmount(0.1 + 0.2, 2)).toBeNull();
    expect(decimalOfTerminalAmount(10.505, 2)).toBeNull();
  });

  it('CLP: 1500 pesos are 1500 major units at the terminal and 150000 minor units at Checkout (Adyen gives CLP two decimals)', () => {
    expect(toTerminalAmount({ minor: 1500, currency: 'CLP' })).toBe(1500);
    expect(toCheckoutAmount({ minor: 1500, currency: 'CLP' })).toEqual({ currency: 'CLP', value: 150000 });
    expect(fromCheckoutAmount({ currency: 'CLP', value: 150000 })).toEqual({ minor: 1500, currency: 'CLP' });
    // Centavos Chile does not have are no amount of ours.
    expect(fromCheckoutAmount({ currency: 'CLP', value: 150050 })).toBeNull();
    expect(toTerminalAmount({ minor: 2056, currency: 'USD' })).toBe(20.56);
    expect(fromTerminalAmount(20.56, 'USD')).toEqual({ minor: 2056, currency: 'USD' });
    expect(fromTerminalAmount(20.565, 'USD')).toBeNull();
    expect(toCheckoutAmount({ minor: 2056, currency: 'MYR' })).toEqual({ currency: 'MYR', value: 2056 });
  });
});

describe('status tables', () => {
  it('Checkout result codes: only Authorised approves; anything unknown is pending', () => {
    expect(checkoutStatus('Authorised')).toBe('approved');
    expect(checkoutStatus('Refused')).toBe('declined');
    expect(checkoutStatus('PartiallyAuthorised')).toBe('pending');
    expect(checkoutStatus('SomethingNew')).toBe('pending');
    expect(checkoutStatus(undefined)).toBe('pending');
  });

  it('Terminal API: Success approves, a failure by its condition, an unknown outcome stays pending', () => {
    expect(terminalStatus({ Result: 'Success' })).toBe('approved');
    expect(terminalStatus({ Result: 'Failure', ErrorCondition: 'Refusal' })).toBe('declined');
    expect(terminalStatus({ Result: 'Failure', ErrorCondition: 'Aborted' })).toBe('canceled');
    expect(terminalStatus({ Result: 'Failure', ErrorCondition: 'UnreachableHost' })).toBe('pending');
    expect(terminalStatus({ Result: 'Partial' })).toBe('pending');
    expect(terminalStatus({ Result: 'Failure', ErrorCondition: 'Novel' })).toBe('pending');
  });

  it('the eventCode table covers every eventCode of the description (and, by its type, of the SDK)', () => {
    expect(Object.keys(EVENT_RULES)).toEqual(expect.arrayContaining(specEventCodes()));
  });
});

describe('HMAC of standard webhooks: the SDK’s own test vectors (adyen-node-api-library, hmacValidator.spec.ts)', () => {
  const key = 'DFB1EB5485895CFA84146406857104ABB4CBCABDC8AAF103A624C8F6A3EAAB00';
  const item = {
    pspReference: 'pspReference',
    originalReference: 'originalReference',
    merchantAccountCode: 'merchantAccount',
    merchantReference: 'reference',
    amount: { currency: 'EUR', value: 1000 },
    eventCode: 'REPORT_AVAILABLE',
    success: 'true' as const,
  };

  it('signs the documented fields in order, as the SDK does', async () => {
    expect(hmacPayload(item)).toBe(
      'pspReference:originalReference:merchantAccount:reference:1000:EUR:REPORT_AVAILABLE:true',
    );
    expect(await hmacSignature(key, hmacPayload(item))).toBe('ZNBPtI+oDyyRrLyD1XirkKnQgIAlFc07Vj27TeHsDRE=');
    expect(await hmacSignature(key, hmacPayload({ ...item, eventCode: 'EVENT' }))).toBe(
      'ipnxGCaUZ4l8TUW75a71/ghd2Fe5ffvX0pV4TLTntIc=',
    );
    const data =
      'countryCode:currencyCode:merchantAccount:merchantReference:paymentAmount:sessionValidity:skinCode:NL:EUR:MagentoMerchantTest2:TEST-PAYMENT-2017-02-01-14\\:02\\:05:199:2017-02-02T14\\:02\\:05+01\\:00:PKz2KML1';
    expect(await hmacSignature(key, data)).toBe('34oR8T1whkQWTv9P+SzKyp8zhusf9n0dpqrm9nsqSJs=');
  });

  it('fails closed: another key, an altered field, a malformed or missing signature', async () => {
    const payload = hmacPayload(item);
    expect(await verifyHmac(key, payload, 'ZNBPtI+oDyyRrLyD1XirkKnQgIAlFc07Vj27TeHsDRE=')).toBe(true);
    expect(await verifyHmac(key.replace('D', 'E'), payload, 'ZNBPtI+oDyyRrLyD1XirkKnQgIAlFc07Vj27TeHsDRE=')).toBe(
      false,
    );
    expect(await verifyHmac(key, payload.replace('1000', '1001'), 'ZNBPtI+oDyyRrLyD1XirkKnQgIAlFc07Vj27TeHsDRE=')).toBe(
      false,
    );
    expect(await verifyHmac(key, payload, 'notValidSign')).toBe(false);
    expect(await verifyHmac(key, payload, undefined)).toBe(false);
  });
});

describe('requests are Adyen’s own: each validates against its operation’s schema, and an altered one does not', () => {
  it('a QR payment, its cancel, reversal and refund (the simulator validates every request it receives)', async () => {
    const { sim, ctx, adapter } = setup('qr');
    for (const [currency, method] of [
      ['BRL', 'pix'],
      ['SGD', 'paynow'],
      ['THB', 'promptpay'],
      ['MYR', 'duitnow'],
    ] as const) {
      const input = createInput(2000, currency);
      const outcome = await adapter.createPayment(ctx, input);
      expect(outcome).toMatchObject({ status: 'pending', action: { type: 'display_qr', qrData: expect.any(String) } });
      expect((outcome.action as { expiresAt?: number }).expiresAt).toEqual(expect.any(Number));
      expect(sim.requests.at(-1)!.body).toMatchObject({
        paymentMethod: { type: method },
        amount: { currency, value: 2000 },
      });
    }
    const wechat = await adapter.createPayment(
      { ...ctx, configuration: { ...(ctx.configuration as object), qr_method: 'wechatpayQR' } },
      createInput(500, 'USD'),
    );
    expect(wechat.status).toBe('pending');
    const refused = await connectorError(adapter.createPayment(ctx, createInput(500, 'USD')));
    expect(refused.processorCode).toBe('adyen_qr_method_currency');

    const input = createInput(3000, 'BRL');
    const created = await adapter.createPayment(ctx, input);
    const lookup = { ...input, processorReference: created.processorReference };
    expect(await adapter.cancelPayment(ctx, { ...lookup, currentStatus: 'pending' })).toMatchObject({
      cancellation: 'requested',
      status: 'pending',
    });
    expect(await adapter.cancelPayment(ctx, { ...lookup, currentStatus: 'approved' })).toMatchObject({
      cancellation: 'requested',
      status: 'approved',
    });
    const refund = await adapter.refundPayment(ctx, {
      refundId: 'ref_1',
      processorIdempotencyKey: 'ref_1',
      attemptNumber: 1,
      paymentProcessorReference: created.processorReference!,
      amount: { minor: 1000, currency: 'BRL' },
    });
    expect(refund).toMatchObject({
      status: 'pending',
      processorReference: expect.any(String),
      processorStatus: 'received',
    });
    const paths = sim.requests
      .filter((r) => r.path.startsWith('/v72/'))
      .map((r) => r.path.replace(/[A-Z0-9]{16}/, '{psp}'));
    expect(new Set(paths)).toEqual(
      new Set([
        '/v72/payments',
        '/v72/payments/{psp}/cancels',
        '/v72/payments/{psp}/reversals',
        '/v72/payments/{psp}/refunds',
      ]),
    );
  });

  it('a renamed field or a lower-cased currency is caught by the schema', async () => {
    const { sim, ctx, adapter } = setup('pos');
    await adapter.createPayment(ctx, createInput(2000, 'USD'));
    const terminalPayment = sim.requests.find((r) => r.path.endsWith('/async'))!.body as any;
    expect(specProblems('terminal', 'TerminalAPIRequest', terminalPayment)).toEqual([]);
    const renamed = structuredClone(terminalPayment);
    const amounts = renamed.SaleToPOIRequest.PaymentRequest.PaymentTransaction.AmountsReq;
    amounts.RequestedAmt = amounts.RequestedAmount;
    delete amounts.RequestedAmount;
    expect(specProblems('terminal', 'TerminalAPIRequest', renamed)).not.toEqual([]);
    const lower = structuredClone(terminalPayment);
    lower.SaleToPOIRequest.PaymentRequest.PaymentTransaction.AmountsReq.Currency = 'usd';
    expect(specProblems('terminal', 'TerminalAPIRequest', lower)).not.toEqual([]);

    const qr = setup('qr');
    await qr.adapter.createPayment(qr.ctx, createInput(2000, 'BRL'));
    const payment = qr.sim.requests.find((r) => r.path === '/v72/payments')!.body as any;
    expect(specProblems('checkout', 'PaymentRequest', payment)).toEqual([]);
    const { merchantAccount, ...rest } = payment;
    const renamedPayment = { ...rest, merchantAccountCode: merchantAccount };
    expect(specProblems('checkout', 'PaymentRequest', renamedPayment)).not.toEqual([]);
    expect(
      specProblems('checkout', 'PaymentRequest', { ...payment, amount: { ...payment.amount, currency: 'brl' } }),
    ).not.toEqual([]);
    expect(
      specProblems('checkout', 'PaymentRequest', { ...payment, amount: { ...payment.amount, value: 20.5 } }),
    ).not.toEqual([]);
  });
});

/** The ErrorConditions that are the service's terminal errors, with the terminal status each says (ERROR_CONDITION_TERMINAL). */
const TERMINAL_REFUSALS = [
  ['Busy', 'busy'],
  ['DeviceOut', 'offline'],
  ['UnavailableDevice', 'offline'],
] as const;

describe('POS at the terminal', () => {
  it('approved at once, declined (ending 51), failed (54); the terminal’s own outcome read with TransactionStatus', async () => {
    const { ctx, adapter } = setup('pos');
    const approved = await adapter.createPayment(ctx, createInput(2500, 'USD'));
    expect(approved).toMatchObject({
      status: 'approved',
      action: { type: 'none' },
      settlement: null,
      settlementNullReason: 'not_reported',
    });
    expect((await adapter.createPayment(ctx, createInput(1051, 'USD'))).status).toBe('declined');
    expect((await adapter.createPayment(ctx, createInput(1054, 'USD'))).status).toBe('failed');
  });

  it('once the PaymentRequest is sent, a read that fails leaves the payment at the terminal; the next read settles it', async () => {
    const { sim, ctx, adapter } = setup('pos');
    sim.faults.syncFailsOnce = true;
    const input = createInput(2000, 'USD');
    expect(await adapter.createPayment(ctx, input)).toMatchObject({
      status: 'pending',
      action: { type: 'at_terminal' },
    });
    expect((await adapter.getPayment(ctx, { ...input, processorReference: input.paymentId })).status).toBe('approved');
    expect(sim.terminalPaymentCount(input.paymentId)).toBe(1);
  });

  it('an offline terminal refuses at once; a busy or out-of-service one answers the terminal errors', async () => {
    const { sim, ctx, adapter } = setup('pos');
    sim.offlineTerminals.add(POIID);
    const error = await connectorError(adapter.createPayment(ctx, createInput(2000, 'USD')));
    expect(error).toMatchObject({ kind: 'unavailable', terminal: 'offline' });
    expect(await adapter.getTerminal!(ctx)).toMatchObject({ processorId: POIID, status: 'offline' });
    sim.offlineTerminals.delete(POIID);
    expect(await adapter.getTerminal!(ctx)).toMatchObject({ status: 'online' });
  });

  it('a PaymentRequest refused as Busy, DeviceOut or UnavailableDevice is the terminal error, not a failed payment', async () => {
    const { sim, ctx, adapter } = setup('pos');
    for (const [condition, terminal] of TERMINAL_REFUSALS) {
      sim.faults.terminalError = condition;
      const error = await connectorError(adapter.createPayment(ctx, createInput(2000, 'USD')));
      expect(error).toMatchObject({ kind: 'unavailable', terminal, processorCode: condition });
    }
  });

  it('a refused request never started: the retry sends the next one, and reads and cancels find it past the refusals', async () => {
    const { sim, ctx, adapter } = setup('pos');
    sim.busyTerminals.add(POIID);
    sim.terminalMode = 'manual';
    const input = createInput(2000, 'USD');
    const lookup = { ...input, processorReference: input.paymentId };
    await connectorError(adapter.createPayment(ctx, input));
    // Nothing of it is at the terminal: a read says so, and a cancel has nothing to abort.
    expect((await connectorError(adapter.getPayment(ctx, lookup))).kind).toBe('not_found');
    sim.busyTerminals.delete(POIID);
    expect(await adapter.createPayment(ctx, { ...input, attemptNumber: 2 })).toMatchObject({
      status: 'pending',
      action: { type: 'at_terminal' },
    });
    expect(sim.terminalResults(input.paymentId)).toEqual(['Failure/Busy', 'Failure/InProgress']);
    expect(await adapter.getPayment(ctx, lookup)).toMatchObject({ status: 'pending', action: { type: 'at_terminal' } });
    expect(await adapter.cancelPayment(ctx, { ...lookup, currentStatus: 'pending' })).toMatchObject({
      cancellation: 'requested',
    });
    expect((await adapter.getPayment(ctx, lookup)).status).toBe('canceled');
    // A retry after that sends nothing more.
    expect((await adapter.createPayment(ctx, { ...input, attemptNumber: 3 })).status).toBe('canceled');
    expect(sim.terminalPaymentCount(input.paymentId)).toBe(2);
  });

  it('a payment its terminal refused again and again fails, as the last refusal says, and is sent no more', async () => {
    const { sim, ctx, adapter } = setup('pos');
    sim.busyTerminals.add(POIID);
    const input = createInput(2000, 'USD');
    for (let attempt = 1; attempt < TERMINAL_REQUESTS_PER_PAYMENT; attempt++)
      await connectorError(adapter.createPayment(ctx, { ...input, attemptNumber: attempt }));
    const failed = { status: 'failed', processorStatus: 'Failure/Busy' };
    const last = { ...input, attemptNumber: TERMINAL_REQUESTS_PER_PAYMENT };
    expect(await adapter.createPayment(ctx, last)).toMatchObject(failed);
    expect(await adapter.createPayment(ctx, { ...last, attemptNumber: last.attemptNumber + 1 })).toMatchObject(failed);
    expect(await adapter.getPayment(ctx, { ...input, processorReference: input.paymentId })).toMatchObject(failed);
    expect(sim.terminalPaymentCount(input.paymentId)).toBe(TERMINAL_REQUESTS_PER_PAYMENT);
  });

  it('a read the terminal answers Busy, DeviceOut or UnavailableDevice is the terminal error (refuseIfUnavailable)', async () => {
    const { sim, ctx, adapter } = setup('pos');
    const input = createInput(2000, 'USD');
    await adapter.createPayment(ctx, input);
    const lookup = { ...input, processorReference: input.paymentId };
    for (const [condition, terminal] of TERMINAL_REFUSALS) {
      sim.faults.statusError = condition;
      expect(await connectorError(adapter.getPayment(ctx, lookup))).toMatchObject({
        kind: 'unavailable',
        terminal,
        processorCode: condition,
      });
      expect(await connectorError(adapter.cancelPayment(ctx, { ...lookup, currentStatus: 'pending' }))).toMatchObject({
        terminal,
      });
    }
  });

  it('waits at the terminal; a cancel is an AbortRequest (requested), and the terminal’s event makes the read say canceled', async () => {
    const { sim, ctx, adapter } = setup('pos');
    sim.terminalMode = 'manual';
    const input = createInput(2000, 'USD');
    const waiting = await adapter.createPayment(ctx, input);
    expect(waiting).toMatchObject({
      status: 'pending',
      action: { type: 'at_terminal' },
      processorReference: input.paymentId,
    });
    const lookup = { ...input, processorReference: input.paymentId };
    const cancel = await adapter.cancelPayment(ctx, { ...lookup, currentStatus: 'pending' });
    expect(cancel).toMatchObject({ cancellation: 'requested', status: 'pending' });
    const event = await adapter.parseNotification(ctx, inbound(sim.terminalEvents.at(-1)!));
    expect(event).toMatchObject({
      resource: 'payment',
      processorReference: input.paymentId,
      status: null,
      trusted: false,
    });
    expect((await adapter.getPayment(ctx, lookup)).status).toBe('canceled');
  });

  it('a terminal error the terminal cannot settle stays pending, and a late AUTHORISATION approves it', async () => {
    const { sim, ctx, adapter } = setup('pos');
    sim.faults.terminalError = 'UnreachableHost';
    const input = createInput(2000, 'USD');
    expect((await adapter.createPayment(ctx, input)).status).toBe('pending');
    const late = await sim.authorisePos(input.paymentId);
    expect(await adapter.parseNotification(ctx, inbound(late.rawBody))).toMatchObject({
      resource: 'payment',
      processorReference: input.paymentId,
      processorPaymentId: sim.pspOfTerminalPayment(input.paymentId),
      status: 'approved',
      trusted: true,
    });
  });

  it('reports the PSP reference once the terminal took the card; a void and a refund address it with the terminal offline', async () => {
    const { sim, ctx, adapter } = setup('pos');
    const input = createInput(2000, 'USD');
    const approved = await adapter.createPayment(ctx, input);
    const psp = sim.pspOfTerminalPayment(input.paymentId);
    expect(approved).toMatchObject({
      status: 'approved',
      processorReference: input.paymentId,
      processorPaymentId: psp,
    });
    sim.offlineTerminals.add(POIID);
    const lookup = { ...input, processorReference: input.paymentId, processorPaymentId: psp };
    expect(await adapter.cancelPayment(ctx, { ...lookup, currentStatus: 'approved' })).toMatchObject({
      status: 'approved',
      cancellation: 'requested',
    });
    const refund = await adapter.refundPayment(ctx, {
      refundId: 'ref_1',
      processorIdempotencyKey: 'ref_1',
      attemptNumber: 1,
      paymentProcessorReference: input.paymentId,
      paymentProcessorPaymentId: psp,
      amount: { minor: 500, currency: 'USD' },
    });
    expect(refund.status).toBe('pending');
    expect(sim.requests.slice(-2).map((r) => r.path)).toEqual([
      `/v72/payments/${psp}/reversals`,
      `/v72/payments/${psp}/refunds`,
    ]);
    // Without it (a payment from before it was kept), the terminal is asked, and an offline one says so.
    const unknown = await connectorError(
      adapter.refundPayment(ctx, {
        refundId: 'ref_2',
        processorIdempotencyKey: 'ref_2',
        attemptNumber: 1,
        paymentProcessorReference: input.paymentId,
        amount: { minor: 500, currency: 'USD' },
      }),
    );
    expect(unknown).toMatchObject({ kind: 'unavailable', terminal: 'offline' });
  });
});

describe('standard webhooks', () => {
  it('a wrong HMAC, a batch, another merchant account or environment are refused (fail closed)', async () => {
    const { sim, ctx, adapter } = setup('qr');
    const created = await adapter.createPayment(ctx, createInput(2000, 'BRL'));
    const good = await sim.settleQr(created.processorReference!, 'paid');
    expect(await adapter.parseNotification(ctx, inbound(good.rawBody))).toMatchObject({
      status: 'approved',
      trusted: true,
    });
    const body = JSON.parse(good.rawBody);
    const variants = [
      (b: any) =>
        (b.notificationItems[0].NotificationRequestItem.additionalData.hmacSignature =
          'ZNBPtI+oDyyRrLyD1XirkKnQgIAlFc07Vj27TeHsDRE='),
      (b: any) => (b.notificationItems[0].NotificationRequestItem.amount.value += 1),
      (b: any) => (b.notificationItems[0].NotificationRequestItem.success = 'false'),
      (b: any) => delete b.notificationItems[0].NotificationRequestItem.additionalData,
      (b: any) => b.notificationItems.push(b.notificationItems[0]),
      (b: any) => (b.live = 'true'),
    ];
    for (const alter of variants) {
      const altered = structuredClone(body);
      alter(altered);
      const error = await connectorError(adapter.parseNotification(ctx, inbound(JSON.stringify(altered))));
      expect(error.kind).toBe('invalid_notification');
    }
    const other = await connectorError(
      adapter.parseNotification(
        { ...ctx, credentials: { ...(ctx.credentials as object), merchant_account: 'Other' } },
        inbound(good.rawBody),
      ),
    );
    expect(other.processorCode).toBe('adyen_merchant_account_mismatch');
  });

  it('refunds and their reversals; disputes in their two cycles; OFFER_CLOSED expires a QR', async () => {
    const { sim, ctx, adapter } = setup('qr');
    const created = await adapter.createPayment(ctx, createInput(2000, 'BRL'));
    const psp = created.processorReference!;
    await sim.settleQr(psp, 'paid');
    const refund = await adapter.refundPayment(ctx, {
      refundId: 'ref_2',
      processorIdempotencyKey: 'ref_2',
      attemptNumber: 1,
      paymentProcessorReference: psp,
      amount: { minor: 2000, currency: 'BRL' },
    });
    const news = async (delivery: { rawBody: string }) => adapter.parseNotification(ctx, inbound(delivery.rawBody));
    expect(await news(sim.lastDelivery('REFUND'))).toMatchObject({
      resource: 'refund',
      processorReference: refund.processorReference,
      status: 'approved',
    });
    expect(await news(await sim.failRefund(refund.processorReference!, 'REFUND_FAILED'))).toMatchObject({
      resource: 'refund',
      status: 'failed',
      failureReason: 'declined',
    });
    const chargeback = await news(await sim.disputeEvent(psp, 'CHARGEBACK'));
    expect(chargeback).toMatchObject({
      resource: 'payment',
      processorReference: psp,
      status: null,
      dispute: {
        processorDisputeId: psp,
        status: 'needs_response',
        reason: 'fraudulent',
        amount: { minor: 2000, currency: 'BRL' },
      },
    });
    expect(await news(await sim.disputeEvent(psp, 'SECOND_CHARGEBACK'))).toMatchObject({
      status: 'charged_back',
      dispute: { processorDisputeId: `${psp}:2`, status: 'lost' },
    });
    const other = await adapter.createPayment(ctx, createInput(2000, 'BRL'));
    expect(await news(await sim.paymentEvent(other.processorReference!, 'OFFER_CLOSED'))).toMatchObject({
      status: 'expired',
    });
    await expect(adapter.getPayment(ctx, { ...createInput(1, 'BRL'), processorReference: psp })).rejects.toMatchObject({
      kind: 'unavailable',
      processorCode: 'adyen_no_read',
    });
  });
});
