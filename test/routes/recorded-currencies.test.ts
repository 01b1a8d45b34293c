import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_SIGNATURE_HEADER, signSandboxNotification } from '../../src/connectors/sandbox/index.ts';
import { newId } from '../../src/lib/ids.ts';
import { type ApiResponse, call } from '../helpers/api.ts';
import { recordedLogLines } from '../helpers/leak-scan.ts';
import { type Merchant, paymentBody, setupMerchant } from '../helpers/merchant.ts';
import { installStripe, type StripeMerchant, stripeMerchant } from '../helpers/stripe-merchant.ts';
import { StripeSimulator, simFee } from '../simulators/stripe.ts';

/**
 * Amounts the service only records, in the currency the processor reports them in (docs/states.md, "Settlement" and
 * "Disputes"): any of ISO 4217, each in its own minor digits; one the service cannot show is recorded as such, and
 * the payment, its lists and its events read as ever.
 */

let m: Merchant;
const sim = new StripeSimulator();
let stripe: StripeMerchant;
let uninstall: () => void;

beforeAll(async () => {
  uninstall = installStripe(sim);
  m = await setupMerchant();
  stripe = await stripeMerchant(sim, 'tmr_CurrencyCounter1');
});

afterAll(() => uninstall());

async function pendingQr(value: string) {
  const res = await m.pay(paymentBody(m.qr.id, value));
  expect(res.status, res.text).toBe(201);
  return res.body.data as { id: string; processor_reference: string };
}

/**
 * A pending QR payment of `value` USD, then signed news that the sandbox collected it, stating `collected` (the
 * sandbox is stateless: its news says what it collected, and its fee is reckoned on that, in that currency).
 */
async function collectedIn(value: string, collected: { minor: number; currency: string }) {
  const payment = await pendingQr(value);
  const res = await sandboxNews({
    resource: 'payment',
    reference: payment.processor_reference,
    status: 'approved',
    amount: collected,
  });
  expect(res.status, res.text).toBe(200);
  expect(res.body.data.outcome).toBe('applied');
  return payment;
}

/** Sandbox news signed with the method's own key, as the sandbox (docs/sandbox.md) signs it. */
async function sandboxNews(body: Record<string, unknown>, method = m.qr) {
  const raw = JSON.stringify({ id: newId('sbxevt'), ...body });
  return call('POST', `/v1/processor-notifications/${method.id}`, {
    rawBody: raw,
    headers: {
      'Content-Type': 'application/json',
      [SANDBOX_SIGNATURE_HEADER]: await signSandboxNotification({ api_key: method.apiKey }, raw),
    },
  });
}

/** Every read that shows the payment: itself, the list, its events (with the payment as each event shows it). */
async function readsOf(paymentId: string, token: string) {
  const reads: ApiResponse[] = [
    await call('GET', `/v1/payments/${paymentId}`, { token }),
    await call('GET', '/v1/payments?limit=100', { token }),
    await call('GET', `/v1/payments/${paymentId}/events`, { token }),
    await call('GET', `/v1/payments/${paymentId}/disputes`, { token }),
  ];
  for (const read of reads) expect(read.status, read.text).toBe(200);
  const [one, list, events] = reads as [ApiResponse, ApiResponse, ApiResponse];
  expect(list.body.data.find((p: { id: string }) => p.id === paymentId)).toEqual(one.body.data);
  return { payment: one.body.data, events: events.body.data, disputes: reads[3]!.body.data };
}

