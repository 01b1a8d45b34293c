import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { EXPIRY_GRACE_MS } from '../../src/domain/ledger/index.ts';
import { expireQrPayments } from '../../src/jobs/expire-qr-payments.ts';
import { reconcile, RECONCILE_AFTER_MS } from '../../src/jobs/reconcile.ts';
import { runTerminalChecks } from '../../src/jobs/terminal-checks.ts';
import { call, createKey, expectError, seedSession, type Session } from '../helpers/api.ts';
import { depsOfPayment } from '../helpers/shards.ts';
import { ADYEN_CHECKOUT_ORIGIN, ADYEN_DEVICE_ORIGIN, AdyenSimulator, type SignedWebhook } from '../simulators/adyen.ts';

/**
 * Adyen end to end through the API: methods created with POST /v1/account/payment-methods, the Worker's outbound
 * fetch routed to the Adyen simulator, and Adyen's webhooks through the notification route. What the behaviour
 * suite does not show: the definitions GET /v1/connectors serves, credentials refused by the schema, a webhook
 * whose HMAC is wrong, a late AUTHORISATION after a terminal error, and what happens when news is late (no read
 * of a Checkout payment or refund exists: the payment and the refund wait, the reservation holds).
 */

const POIID = 'S1F2-000158215131748';
const sim = new AdyenSimulator();
sim.addTerminal(POIID);
let session: Session;
let apiKey: { id: string; secret: string };
let pos: string;
let qr: string;

const url = (input: RequestInfo | URL) =>
  typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;

beforeAll(async () => {
  vi.spyOn(globalThis, 'fetch').mockImplementation((input, init) => {
    const target = url(input);
    if (target.startsWith(`${ADYEN_CHECKOUT_ORIGIN}/`) || target.startsWith(`${ADYEN_DEVICE_ORIGIN}/`))
      return sim.fetch(input, init);
    return Promise.reject(new TypeError(`network access refused in tests: ${target}`));
  });
  session = await seedSession();
  apiKey = await createKey(session);
  pos = await addMethod('cnv_adyen_pos_v1', { poiid: POIID });
  qr = await addMethod('cnv_adyen_qr_v1', { return_url: 'https://shop.example/return' });
});

afterAll(() => vi.mocked(globalThis.fetch).mockRestore());

const credentials = () => ({ api_key: sim.apiKey, merchant_account: sim.merchantAccount, hmac_key: sim.hmacKey });

async function addMethod(versionId: string, configuration: Record<string, unknown>): Promise<string> {
  const res = await call('POST', '/v1/account/payment-methods', {
    token: session.accessToken,
    body: { connector_definition_version_id: versionId, name: 'Adyen', credentials: credentials(), configuration },
  });
  expect(res.status, res.text).toBe(201);
  const link = await call('POST', `/v1/account/payment-methods/${res.body.data.id}/api-keys`, {
    token: session.accessToken,
    body: { api_key_id: apiKey.id },
  });
  expect(link.status, link.text).toBe(201);
  return res.body.data.id;
}

const pay = (method: string, value: string, currency: string) =>
  call('POST', '/v1/payments', {
    token: apiKey.secret,
    headers: { 'Idempotency-Key': crypto.randomUUID() },
    body: { amount: { value, currency }, external_reference: `order-${crypto.randomUUID()}`, payment_method: method },
  });
const get = async (id: string) => (await call('GET', `/v1/payments/${id}`, { token: apiKey.secret })).body.data;
const notify = (method: string, delivery: { rawBody: string }) =>
  call('POST', `/v1/processor-notifications/${method}`, {
    rawBody: delivery.rawBody,
    headers: { 'Content-Type': 'application/json' },
  });

