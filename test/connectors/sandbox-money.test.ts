import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  closeSandboxDispute,
  openSandboxDispute,
  SANDBOX_REFUND_REVERSAL_WINDOW_MS,
  SANDBOX_SIGNATURE_HEADER,
  sandboxDisputeNews,
  sandboxPosV1,
  sandboxQrV1,
  sandboxRefundFailedNews,
  signSandboxNotification,
} from '../../src/connectors/sandbox/index.ts';
import { sandboxSettlement, SANDBOX_FEE } from '../../src/connectors/sandbox/transformers.ts';
import type { ConnectorContext, CreatePaymentInput, ProcessorNotification } from '../../src/connectors/types.ts';
import { applyDisputeNews } from '../../src/domain/disputes.ts';
import { SUPPORTED_CURRENCIES } from '../../src/domain/money.ts';
import { connectorError } from '../helpers/connectors.ts';

/** The sandbox's money after the sale: its fixed fee, refunds that fail later, and disputes as news. */

const API_KEY = `sbx-${crypto.randomUUID()}`;
const DAY = 86_400_000;

/** The dispute a payment's news carries (the notification type says only payment news can). */
function disputeOf(news: ProcessorNotification) {
  if (news.resource !== 'payment' || !news.dispute) throw new Error('no dispute in this news');
  return news.dispute;
}

function ctx(): ConnectorContext<{ api_key: string }, Record<string, unknown>> {
  return { credentials: { api_key: API_KEY }, configuration: {}, environment: 'test', fetch: globalThis.fetch };
}

const paymentInput = (minor: number, currency = 'USD'): CreatePaymentInput => ({
  paymentId: `pay_${crypto.randomUUID()}`,
  processorIdempotencyKey: crypto.randomUUID(),
  attemptNumber: 1,
  amount: { minor, currency },
  externalReference: `order-${crypto.randomUUID()}`,
});

async function signed(body: unknown) {
  const rawBody = JSON.stringify(body);
  return {
    headers: new Headers({ [SANDBOX_SIGNATURE_HEADER]: await signSandboxNotification({ api_key: API_KEY }, rawBody) }),
    rawBody,
    url: 'https://example.com/v1/processor-notifications/pm_x',
  };
}

describe('sandbox fee', () => {
  it('is 2.9 % rounded half up plus 0.30, fee + net = the amount, available two days after the day, 00:00 UTC', () => {
    const now = Date.UTC(2025, 0, 15, 18, 30);
    expect(sandboxSettlement({ minor: 10_000, currency: 'USD' }, now)).toEqual({
      fee: { minor: 320, currency: 'USD' },
      net: { minor: 9_680, currency: 'USD' },
      availableOn: Date.UTC(2025, 0, 17),
    });
    // 2.9 % of 1050 is 30.45 → 30; of 1052 is 30.508 → 31.
    expect(sandboxSettlement({ minor: 1_050, currency: 'USD' }, now).fee.minor).toBe(60);
    expect(sandboxSettlement({ minor: 1_052, currency: 'USD' }, now).fee.minor).toBe(61);
    // CLP has no minor unit: 0.30 rounds to nothing.
    expect(sandboxSettlement({ minor: 10_000, currency: 'CLP' }, now).fee).toEqual({ minor: 290, currency: 'CLP' });
    // Never more than the amount.
    expect(sandboxSettlement({ minor: 1, currency: 'USD' }, now)).toMatchObject({
      fee: { minor: 1 },
      net: { minor: 0 },
    });
    expect(SANDBOX_FEE).toEqual({ basisPoints: 290, fixedMajor: 0.3, availableAfterDays: 2 });
  });

  it('fee + net = amount and 0 ≤ fee ≤ amount, for every amount and currency', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 999_999_999_999 }),
        fc.constantFrom(...SUPPORTED_CURRENCIES),
        fc.integer({ min: 0, max: 4_000_000_000_000 }),
        (minor, currency, now) => {
          const s = sandboxSettlement({ minor, currency }, now);
          expect(s.fee.minor + s.net.minor).toBe(minor);
          expect(s.fee.minor).toBeGreaterThanOrEqual(0);
          expect(s.fee.minor).toBeLessThanOrEqual(minor);
          expect(Number.isSafeInteger(s.fee.minor)).toBe(true);
          expect(s.availableOn % DAY).toBe(0);
          expect(s.availableOn).toBeGreaterThan(now + DAY);
          expect(s.availableOn).toBeLessThanOrEqual(now + 2 * DAY);
        },
      ),
    );
  });

  it('approved payments carry it, from the answer and the lookup; payments not collected carry none', async () => {
    const approved = await sandboxPosV1.adapter.createPayment(ctx(), paymentInput(10_000));
    expect(approved).toMatchObject({
      status: 'approved',
      settlement: { fee: { minor: 320, currency: 'USD' }, net: { minor: 9_680, currency: 'USD' } },
    });
    expect(approved.settlementNullReason).toBeUndefined();
    const read = await sandboxQrV1.adapter.getPayment(ctx(), {
      paymentId: 'pay_x',
      processorReference: 'sbx_pay_x',
      processorIdempotencyKey: 'k',
      amount: { minor: 10_000, currency: 'USD' },
    });
    // A QR payment reads as pending until the buyer pays (the test helper's news): nothing settled yet.
    expect(read.status).toBe('pending');
    expect(read).not.toHaveProperty('settlement');
    for (const minor of [1_051, 1_054]) {
      const outcome = await sandboxPosV1.adapter.createPayment(ctx(), paymentInput(minor));
      expect(outcome).not.toHaveProperty('settlement');
    }
  });

  it('an approved refund’s settlement is the amount leaving the balance, the fee kept; a declined one has none', async () => {
    const refund = (minor: number) =>
      sandboxPosV1.adapter.refundPayment(ctx(), {
        refundId: 're_x',
        processorIdempotencyKey: crypto.randomUUID(),
        attemptNumber: 1,
        paymentProcessorReference: 'sbx_pay_x',
        amount: { minor, currency: 'EUR' },
      });
    expect(await refund(3_000)).toMatchObject({
      status: 'approved',
      settlement: { fee: { minor: 0, currency: 'EUR' }, net: { minor: -3_000, currency: 'EUR' } },
    });
    const declined = await refund(1_061);
    expect(declined).toMatchObject({ status: 'declined', failureReason: 'declined' });
    expect(declined).not.toHaveProperty('settlement');
  });
});

