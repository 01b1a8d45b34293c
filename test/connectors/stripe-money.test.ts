import { z } from '@hono/zod-openapi';
import type Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { STRIPE_REFUND_REVERSAL_WINDOW_MS, stripePosV1, stripeQrV1 } from '../../src/connectors/stripe/index.ts';
import {
  sdkShape,
  StripeBalanceTransaction,
  StripeDisputeDetail,
  StripeRefund,
} from '../../src/connectors/stripe/sdk.ts';
import {
  DISPUTE_REASON_TABLE,
  DISPUTE_STATUS_TABLE,
  eventToNotification,
  paymentSettlement,
  REFUND_FAILURE_REASON_MAP,
  refundFailureReason,
  settlementOf,
  toProcessorDispute,
  toRefundOutcome,
  type StripeRefundFailureReason,
} from '../../src/connectors/stripe/transformers.ts';
import type { ProcessorNotification } from '../../src/connectors/types.ts';
import { applyDisputeNews, DISPUTE_REASONS, DISPUTE_STATUSES, type DisputeState } from '../../src/domain/disputes.ts';
import { REFUND_FAILURE_REASONS, type RefundFailureReason } from '../../src/domain/reversals.ts';
import { connectorError } from '../helpers/connectors.ts';
import { posConfig, qrConfig, READER, stripeCtx, stripeLookup, stripePayment } from '../helpers/stripe.ts';
import { REFUND_FAIL_CARD, simFee, StripeSimulator, type SignedDelivery } from '../simulators/stripe.ts';

/**
 * The Stripe connector after the sale: fees and net from balance transactions, refunds that fail after
 * they succeeded (Terminal's `refund_fail` test card), a void whose refund fails, and disputes as they run.
 */

const pos = stripePosV1.adapter;
const qr = stripeQrV1.adapter;
const DAY = 86_400_000;

/** The dispute a payment's news carries (the notification type says only payment news can). */
function disputeOf(news: ProcessorNotification) {
  if (news.resource !== 'payment' || !news.dispute) throw new Error('no dispute in this news');
  return news.dispute;
}

const parse = (sim: StripeSimulator, delivery: SignedDelivery) =>
  pos.parseNotification(stripeCtx(sim, posConfig()), {
    headers: new Headers(delivery.headers),
    rawBody: delivery.rawBody,
    url: 'https://payments.example.com/v1/processor-notifications/x',
  });

async function approvedPos(sim: StripeSimulator, minor = 10_000, card?: string) {
  if (card) sim.useTestCard(READER, card);
  const input = stripePayment(minor);
  const outcome = await pos.createPayment(stripeCtx(sim, posConfig()), input);
  expect(outcome.status).toBe('approved');
  return { input, outcome, pi: outcome.processorReference! };
}

const refundInput = (pi: string, minor: number, refundId = `ref_${crypto.randomUUID()}`) => ({
  refundId,
  processorIdempotencyKey: refundId,
  attemptNumber: 1,
  paymentProcessorReference: pi,
  amount: { minor, currency: 'USD' },
});

const refundLookup = (pi: string, minor: number, refundId: string, processorReference: string | null) => ({
  refundId,
  amount: { minor, currency: 'USD' },
  processorReference,
  processorIdempotencyKey: refundId,
  paymentProcessorReference: pi,
});