describe('GET /v1/connectors', () => {
  it('lists Adyen’s POS and QR definitions with their credential and configuration schemas', async () => {
    const res = await call('GET', '/v1/connectors?limit=100', { token: session.accessToken });
    expect(res.status, res.text).toBe(200);
    const adyen = (res.body.data as { id: string; provider: string; type: string; versions: any[] }[]).filter(
      (d) => d.provider === 'adyen',
    );
    expect(adyen.map((d) => [d.id, d.type])).toEqual([
      ['cnd_adyen_pos', 'pos'],
      ['cnd_adyen_qr', 'qr'],
    ]);
    for (const definition of adyen) {
      const [version] = definition.versions;
      expect(Object.keys(version.credentials_schema.properties).sort()).toEqual([
        'api_key',
        'cloud_device_region',
        'hmac_key',
        'live_url_prefix',
        'merchant_account',
      ]);
      expect(version.credentials_schema.required.sort()).toEqual(['api_key', 'hmac_key', 'merchant_account']);
    }
    expect(Object.keys(adyen[0]!.versions[0].configuration_schema.properties)).toEqual(['poiid', 'sale_id']);
    expect(Object.keys(adyen[1]!.versions[0].configuration_schema.properties)).toEqual([
      'qr_method',
      'qr_ttl_seconds',
      'return_url',
    ]);
    expect(adyen[1]!.versions[0].currencies).toEqual(['BRL', 'EUR', 'MYR', 'SGD', 'THB', 'USD']);
  });
});

describe('credentials', () => {
  it('a malformed HMAC key or merchant account is refused by the version’s schema, and never echoed', async () => {
    const hmac = `${'Z'.repeat(60)}abcd`;
    const res = await call('POST', '/v1/account/payment-methods', {
      token: session.accessToken,
      body: {
        connector_definition_version_id: 'cnv_adyen_qr_v1',
        name: 'Adyen',
        credentials: { ...credentials(), hmac_key: hmac, merchant_account: 'Shop ECOM!' },
      },
    });
    const error = expectError(res, 400, 'invalid_request');
    expect((error.details.fields as { field: string }[]).map((f) => f.field).sort()).toEqual([
      'credentials.hmac_key',
      'credentials.merchant_account',
    ]);
    expect(res.text).not.toContain(hmac);
    expect(res.text).not.toContain(sim.apiKey);
  });
});

describe('webhooks', () => {
  it('a wrong HMAC is refused (401, as every processor’s unverified news), and changes nothing', async () => {
    const created = await pay(qr, '12.00', 'BRL');
    expect(created.status, created.text).toBe(201);
    const payment = created.body.data;
    const real = await sim.settleQr(payment.processor_reference, 'paid');
    const forged = JSON.parse(real.rawBody);
    forged.notificationItems[0].NotificationRequestItem.additionalData.hmacSignature =
      'ZNBPtI+oDyyRrLyD1XirkKnQgIAlFc07Vj27TeHsDRE=';
    expectError(await notify(qr, { rawBody: JSON.stringify(forged) }), 401, 'unauthorized');
    const unsigned = JSON.parse(real.rawBody);
    delete unsigned.notificationItems[0].NotificationRequestItem.additionalData;
    expectError(await notify(qr, { rawBody: JSON.stringify(unsigned) }), 401, 'unauthorized');
    expect((await get(payment.id)).updated_at).toBe(payment.updated_at);
    expect((await get(payment.id)).status).toBe('pending');
    // The real one, then again: applied once.
    expect((await notify(qr, real)).body.data.outcome).toBe('applied');
    expect((await notify(qr, real)).body.data.outcome).toBe('duplicate');
    expect((await get(payment.id)).status).toBe('approved');
  });

  it('one webhook per method: news of the other method’s payment names none of this method’s (200, unknown_resource)', async () => {
    const created = await pay(qr, '14.00', 'BRL');
    const news = await sim.settleQr(created.body.data.processor_reference, 'paid');
    const atPos = await notify(pos, news);
    expect(atPos.status, atPos.text).toBe(200);
    expect(atPos.body.data.outcome).toBe('unknown_resource');
    expect((await get(created.body.data.id)).status).toBe('pending');
  });

  it('a terminal error the terminal cannot settle leaves the payment pending; a late AUTHORISATION approves it', async () => {
    sim.faults.terminalError = 'UnreachableHost';
    try {
      const created = await pay(pos, '31.00', 'USD');
      expect(created.status, created.text).toBe(201);
      expect(created.body.data.status).toBe('pending');
      const late = await sim.authorisePos(created.body.data.id);
      expect((await notify(pos, late)).status).toBe(200);
      expect(await get(created.body.data.id)).toMatchObject({ status: 'approved', settlement: null });
    } finally {
      sim.faults.terminalError = undefined;
    }
  });

  it('a Terminal API event notification is unsigned news: answered 200, the terminal read instead', async () => {
    sim.terminalMode = 'manual';
    try {
      const created = await pay(pos, '32.00', 'USD');
      expect(created.body.data).toMatchObject({ status: 'pending', action: { type: 'at_terminal' } });
      sim.customerPays(created.body.data.id);
      const event = JSON.parse(sim.terminalEvents.at(-1)!);
      // What the event says is not believed: a forged "Success" about a payment still at the terminal changes nothing.
      const res = await notify(pos, { rawBody: JSON.stringify(event) });
      expect(res.status, res.text).toBe(200);
      expect((await get(created.body.data.id)).status).toBe('approved');
    } finally {
      sim.terminalMode = 'auto';
    }
  });
});