describe('a settlement in the processor’s currency', () => {
  it('JPY, reported by signed sandbox news of a USD payment: shown in yen, with no decimals', async () => {
    // The sandbox's fee: 2.9 % (72.5, rounded half up) + 0.30 yen (nothing: yen has no minor unit).
    const payment = await collectedIn('25.00', { minor: 2500, currency: 'JPY' });
    const { payment: read, events } = await readsOf(payment.id, m.key.secret);
    const settlement = {
      fee: { value: '73', currency: 'JPY' },
      net: { value: '2427', currency: 'JPY' },
      available_on: expect.any(String),
    };
    expect(read).toMatchObject({ status: 'approved', amount: { value: '25.00', currency: 'USD' }, settlement });
    expect(read.settlement_null_reason).toBeNull();
    // Newest first; the event shows the payment as the news left it.
    expect(events.map((e: { type: string }) => e.type)).toEqual(['payment.approved', 'payment.pending']);
    expect(events[0].data.payment.settlement).toEqual(read.settlement);
  });

  it('JPY, booked by a Stripe account that settles in yen: converted by Stripe, shown as Stripe booked it', async () => {
    sim.settlementCurrency = { currency: 'jpy', rate: 1.5 };
    try {
      const paid = await stripe.pay('25.00');
      expect(paid.status, paid.text).toBe(201);
      const { payment } = await readsOf(paid.body.data.id, stripe.apiKey.secret);
      expect(payment).toMatchObject({
        status: 'approved',
        settlement: {
          fee: { value: String(simFee(3750)), currency: 'JPY' },
          net: { value: String(3750 - simFee(3750)), currency: 'JPY' },
        },
        settlement_null_reason: null,
      });
    } finally {
      sim.settlementCurrency = null;
    }
  });

  it('KWD, three decimals; ISK, whose Stripe unit is not ISO’s', async () => {
    try {
      sim.settlementCurrency = { currency: 'kwd', rate: 0.31 };
      const kwd = await stripe.pay('100.00');
      expect((await stripe.get(kwd.body.data.id)).settlement).toMatchObject({
        fee: { value: (simFee(3100) / 1000).toFixed(3), currency: 'KWD' },
        net: { value: ((3100 - simFee(3100)) / 1000).toFixed(3), currency: 'KWD' },
      });
      // 1,380.00 ISK at Stripe (two decimals) is 1380 in ISO 4217's unit; the simulator's fee leaves a fraction of
      // a króna, which no ISO amount holds: recorded as such rather than rounded.
      sim.settlementCurrency = { currency: 'isk', rate: 138 };
      const isk = await stripe.get((await stripe.pay('10.00')).body.data.id);
      expect(isk).toMatchObject({ settlement: null, settlement_null_reason: 'unrepresentable_amount' });
    } finally {
      sim.settlementCurrency = null;
    }
  });

  it('a currency outside ISO 4217: recorded as unrepresentable, the payment read as ever', async () => {
    const payment = await collectedIn('26.00', { minor: 2600, currency: 'XYZ' });
    const { payment: read, events } = await readsOf(payment.id, m.key.secret);
    expect(read).toMatchObject({
      status: 'approved',
      settlement: null,
      settlement_null_reason: 'unrepresentable_amount',
    });
    expect(events[0]).toMatchObject({
      type: 'payment.approved',
      data: { payment: { settlement: null, settlement_null_reason: 'unrepresentable_amount' } },
    });
  });
});

describe('a dispute in the processor’s currency', () => {
  const dispute = (currency: string, minor: number) => ({
    id: `sbx_dp_${crypto.randomUUID().replaceAll('-', '').slice(0, 24)}`,
    status: 'needs_response',
    amount: { minor, currency },
    reason: 'fraudulent',
    evidence_due_by: Date.now() + 7 * 86_400_000,
    funds_withdrawn_at: Date.now(),
    funds_reinstated_at: null,
  });

  it('JPY: recorded and shown in yen', async () => {
    const paid = await m.pay(paymentBody(m.pos.id, '25.00'));
    expect(paid.body.data.status).toBe('approved');
    const res = await sandboxNews(
      { resource: 'dispute', reference: paid.body.data.processor_reference, dispute: dispute('JPY', 3750) },
      m.pos,
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.outcome).toBe('applied');
    const { disputes, events } = await readsOf(paid.body.data.id, m.key.secret);
    expect(disputes).toMatchObject([{ status: 'needs_response', amount: { value: '3750', currency: 'JPY' } }]);
    expect(events[0]).toMatchObject({ type: 'dispute.created', data: { dispute: { amount: disputes[0].amount } } });
  });

  it('a currency outside ISO 4217: not recorded (its amount could not be shown), said so in the log', async () => {
    const paid = await m.pay(paymentBody(m.pos.id, '27.00'));
    const news = dispute('XYZ', 2700);
    const res = await sandboxNews(
      { resource: 'dispute', reference: paid.body.data.processor_reference, dispute: news },
      m.pos,
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.outcome).toBe('ignored');
    const { disputes, payment } = await readsOf(paid.body.data.id, m.key.secret);
    expect(disputes).toEqual([]);
    expect(payment.status).toBe('approved');
    const logged = recordedLogLines()
      .filter((line) => line.includes('dispute_news_unrepresentable'))
      .map((line) => JSON.parse(line));
    expect(logged).toContainEqual(
      expect.objectContaining({
        payment_id: paid.body.data.id,
        processor_dispute_id: news.id,
        reason: 'unrepresentable_amount',
      }),
    );
  });
});