// ---------------------------------------------------------------------------------------------------------
describe('Stripe tables after the sale', () => {
  it('refund failure reasons: Stripe’s seven are ours, word for word; anything else is unknown', () => {
    expect(Object.keys(REFUND_FAILURE_REASON_MAP).sort()).toEqual([...REFUND_FAILURE_REASONS].sort());
    for (const [stripe, ours] of Object.entries(REFUND_FAILURE_REASON_MAP)) expect(ours).toBe(stripe);
    for (const other of ['card_expired', '', 'DECLINED', '__proto__', 'toString', null, undefined])
      expect(refundFailureReason(other)).toBe('unknown');
  });

  it('dispute statuses and reasons: Stripe’s are ours, word for word', () => {
    expect(Object.keys(DISPUTE_STATUS_TABLE).sort()).toEqual([...DISPUTE_STATUSES].sort());
    for (const [stripe, ours] of Object.entries(DISPUTE_STATUS_TABLE)) expect(ours).toBe(stripe);
    expect(Object.keys(DISPUTE_REASON_TABLE).sort()).toEqual([...DISPUTE_REASONS].sort());
    for (const [stripe, ours] of Object.entries(DISPUTE_REASON_TABLE)) expect(ours).toBe(stripe);
  });

  it('declares the reversal window Stripe documents: 30 days', () => {
    expect(STRIPE_REFUND_REVERSAL_WINDOW_MS).toBe(30 * DAY);
    expect(stripePosV1.refundReversalWindowMs).toBe(30 * DAY);
    expect(stripeQrV1.refundReversalWindowMs).toBe(30 * DAY);
  });
});