describe('POS refunds and voids address the PSP reference kept with the payment, not the terminal', () => {
  const refund = (paymentId: string, value: string) =>
    call('POST', `/v1/payments/${paymentId}/refunds`, {
      token: apiKey.secret,
      headers: { 'Idempotency-Key': crypto.randomUUID() },
      body: { amount: { value, currency: 'USD' } },
    });
  const refundsSentTo = (psp: string) => sim.requests.filter((r) => r.path === `/v72/payments/${psp}/refunds`);

  it('a refund with the terminal offline: the PSP reference the create’s read reported is used', async () => {
    const created = await pay(pos, '41.00', 'USD');
    expect(created.body.data.status, created.text).toBe('approved');
    const psp = sim.pspOfTerminalPayment(created.body.data.id);
    sim.offlineTerminals.add(POIID);
    try {
      const res = await refund(created.body.data.id, '15.00');
      expect(res.status, res.text).toBe(201);
      expect(res.body.data.status).toBe('pending');
      expect(refundsSentTo(psp)).toHaveLength(1);
      expect((await notify(pos, sim.lastDelivery('REFUND'))).body.data.outcome).toBe('applied');
      expect((await get(created.body.data.id)).status).toBe('partially_refunded');
    } finally {
      sim.offlineTerminals.delete(POIID);
    }
  });

  it('a refund after the terminal forgot the payment: the PSP reference of its AUTHORISATION webhook is used', async () => {
    sim.terminalMode = 'manual';
    let id: string;
    try {
      const created = await pay(pos, '42.00', 'USD');
      expect(created.body.data).toMatchObject({ status: 'pending', action: { type: 'at_terminal' } });
      id = created.body.data.id;
      sim.customerPays(id);
    } finally {
      sim.terminalMode = 'auto';
    }
    // Adyen's signed news approves it; nothing reads the terminal meanwhile.
    expect((await notify(pos, await sim.authorisePos(id))).body.data.outcome).toBe('applied');
    sim.forgetTerminalTransactions();
    const res = await refund(id, '42.00');
    expect(res.status, res.text).toBe(201);
    expect(res.body.data.status).toBe('pending');
    expect(refundsSentTo(sim.pspOfTerminalPayment(id))).toHaveLength(1);
  });
});

describe('a busy terminal', () => {
  it('refuses a payment at once (409 terminal_unavailable, busy); once free, the same key sends it again and it is approved', async () => {
    const key = crypto.randomUUID();
    const body = {
      amount: { value: '46.00', currency: 'USD' },
      external_reference: `order-${key}`,
      payment_method: pos,
    };
    const send = () =>
      call('POST', '/v1/payments', { token: apiKey.secret, headers: { 'Idempotency-Key': key }, body });
    sim.busyTerminals.add(POIID);
    try {
      const refused = expectError(await send(), 409, 'terminal_unavailable');
      expect(refused.details).toMatchObject({ terminal_status: 'busy', processor_code: 'Busy' });
      // Still busy: refused again, by a request of its own (a ServiceID is used once).
      expectError(await send(), 409, 'terminal_unavailable');
    } finally {
      sim.busyTerminals.delete(POIID);
    }
    const paid = await send();
    expect(paid.status, paid.text).toBe(201);
    expect(paid.body.data.status).toBe('approved');
    expect(sim.terminalResults(paid.body.data.id)).toEqual(['Failure/Busy', 'Failure/Busy', 'Success']);
    // Its reads find the request the terminal took, past those it refused.
    await reconcile(await depsOfPayment(paid.body.data.id), Date.now() + RECONCILE_AFTER_MS + 60_000);
    expect((await get(paid.body.data.id)).status).toBe('approved');
  });
});