describe('sandbox refund reversals', () => {
  const lookup = (minor: number) => ({
    refundId: 're_x',
    amount: { minor, currency: 'USD' },
    processorReference: 'sbx_ref_x',
    processorIdempotencyKey: 'k',
    paymentProcessorReference: 'sbx_pay_x',
  });

  it('a refund ending 62 is approved when made and read back failed (expired_or_canceled_card), for reconciliation', async () => {
    const made = await sandboxPosV1.adapter.refundPayment(ctx(), {
      ...lookup(1_062),
      attemptNumber: 1,
      processorIdempotencyKey: crypto.randomUUID(),
    });
    expect(made.status).toBe('approved');
    const read = await sandboxPosV1.adapter.getRefund(ctx(), lookup(1_062));
    expect(read).toMatchObject({ status: 'failed', failureReason: 'expired_or_canceled_card' });
    expect(read).not.toHaveProperty('settlement');
    expect((await sandboxPosV1.adapter.getRefund(ctx(), lookup(1_000))).failureReason).toBeUndefined();
  });

  it('the fail helper’s news: a signed refund failure with its reason, trusted', async () => {
    const body = sandboxRefundFailedNews('sbx_ref_abc', 'lost_or_stolen_card');
    expect(await sandboxQrV1.adapter.parseNotification(ctx(), await signed(body))).toEqual({
      eventId: body.id,
      resource: 'refund',
      processorReference: 'sbx_ref_abc',
      status: 'failed',
      failureReason: 'lost_or_stolen_card',
      trusted: true,
    });
    // The default reason is the issue's: the card expired.
    expect(sandboxRefundFailedNews('sbx_ref_abc')).toMatchObject({ failure_reason: 'expired_or_canceled_card' });
  });

  it('refuses a failure reason outside the set; ignores one on news that is no failure', async () => {
    const bad = { ...sandboxRefundFailedNews('sbx_ref_abc'), failure_reason: 'card_declined' };
    expect((await connectorError(sandboxPosV1.adapter.parseNotification(ctx(), await signed(bad)))).kind).toBe(
      'invalid_notification',
    );
    const approved = {
      id: 'evt_1',
      resource: 'refund',
      reference: 'sbx_ref_1',
      status: 'approved',
      failure_reason: 'unknown',
    };
    const parsed = await sandboxPosV1.adapter.parseNotification(ctx(), await signed(approved));
    expect(parsed).not.toHaveProperty('failureReason');
  });

  it('declares the reversal window: 30 days, as Stripe documents', () => {
    expect(SANDBOX_REFUND_REVERSAL_WINDOW_MS).toBe(30 * DAY);
    expect(sandboxPosV1.refundReversalWindowMs).toBe(30 * DAY);
    expect(sandboxQrV1.refundReversalWindowMs).toBe(30 * DAY);
  });
});