describe('Stripe settlement (balance transactions)', () => {
  const bt = (fields: Partial<z.input<typeof StripeBalanceTransaction>> = {}) =>
    StripeBalanceTransaction.parse({
      id: 'txn_1',
      object: 'balance_transaction',
      amount: 10_000,
      fee: 320,
      net: 9_680,
      currency: 'usd',
      available_on: 1_700_000_000,
      ...fields,
    });

  it('fee and net in the balance transaction’s own currency, available_on in milliseconds', () => {
    expect(settlementOf(bt())).toEqual({
      fee: { minor: 320, currency: 'USD' },
      net: { minor: 9_680, currency: 'USD' },
      availableOn: 1_700_000_000_000,
    });
    // Stripe converted a EUR charge into the account's USD: the settlement says USD.
    expect(settlementOf(bt({ currency: 'usd', amount: 1_234, fee: 66, net: 1_168 }))!.net).toEqual({
      minor: 1_168,
      currency: 'USD',
    });
  });

  it('in any currency of the account’s balance, converted from Stripe’s unit to ISO 4217’s where they differ', () => {
    // A USD charge settled by an account in Japan: Stripe's JPY unit is ISO's (zero-decimal).
    expect(settlementOf(bt({ currency: 'jpy', amount: 3_750, fee: 139, net: 3_611 }))).toMatchObject({
      fee: { minor: 139, currency: 'JPY' },
      net: { minor: 3_611, currency: 'JPY' },
    });
    // Three-decimal currencies are counted in thousandths by both.
    expect(settlementOf(bt({ currency: 'kwd', amount: 10_000, fee: 320, net: 9_680 }))!.fee).toEqual({
      minor: 320,
      currency: 'KWD',
    });
    // ISK: two decimals at Stripe (100 is 1 króna), none in ISO 4217; MGA the other way round.
    expect(settlementOf(bt({ currency: 'isk', amount: 100_000, fee: 3_200, net: 96_800 }))).toMatchObject({
      fee: { minor: 32, currency: 'ISK' },
      net: { minor: 968, currency: 'ISK' },
    });
    expect(settlementOf(bt({ currency: 'mga', amount: 10_000, fee: 320, net: 9_680 }))).toMatchObject({
      fee: { minor: 32_000, currency: 'MGA' },
      net: { minor: 968_000, currency: 'MGA' },
    });
  });

  it('a booking no ISO 4217 amount can hold is reported as such, never as a wrong amount', () => {
    // A fraction of a króna; a currency ISO 4217 has no minor unit for; a code that is no currency.
    for (const odd of [
      bt({ currency: 'isk', amount: 100_050, fee: 3_250, net: 96_800 }),
      bt({ currency: 'xau', amount: 10_000, fee: 320, net: 9_680 }),
      bt({ currency: 'xyz', amount: 10_000, fee: 320, net: 9_680 }),
    ]) {
      expect(settlementOf(odd)).toBeNull();
      expect(paymentSettlement({ latest_charge: { id: 'ch_1', disputed: false, balance_transaction: odd } })).toEqual({
        settlement: null,
        settlementNullReason: 'unrepresentable_amount',
      });
    }
  });

  it('from the charge: reported when expanded, pending while unbooked, nothing when not expanded', () => {
    const charge = (balance_transaction: StripeBalanceTransaction | string | null) => ({
      id: 'ch_1',
      disputed: false,
      balance_transaction,
    });
    expect(paymentSettlement({ latest_charge: charge(bt()) })).toEqual({ settlement: settlementOf(bt()) });
    expect(paymentSettlement({ latest_charge: charge(null) })).toEqual({
      settlement: null,
      settlementNullReason: 'pending_at_processor',
    });
    expect(paymentSettlement({ latest_charge: charge('txn_1') })).toEqual({});
    expect(paymentSettlement({ latest_charge: 'ch_1' })).toEqual({});
    expect(paymentSettlement({ latest_charge: null })).toEqual({});
  });

  it('a refund: its (negative) booking once it succeeded; a failure reason once it failed or was canceled', () => {
    const refund = (fields: Record<string, unknown>) =>
      StripeRefund.parse({ id: 're_1', object: 'refund', metadata: {}, ...fields });
    const debit = bt({ amount: -2_500, fee: 0, net: -2_500 });
    expect(toRefundOutcome(refund({ status: 'succeeded', balance_transaction: debit }))).toEqual({
      status: 'approved',
      processorReference: 're_1',
      processorStatus: 'succeeded',
      settlement: {
        fee: { minor: 0, currency: 'USD' },
        net: { minor: -2_500, currency: 'USD' },
        availableOn: 1_700_000_000_000,
      },
    });
    expect(toRefundOutcome(refund({ status: 'succeeded', balance_transaction: 'txn_1' }))).not.toHaveProperty(
      'settlement',
    );
    for (const reason of REFUND_FAILURE_REASONS) {
      const outcome = toRefundOutcome(refund({ status: 'failed', failure_reason: reason, balance_transaction: debit }));
      expect(outcome).toMatchObject({ failureReason: reason, status: reason === 'declined' ? 'declined' : 'failed' });
      expect(outcome).not.toHaveProperty('settlement');
    }
    expect(toRefundOutcome(refund({ status: 'canceled', failure_reason: 'merchant_request' }))).toMatchObject({
      status: 'failed',
      failureReason: 'merchant_request',
    });
    expect(toRefundOutcome(refund({ status: 'pending' }))).not.toHaveProperty('failureReason');
  });

  it('an approved POS payment carries what Stripe booked, from the create answer and from both lookups', async () => {
    const sim = new StripeSimulator();
    const { input, outcome, pi } = await approvedPos(sim, 10_000);
    const booked = [...sim.balanceTransactions.values()].find((b) => b.type === 'charge')!;
    expect(booked).toMatchObject({
      amount: 10_000,
      fee: simFee(10_000),
      net: 10_000 - simFee(10_000),
      currency: 'usd',
    });
    const expected = {
      fee: { minor: simFee(10_000), currency: 'USD' },
      net: { minor: 10_000 - simFee(10_000), currency: 'USD' },
      availableOn: booked.available_on * 1000,
    };
    expect(outcome.settlement).toEqual(expected);
    expect(expected.availableOn % DAY).toBe(0);
    for (const reference of [pi, null]) {
      const read = await pos.getPayment(stripeCtx(sim, posConfig()), stripeLookup(input, reference));
      expect(read).toMatchObject({ status: 'approved', settlement: expected, disputes: [] });
    }
  });

  it('a charge Stripe has not booked yet: settlement null, pending_at_processor; booked later, reported', async () => {
    const sim = new StripeSimulator({ readerMode: 'manual' });
    const input = stripePayment(5_000);
    const pending = await pos.createPayment(stripeCtx(sim, posConfig()), input);
    expect(pending.status).toBe('pending');
    expect(pending).not.toHaveProperty('settlement');
    sim.presentCard(READER);
    const charge = sim.paymentIntents.get(pending.processorReference!)!.latest_charge as string;
    sim.unbookedCharges.add(charge);
    const lookup = stripeLookup(input, pending.processorReference);
    expect(await pos.getPayment(stripeCtx(sim, posConfig()), lookup)).toMatchObject({
      status: 'approved',
      settlement: null,
      settlementNullReason: 'pending_at_processor',
    });
    sim.unbookedCharges.delete(charge);
    expect((await pos.getPayment(stripeCtx(sim, posConfig()), lookup)).settlement).toMatchObject({
      fee: { minor: simFee(5_000), currency: 'USD' },
    });
  });

  it('a QR payment carries nothing while pending, and its settlement once the buyer paid', async () => {
    const sim = new StripeSimulator();
    const input = stripePayment(35_000, 'THB');
    const created = await qr.createPayment(stripeCtx(sim, qrConfig()), input);
    expect(created).not.toHaveProperty('settlement');
    sim.payQr(created.processorReference!);
    const read = await qr.getPayment(stripeCtx(sim, qrConfig()), stripeLookup(input, created.processorReference));
    expect(read.settlement).toMatchObject({ fee: { minor: simFee(35_000), currency: 'THB' } });
  });

  it('an approved refund carries what left the balance (the fee is not returned), from the create answer', async () => {
    const sim = new StripeSimulator();
    const { pi } = await approvedPos(sim);
    const refund = await pos.refundPayment(stripeCtx(sim, posConfig()), refundInput(pi, 2_500));
    expect(refund).toMatchObject({
      status: 'approved',
      settlement: { fee: { minor: 0, currency: 'USD' }, net: { minor: -2_500, currency: 'USD' } },
    });
  });
});