describe('a terminal given per payment (`configuration.poiid`) is the one every later call addresses', () => {
  const OTHER_POIID = 'V400m-346403161';
  sim.addTerminal(OTHER_POIID);
  const payAt = (method: string, value: string, poiid: string) =>
    call('POST', '/v1/payments', {
      token: apiKey.secret,
      headers: { 'Idempotency-Key': crypto.randomUUID() },
      body: {
        amount: { value, currency: 'USD' },
        external_reference: `order-${crypto.randomUUID()}`,
        payment_method: method,
        configuration: { poiid },
      },
    });
  const sentTo = (poiid: string, endpoint: 'async' | 'sync') =>
    sim.requests.filter((r) => r.path.endsWith(`/devices/${poiid}/${endpoint}`));
  const waiting = async <T>(fn: () => Promise<T>): Promise<T> => {
    sim.terminalMode = 'manual';
    try {
      return await fn();
    } finally {
      sim.terminalMode = 'auto';
    }
  };

  it('a method without a terminal: the cancel aborts at the payment’s terminal (202)', async () => {
    const bare = await addMethod('cnv_adyen_pos_v1', {});
    const created = await waiting(() => payAt(bare, '43.00', OTHER_POIID));
    expect(created.body.data, created.text).toMatchObject({ status: 'pending', action: { type: 'at_terminal' } });
    const aborts = () =>
      sentTo(OTHER_POIID, 'async').filter((r) =>
        Object.hasOwn((r.body as { SaleToPOIRequest: object }).SaleToPOIRequest, 'AbortRequest'),
      );
    const before = aborts().length;
    const cancel = await call('POST', `/v1/payments/${created.body.data.id}/cancel`, {
      token: apiKey.secret,
      headers: { 'Idempotency-Key': crypto.randomUUID() },
    });
    expect(cancel.status, cancel.text).toBe(202);
    expect(aborts()).toHaveLength(before + 1);
    // The terminal's event makes the service read the payment at that terminal: canceled.
    expect((await notify(bare, { rawBody: sim.terminalEvents.at(-1)! })).status).toBe(200);
    expect((await get(created.body.data.id)).status).toBe('canceled');
  });

  it('a method whose terminal is another: the terminal checks read the payment at its own terminal', async () => {
    const created = await waiting(() => payAt(pos, '44.00', OTHER_POIID));
    const id = created.body.data.id;
    expect(created.body.data, created.text).toMatchObject({ status: 'pending', action: { type: 'at_terminal' } });
    sim.customerPays(id);
    const reads = sentTo(OTHER_POIID, 'sync').length;
    await runTerminalChecks(await depsOfPayment(id), Date.now() + 3_600_000);
    expect(sentTo(OTHER_POIID, 'sync').length).toBeGreaterThan(reads);
    expect((await get(id)).status).toBe('approved');
  });

  it('a method moved to another terminal since: its waiting payment is still aborted at the terminal that has it', async () => {
    const moving = await addMethod('cnv_adyen_pos_v1', { poiid: POIID, sale_id: 'till-7' });
    const created = await waiting(() => pay(moving, '45.00', 'USD'));
    expect(created.body.data, created.text).toMatchObject({ status: 'pending', action: { type: 'at_terminal' } });
    const moved = await call('PATCH', `/v1/account/payment-methods/${moving}`, {
      token: session.accessToken,
      body: { configuration: { poiid: OTHER_POIID, sale_id: 'till-8' } },
    });
    expect(moved.status, moved.text).toBe(200);
    const cancel = await call('POST', `/v1/payments/${created.body.data.id}/cancel`, {
      token: apiKey.secret,
      headers: { 'Idempotency-Key': crypto.randomUUID() },
    });
    expect(cancel.status, cancel.text).toBe(202);
    const abort = sim.requests.at(-1)!;
    expect(abort.path).toContain(`/devices/${POIID}/async`);
    expect((abort.body as any).SaleToPOIRequest.AbortRequest.MessageReference).toMatchObject({
      POIID,
      SaleID: 'till-7',
    });
    expect((await notify(moving, { rawBody: sim.terminalEvents.at(-1)! })).status).toBe(200);
    expect((await get(created.body.data.id)).status).toBe('canceled');
  });
});