describe('sandbox disputes', () => {
  const now = Date.UTC(2025, 2, 1);

  it('the dispute helper’s news: opened (funds withdrawn), then closed won (funds reinstated), each a whole dispute', async () => {
    const opened = openSandboxDispute({ amount: { minor: 7_000, currency: 'USD' }, reason: 'fraudulent', now });
    expect(opened).toEqual({
      id: expect.stringMatching(/^sbx_dp_[0-9a-f]{24}$/),
      status: 'needs_response',
      amount: { minor: 7_000, currency: 'USD' },
      reason: 'fraudulent',
      evidence_due_by: now + 7 * DAY,
      funds_withdrawn_at: now,
      funds_reinstated_at: null,
    });
    const body = sandboxDisputeNews('sbx_pay_abc', opened);
    const news = await sandboxPosV1.adapter.parseNotification(ctx(), await signed(body));
    expect(news).toEqual({
      eventId: body.id,
      resource: 'payment',
      processorReference: 'sbx_pay_abc',
      status: null,
      trusted: true,
      dispute: {
        processorDisputeId: opened.id,
        paymentProcessorReference: 'sbx_pay_abc',
        status: 'needs_response',
        amount: { minor: 7_000, currency: 'USD' },
        reason: 'fraudulent',
        evidenceDueBy: now + 7 * DAY,
        fundsWithdrawnAt: now,
        fundsReinstatedAt: null,
        processorStatus: 'sandbox_dispute_needs_response',
      },
    });

    // The core records it, then closes it from its record, as the close helper will.
    const created = applyDisputeNews(null, disputeOf(news), now);
    if (!created.ok) throw new Error('created');
    const won = closeSandboxDispute({ ...disputeOf(news), ...created.dispute }, 'won', now + DAY);
    expect(won).toMatchObject({
      id: opened.id,
      status: 'won',
      funds_withdrawn_at: now,
      funds_reinstated_at: now + DAY,
    });
    const closed = await sandboxPosV1.adapter.parseNotification(
      ctx(),
      await signed(sandboxDisputeNews('sbx_pay_abc', won)),
    );
    expect(closed).toMatchObject({ status: null, dispute: { status: 'won', fundsReinstatedAt: now + DAY } });
    expect(applyDisputeNews(created.dispute, disputeOf(closed), now + DAY)).toMatchObject({
      ok: true,
      events: ['dispute.closed'],
      lost: false,
    });
  });

  it('a lost dispute is also the chargeback summary (status charged_back); its funds stay withdrawn', async () => {
    const opened = openSandboxDispute({ amount: { minor: 500, currency: 'BRL' }, reason: 'product_not_received', now });
    const lost = closeSandboxDispute(
      {
        processorDisputeId: opened.id,
        amount: opened.amount,
        reason: opened.reason,
        evidenceDueBy: opened.evidence_due_by,
        fundsWithdrawnAt: opened.funds_withdrawn_at,
        fundsReinstatedAt: null,
      },
      'lost',
      now + DAY,
    );
    expect(lost).toMatchObject({ status: 'lost', funds_reinstated_at: null, funds_withdrawn_at: now });
    const news = await sandboxQrV1.adapter.parseNotification(
      ctx(),
      await signed(sandboxDisputeNews('sbx_pay_1', lost)),
    );
    expect(news).toMatchObject({ resource: 'payment', status: 'charged_back', dispute: { status: 'lost' } });
  });

  it('refuses a signed dispute it does not understand', async () => {
    const opened = openSandboxDispute({ amount: { minor: 500, currency: 'USD' }, reason: 'general', now });
    for (const dispute of [
      { ...opened, status: 'prevented' },
      { ...opened, reason: 'chargeback' },
      { ...opened, amount: { minor: 0, currency: 'USD' } },
      { ...opened, amount: { minor: 1.5, currency: 'USD' } },
      { ...opened, funds_withdrawn_at: 'yesterday' },
      { ...opened, id: '' },
    ]) {
      const body = { id: 'evt_1', resource: 'dispute', reference: 'sbx_pay_1', dispute };
      expect((await connectorError(sandboxPosV1.adapter.parseNotification(ctx(), await signed(body)))).kind).toBe(
        'invalid_notification',
      );
    }
  });
});