// ---------------------------------------------------------------------------------------------------------
describe('Stripe refunds that fail after they succeeded (Terminal test card 4000 0000 0000 5126)', () => {
  it('approved at first; later failed with expired_or_canceled_card, told by refund.updated and charge.refund.updated; the lookup agrees', async () => {
    const sim = new StripeSimulator();
    const { pi } = await approvedPos(sim, 10_000, REFUND_FAIL_CARD);
    const input = refundInput(pi, 4_000);
    const made = await pos.refundPayment(stripeCtx(sim, posConfig()), input);
    expect(made).toMatchObject({ status: 'approved', processorStatus: 'succeeded' });
    const lookup = refundLookup(pi, 4_000, input.refundId, made.processorReference);
    expect(await pos.getRefund(stripeCtx(sim, posConfig()), lookup)).toMatchObject({ status: 'approved' });

    const [failed] = sim.failAsyncRefunds();
    expect(failed).toMatchObject({
      id: made.processorReference,
      status: 'failed',
      failure_reason: 'expired_or_canceled_card',
      failure_balance_transaction: expect.stringMatching(/^txn_/),
    });
    expect(sim.balanceTransactions.get(failed!.failure_balance_transaction as string)).toMatchObject({
      amount: 4_000,
      type: 'refund_failure',
    });
    for (const type of ['refund.updated', 'charge.refund.updated'] as const) {
      const event = sim.eventFor(type, made.processorReference!);
      expect(await parse(sim, await sim.deliver(event))).toEqual({
        eventId: event.id,
        resource: 'refund',
        processorReference: made.processorReference!,
        status: 'failed',
        failureReason: 'expired_or_canceled_card',
        trusted: true,
      } satisfies ProcessorNotification);
    }
    for (const reference of [made.processorReference, null]) {
      const read = await pos.getRefund(stripeCtx(sim, posConfig()), { ...lookup, processorReference: reference });
      expect(read).toEqual({
        status: 'failed',
        processorReference: made.processorReference,
        processorStatus: 'failed',
        failureReason: 'expired_or_canceled_card',
      });
    }
    // Other cards' refunds stay as they were.
    expect(sim.failAsyncRefunds()).toEqual([]);
  });

  it('the card can be presented through the present_payment_method test helper (card_present[number])', async () => {
    const sim = new StripeSimulator({ readerMode: 'manual' });
    const input = stripePayment(3_000);
    const created = await pos.createPayment(stripeCtx(sim, posConfig()), input);
    const presented = await sim.fetch(
      `https://api.stripe.com/v1/test_helpers/terminal/readers/${READER}/present_payment_method`,
      {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${stripeCtx(sim).credentials.secret_key}`,
          'Content-Type': 'application/x-www-form-urlencoded',
        },
        body: `card_present[number]=${REFUND_FAIL_CARD}&type=card_present`,
      },
    );
    expect(presented.status).toBe(200);
    const made = await pos.refundPayment(stripeCtx(sim, posConfig()), refundInput(created.processorReference!, 3_000));
    expect(made.status).toBe('approved');
    expect(sim.failAsyncRefunds().map((r) => r.id)).toEqual([made.processorReference]);
  });

  it('any reason Stripe gives comes through, and a failure before success is no different to the connector', async () => {
    const sim = new StripeSimulator();
    const { pi } = await approvedPos(sim);
    for (const reason of ['lost_or_stolen_card', 'charge_for_pending_refund_disputed', 'insufficient_funds'] as const) {
      const made = await pos.refundPayment(stripeCtx(sim, posConfig()), refundInput(pi, 1_000));
      sim.settleRefund(made.processorReference!, 'failed', reason);
      const news = await parse(sim, await sim.deliver(sim.eventFor('charge.refund.updated', made.processorReference!)));
      expect(news).toMatchObject({ resource: 'refund', status: 'failed', failureReason: reason });
    }
  });
});

// ---------------------------------------------------------------------------------------------------------
describe('Stripe voids whose refund fails (NOTES.md, "A void whose refund fails")', () => {
  it('canceled when the refund succeeds; when it fails later, news that the payment is collected again; getVoidRefund tells either', async () => {
    const sim = new StripeSimulator();
    const { input, pi } = await approvedPos(sim, 6_000, REFUND_FAIL_CARD);
    const lookup = stripeLookup(input, pi);
    const canceled = await pos.cancelPayment(stripeCtx(sim, posConfig()), { ...lookup, currentStatus: 'approved' });
    expect(canceled).toMatchObject({ status: 'canceled', processorStatus: 'refunded' });
    const getVoid = pos.getVoidRefund!;
    const before = await getVoid(stripeCtx(sim, posConfig()), lookup);
    expect(before).toMatchObject({ status: 'approved', settlement: { net: { minor: -6_000, currency: 'USD' } } });

    const [failed] = sim.failAsyncRefunds();
    expect(failed!.metadata).toEqual({ payment_id: input.paymentId, purpose: 'void' });
    for (const type of ['refund.updated', 'charge.refund.updated'] as const) {
      const event = sim.eventFor(type, failed!.id);
      expect(await parse(sim, await sim.deliver(event))).toEqual({
        eventId: event.id,
        resource: 'payment',
        processorReference: pi,
        status: 'approved',
        voidReversal: { processorRefundReference: failed!.id, failureReason: 'expired_or_canceled_card' },
        trusted: true,
      } satisfies ProcessorNotification);
    }
    // Found by reference and, when the reference was never known, by search.
    for (const reference of [pi, null])
      expect(await getVoid(stripeCtx(sim, posConfig()), { ...lookup, processorReference: reference })).toMatchObject({
        status: 'failed',
        processorReference: failed!.id,
        failureReason: 'expired_or_canceled_card',
      });
  });

  it('a void refund that succeeds (late) is no payment news; a payment never voided has no void refund', async () => {
    const sim = new StripeSimulator({ refundMode: 'pending' });
    const { input, pi } = await approvedPos(sim);
    const lookup = stripeLookup(input, pi);
    expect(
      (await connectorError(pos.cancelPayment(stripeCtx(sim, posConfig()), { ...lookup, currentStatus: 'approved' })))
        .kind,
    ).toBe('unavailable');
    const refundId = [...sim.refunds.keys()][0]!;
    sim.settleRefund(refundId, 'succeeded');
    const news = await parse(sim, await sim.deliver(sim.eventFor('charge.refund.updated', refundId)));
    expect(news).toMatchObject({ resource: 'refund', processorReference: refundId, status: 'approved' });
    expect(news).not.toHaveProperty('voidReversal');

    const other = await approvedPos(sim);
    const error = await connectorError(
      pos.getVoidRefund!(stripeCtx(sim, posConfig()), stripeLookup(other.input, other.pi)),
    );
    expect(error.kind).toBe('not_found');
  });

  it('a failed refund that is no void’s, or names no PaymentIntent, stays refund news', () => {
    const sim = new StripeSimulator();
    const refund = { id: 're_1', object: 'refund', status: 'failed', failure_reason: 'unknown' };
    const event = (metadata: Record<string, string>, payment_intent: string | null) =>
      sim.rawEvent('charge.refund.updated', { ...refund, metadata, payment_intent });
    const news = (e: ReturnType<typeof event>) => eventToNotification(e as never, e.data.object);
    expect(news(event({ purpose: 'refund' }, 'pi_1'))).toMatchObject({ resource: 'refund', status: 'failed' });
    expect(news(event({ purpose: 'void' }, null))).toMatchObject({ resource: 'refund', processorReference: 're_1' });
    expect(news(event({ purpose: 'void' }, 'pi_1'))).toMatchObject({ resource: 'payment', processorReference: 'pi_1' });
  });
});

// ---------------------------------------------------------------------------------------------------------
describe('Stripe disputes as they run', () => {
  /** Feeds each event's news through the domain's dispute rules, as the core will, and collects the events. */
  async function follow(sim: StripeSimulator, disputeId: string, types: Parameters<StripeSimulator['eventFor']>[0][]) {
    let record: DisputeState | null = null;
    const sent: string[] = [];
    const seen: ProcessorNotification[] = [];
    for (const type of types) {
      const news = await parse(sim, await sim.deliver(sim.eventFor(type, disputeId)));
      seen.push(news);
      const applied = applyDisputeNews(record, disputeOf(news), Date.now());
      if (applied.ok) {
        sent.push(...applied.events);
        record = applied.dispute;
      }
    }
    return { record: record!, sent, seen };
  }

  it('opened with the funds withdrawn, answered, won with the funds reinstated: created, updated, updated, closed', async () => {
    const sim = new StripeSimulator();
    const { input, pi } = await approvedPos(sim, 7_000);
    const opened = sim.openDispute(pi, { reason: 'product_not_received' });
    sim.reviewDispute(opened.id);
    sim.closeDispute(opened.id, 'won');
    const { record, sent, seen } = await follow(sim, opened.id, [
      'charge.dispute.created',
      'charge.dispute.funds_withdrawn',
      'charge.dispute.updated',
      'charge.dispute.funds_reinstated',
      'charge.dispute.closed',
    ]);
    expect(sent).toEqual(['dispute.created', 'dispute.updated', 'dispute.updated', 'dispute.closed']);
    expect(seen.map((n) => n.status)).toEqual([null, null, null, null, null]);
    const final = sim.disputes.get(opened.id)!;
    expect(record).toMatchObject({
      status: 'won',
      amount: { minor: 7_000, currency: 'USD' },
      reason: 'product_not_received',
      evidenceDueBy: final.evidence_details.due_by! * 1000,
      fundsWithdrawnAt: final.balance_transactions[0]!.created * 1000,
      fundsReinstatedAt: final.balance_transactions[1]!.created * 1000,
    });
    // The lookup reads the same dispute, for reconciliation; the payment stays approved.
    const read = await pos.getPayment(stripeCtx(sim, posConfig()), stripeLookup(input, pi));
    expect(read).toMatchObject({ status: 'approved', disputes: [{ processorDisputeId: opened.id, status: 'won' }] });
  });

  it('lost: closed, and the chargeback summary (charged_back) from the event and the lookup', async () => {
    const sim = new StripeSimulator();
    const { input, pi } = await approvedPos(sim, 7_000);
    const opened = sim.openDispute(pi);
    sim.closeDispute(opened.id, 'lost');
    const { record, sent, seen } = await follow(sim, opened.id, [
      'charge.dispute.created',
      'charge.dispute.funds_withdrawn',
      'charge.dispute.closed',
    ]);
    expect(sent).toEqual(['dispute.created', 'dispute.updated', 'dispute.closed']);
    expect(seen.at(-1)).toMatchObject({ resource: 'payment', processorReference: pi, status: 'charged_back' });
    expect(record).toMatchObject({ status: 'lost', fundsReinstatedAt: null });
    expect(await pos.getPayment(stripeCtx(sim, posConfig()), stripeLookup(input, pi))).toMatchObject({
      status: 'charged_back',
      disputes: [{ processorDisputeId: opened.id, status: 'lost', fundsWithdrawnAt: expect.any(Number) }],
      settlement: { fee: { minor: simFee(7_000) } },
    });
  });

  it('an inquiry withdraws nothing; escalated, it is a chargeback with the funds withdrawn', async () => {
    const sim = new StripeSimulator();
    const { pi } = await approvedPos(sim);
    const inquiry = sim.openDispute(pi, { inquiry: true });
    sim.escalateInquiry(inquiry.id);
    const { record, sent, seen } = await follow(sim, inquiry.id, [
      'charge.dispute.created',
      'charge.dispute.updated',
      'charge.dispute.funds_withdrawn',
    ]);
    expect(disputeOf(seen[0]!)).toMatchObject({ status: 'warning_needs_response', fundsWithdrawnAt: null });
    // Escalated (updated), then its funds withdrawn (updated again): each is news to the merchant.
    expect(sent).toEqual(['dispute.created', 'dispute.updated', 'dispute.updated']);
    expect(disputeOf(seen[1]!)).toMatchObject({ status: 'needs_response', fundsWithdrawnAt: null });
    expect(record).toMatchObject({ status: 'needs_response', fundsWithdrawnAt: expect.any(Number) });
  });

  it('a dispute’s details that do not parse still give the summary; one of an unknown status is no dispute of ours', () => {
    const sim = new StripeSimulator();
    const detail = (fields: Record<string, unknown>) =>
      StripeDisputeDetail.parse({
        id: 'du_1',
        object: 'dispute',
        status: 'needs_response',
        charge: 'ch_1',
        payment_intent: 'pi_1',
        amount: 500,
        currency: 'usd',
        reason: 'fraudulent',
        evidence_details: { due_by: 0 },
        balance_transactions: [],
        ...fields,
      });
    // due_by 0: the bank allows no response, so there is no deadline.
    expect(toProcessorDispute(detail({}))).toMatchObject({
      evidenceDueBy: null,
      fundsWithdrawnAt: null,
      reason: 'fraudulent',
    });
    expect(toProcessorDispute(detail({ reason: 'noticed_later' }))!.reason).toBe('general');
    expect(toProcessorDispute(detail({ status: 'prevented' }))).toBeNull();
    expect(toProcessorDispute(detail({ payment_intent: null }))).toBeNull();
    const summaryOnly = sim.rawEvent('charge.dispute.closed', {
      id: 'du_1',
      object: 'dispute',
      status: 'lost',
      charge: 'ch_1',
      payment_intent: 'pi_1',
    });
    const news = eventToNotification(summaryOnly as never, summaryOnly.data.object);
    expect(news).toMatchObject({ resource: 'payment', processorReference: 'pi_1', status: 'charged_back' });
    expect(news).not.toHaveProperty('dispute');
  });
});

// ---------------------------------------------------------------------------------------------------------
describe('the new schemas and tables are held to the SDK', () => {
  it('a misspelt or mistyped field fails typecheck', () => {
    // @ts-expect-error `available_at` is not a field of Stripe.BalanceTransaction (`available_on` is)
    sdkShape<Stripe.BalanceTransaction>()({ available_at: z.number() });
    // @ts-expect-error `fee` of Stripe.BalanceTransaction is a number of minor units
    sdkShape<Stripe.BalanceTransaction>()({ fee: z.string() });
    // @ts-expect-error `due_by` of Stripe.Dispute.EvidenceDetails may be null: a schema refusing null would refuse Stripe
    sdkShape<Stripe.Dispute.EvidenceDetails>()({ due_by: z.number() });
    // @ts-expect-error `balance_transaction` of Stripe.Refund may be expanded or null: a string-only schema would refuse it
    sdkShape<Stripe.Refund>()({ balance_transaction: z.string() });
    // @ts-expect-error 'prevented' is not a Stripe.Dispute.Status of 2024-06-20
    void ({ ...DISPUTE_STATUS_TABLE, prevented: 'won' } satisfies Record<Stripe.Dispute.Status, string>);
    // @ts-expect-error 'card_expired' is not a failure reason Stripe documents
    void ({ ...REFUND_FAILURE_REASON_MAP, card_expired: 'unknown' } satisfies Record<
      StripeRefundFailureReason,
      RefundFailureReason
    >);

    expect(Object.keys(StripeBalanceTransaction.shape)).toEqual([
      'id',
      'object',
      'amount',
      'fee',
      'net',
      'currency',
      'available_on',
    ]);
  });
});

describe('Stripe: a payment’s disputes read on their own (listDisputes, getDispute)', () => {
  it('lists the PaymentIntent’s disputes in one request ([] when none); reads one by id, another payment’s is not_found', async () => {
    const sim = new StripeSimulator();
    const ctx = stripeCtx(sim, posConfig());
    const input = stripePayment(2500);
    const pi = (await stripePosV1.adapter.createPayment(ctx, input)).processorReference!;
    const other = (await stripePosV1.adapter.createPayment(ctx, stripePayment(2600))).processorReference!;
    const lookup = stripeLookup(input, pi);
    const before = sim.requests.length;
    expect(await stripePosV1.adapter.listDisputes!(ctx, lookup)).toEqual([]);
    expect(sim.requests.length - before).toBe(1);

    const opened = sim.openDispute(pi, { reason: 'product_not_received' });
    const otherDispute = sim.openDispute(other);
    const listed = await stripePosV1.adapter.listDisputes!(ctx, lookup);
    expect(listed).toEqual([
      expect.objectContaining({
        processorDisputeId: opened.id,
        paymentProcessorReference: pi,
        status: 'needs_response',
        reason: 'product_not_received',
        amount: { minor: 2500, currency: 'USD' },
      }),
    ]);
    sim.closeDispute(opened.id, 'lost');
    const read = await stripePosV1.adapter.getDispute!(ctx, { processorDisputeId: opened.id, payment: lookup });
    expect(read).toMatchObject({ processorDisputeId: opened.id, status: 'lost' });
    const foreign = stripePosV1.adapter.getDispute!(ctx, { processorDisputeId: otherDispute.id, payment: lookup });
    expect((await connectorError(foreign)).kind).toBe('not_found');
    const missing = stripePosV1.adapter.getDispute!(ctx, { processorDisputeId: 'du_missing', payment: lookup });
    expect((await connectorError(missing)).kind).toBe('not_found');
  });
});