describe('when news is late (Checkout has no read)', () => {
  async function approvedQr(value: string): Promise<{ id: string; processor_reference: string }> {
    const created = await pay(qr, value, 'BRL');
    const payment = created.body.data;
    expect((await notify(qr, await sim.settleQr(payment.processor_reference, 'paid'))).status).toBe(200);
    return payment;
  }

  it('a refund without its REFUND news stays pending through reconciliation, and its reservation holds', async () => {
    const payment = await approvedQr('50.00');
    const refund = await call('POST', `/v1/payments/${payment.id}/refunds`, {
      token: apiKey.secret,
      headers: { 'Idempotency-Key': crypto.randomUUID() },
      body: { amount: { value: '50.00', currency: 'BRL' } },
    });
    expect(refund.status, refund.text).toBe(201);
    expect(refund.body.data.status).toBe('pending');
    await reconcile(await depsOfPayment(payment.id), Date.now() + RECONCILE_AFTER_MS + 60_000);
    const read = await call('GET', `/v1/payments/${payment.id}/refunds/${refund.body.data.id}`, {
      token: apiKey.secret,
    });
    expect(read.body.data.status).toBe('pending');
    const more = await call('POST', `/v1/payments/${payment.id}/refunds`, {
      token: apiKey.secret,
      headers: { 'Idempotency-Key': crypto.randomUUID() },
      body: { amount: { value: '0.01', currency: 'BRL' } },
    });
    expectError(more, 422, 'refund_exceeds_balance');
  });

  const cancelsOf = (psp: string) => sim.requests.filter((r) => r.path === `/v72/payments/${psp}/cancels`);
  /** Runs the expiry job `by` ms after the payment's QR expires (as its create answer says). */
  const pastExpiry = async (payment: { id: string; action: { expires_at: string } }, by: number) =>
    expireQrPayments(await depsOfPayment(payment.id), Date.parse(payment.action.expires_at) + by, 10_000);

  it('a QR past its expiry: the expiry job asks Adyen to cancel it (accepted, not done), it waits for the news, and its CANCELLATION expires it', async () => {
    const created = await pay(qr, '13.00', 'BRL');
    const payment = created.body.data;
    await pastExpiry(payment, 1_000);
    expect(cancelsOf(payment.processor_reference)).toHaveLength(1);
    // No read tells whether the buyer paid meanwhile: the payment stays pending until Adyen's news.
    const waiting = await get(payment.id);
    expect(waiting.status).toBe('pending');
    expect(waiting.cancel_requested_at).not.toBeNull();
    const news: SignedWebhook = sim.lastDelivery('CANCELLATION');
    expect((await notify(qr, news)).status).toBe(200);
    // The service's own withdrawal at the QR's expiry: expired, as every processor's QR nobody paid in time.
    expect((await get(payment.id)).status).toBe('expired');
    const events = await call('GET', `/v1/events?payment_id=${payment.id}`, { token: apiKey.secret });
    expect(events.body.data.map((event: { type: string }) => event.type)).toContain('payment.expired');
  });

  it('a QR whose CANCELLATION never comes: pending, Adyen asked no more, and an AUTHORISATION however late is applied', async () => {
    const created = await pay(qr, '17.00', 'BRL');
    const payment = created.body.data;
    await pastExpiry(payment, 1_000);
    await pastExpiry(payment, EXPIRY_GRACE_MS + 1_000);
    await pastExpiry(payment, 30 * EXPIRY_GRACE_MS);
    expect(cancelsOf(payment.processor_reference)).toHaveLength(1);
    expect((await get(payment.id)).status).toBe('pending');
    // The buyer paid before Adyen withdrew the code: its news is the truth, a day later too.
    expect((await notify(qr, await sim.settleQr(payment.processor_reference, 'paid'))).status).toBe(200);
    const paid = await get(payment.id);
    expect(paid.status).toBe('approved');
    expect(paid.cancel_requested_at).toBeNull();
  });
});
