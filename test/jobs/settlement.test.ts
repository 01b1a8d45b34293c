import { dataPlane, depsOfOwner } from '../helpers/shards.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcile, RECONCILE_AFTER_MS, voidedPaymentsDue } from '../../src/jobs/reconcile.ts';
import {
  dueSettlementReads,
  runSettlementChecks,
  SETTLEMENT_CHECKS_PER_OWNER_PER_RUN,
  SETTLEMENT_CHECK_AFTER_MS,
  SETTLEMENT_CHECK_MAX_AGE_MS,
} from '../../src/jobs/settlement-checks.ts';
import { runTerminalChecks } from '../../src/jobs/terminal-checks.ts';
import { call } from '../helpers/api.ts';
import { paymentBody, postIdempotent, setupMerchant, type Merchant } from '../helpers/merchant.ts';
import { queryPlan } from '../helpers/query-plans.ts';
import { installStripe, stripeMerchant, type StripeMerchant } from '../helpers/stripe-merchant.ts';
import { simFee, StripeSimulator } from '../simulators/stripe.ts';

/**
 * What the processor kept is recorded on every path that moves a payment (or a refund) to approved, not only
 * on the create and the notifications: the terminal re-reads and reconciliation record it too, through the
 * same function (`processorAccountChange`; `settleRefund` for refunds). And a settlement the processor has not
 * booked yet (`pending_at_processor`) is read again by the scheduled settlement checks until it is, or until
 * they give up (docs/states.md, "Settlement").
 */

const READER = 'tmr_SettleCounter01';
const MINUTE = 60_000;
// Every due row of this file is read in one run, whatever other files left behind.
const ALL = 10_000;

const sim = new StripeSimulator();
let sandbox: Merchant;
let stripe: StripeMerchant;
let uninstall: () => void;

beforeAll(async () => {
  uninstall = installStripe(sim);
  sandbox = await setupMerchant();
  stripe = await stripeMerchant(sim, READER);
});

afterAll(() => uninstall());

const sandboxPayment = async (id: string) =>
  (await call('GET', `/v1/payments/${id}`, { token: sandbox.key.secret })).body.data;
const stripeRefund = async (paymentId: string, refundId: string) =>
  (await call('GET', `/v1/payments/${paymentId}/refunds/${refundId}`, { token: stripe.apiKey.secret })).body.data;

/** Puts a payment's row back as `set` says (with `values`), with nothing recorded of its money. */
async function unsettle(id: string, set: string, ...values: number[]) {
  await dataPlane
    .prepare(
      `UPDATE payments SET ${set}, version = version + 1, settlement_fee_minor = NULL, settlement_net_minor = NULL,
       settlement_currency = NULL, settlement_available_on = NULL, settlement_null_reason = NULL WHERE id = ?`,
    )
    .bind(...values, id)
    .run();
}

/** A Stripe POS payment waiting at the reader (the customer has not presented a card). */
async function atReader(value: string) {
  sim.readerMode = 'manual';
  const res = await stripe.pay(value);
  sim.readerMode = 'auto';
  expect(res.status, res.text).toBe(201);
  expect(res.body.data).toMatchObject({ status: 'pending', action: { type: 'at_terminal' } });
  return res.body.data as { id: string; processor_reference: string };
}

/** The settlement Stripe's simulator books for a charge of `minor` cents. */
const stripeCharge = (minor: number) => ({
  fee: { value: (simFee(minor) / 100).toFixed(2), currency: 'USD' },
  net: { value: ((minor - simFee(minor)) / 100).toFixed(2), currency: 'USD' },
  available_on: expect.any(String),
});

describe('every path to approved records what the processor kept', () => {
  it('reconciliation (sandbox): a payment approved at the processor, its news lost, carries the fee', async () => {
    const made = await sandbox.pay(paymentBody(sandbox.pos.id, '20.50'));
    expect(made.body.data.status).toBe('approved');
    const id: string = made.body.data.id;
    // The sandbox answers a POS payment's outcome at once; the row is put back where a payment whose outcome
    // never reached us stands (pending, nothing recorded of the money), so that reconciliation's lookup approves it.
    await unsettle(id, "status = 'pending', updated_at = ?", Date.now() - RECONCILE_AFTER_MS - MINUTE);
    expect(await sandboxPayment(id)).toMatchObject({ status: 'pending', settlement: null });
    await reconcile(await depsOfOwner(sandbox.session.user.id), Date.now(), ALL);
    // The sandbox's fee: 2.9 % of 20.50 (0.59, rounded half up) + 0.30.
    expect(await sandboxPayment(id)).toMatchObject({
      status: 'approved',
      settlement: {
        fee: { value: '0.89', currency: 'USD' },
        net: { value: '19.61', currency: 'USD' },
        available_on: expect.any(String),
      },
      settlement_null_reason: null,
    });
  });

  it('the terminal re-read (sandbox): a payment the terminal approved, its news lost, carries the fee', async () => {
    const made = await sandbox.pay(paymentBody(sandbox.pos.id, '30.00'));
    expect(made.body.data.status).toBe('approved');
    const id: string = made.body.data.id;
    // The sandbox answers a POS payment's outcome at once; the row is put back where a payment waiting at its
    // terminal stands (nothing recorded of the money yet, a read due), so that the re-read is what approves it.
    const now = Date.now();
    await unsettle(id, "status = 'pending', at_terminal = 1, terminal_seen_at = ?, terminal_check_at = ?", now, now);
    expect(await sandboxPayment(id)).toMatchObject({ status: 'pending', settlement: null });
    await runTerminalChecks(await depsOfOwner(sandbox.session.user.id), now + MINUTE);
    expect(await sandboxPayment(id)).toMatchObject({
      status: 'approved',
      settlement: { fee: { value: '1.17', currency: 'USD' }, net: { value: '28.83', currency: 'USD' } },
      settlement_null_reason: null,
    });
  });

  it('the terminal re-read (Stripe): the card presented, its event lost, the read records the charge’s booking', async () => {
    const payment = await atReader('31.00');
    sim.presentCard(READER); // no event is delivered
    await runTerminalChecks(await depsOfOwner(stripe.session.user.id), Date.now() + MINUTE);
    expect(await stripe.get(payment.id)).toMatchObject({
      status: 'approved',
      settlement: stripeCharge(3_100),
      settlement_null_reason: null,
    });
  });

  it('reconciliation (Stripe): a payment approved at the reader, its event lost, carries the booking', async () => {
    const payment = await atReader('32.00');
    sim.presentCard(READER); // no event is delivered, and no terminal re-read runs
    await reconcile(await depsOfOwner(stripe.session.user.id), Date.now() + RECONCILE_AFTER_MS + MINUTE, ALL);
    expect(await stripe.get(payment.id)).toMatchObject({
      status: 'approved',
      settlement: stripeCharge(3_200),
      settlement_null_reason: null,
    });
  });

  it('a notification (Stripe): a refund left pending, approved by its signed event, carries its booking', async () => {
    const paid = await stripe.pay('34.00');
    sim.refundMode = 'pending';
    const made = await stripe.post(`/v1/payments/${paid.body.data.id}/refunds`, {
      amount: { value: '14.00', currency: 'USD' },
    });
    sim.refundMode = 'auto';
    expect(made.body.data.status).toBe('pending');
    sim.settleRefund(made.body.data.processor_reference, 'succeeded');
    const event = sim.eventFor('refund.updated', made.body.data.processor_reference);
    // The event names the balance transaction without it: the service reads the refund once for it.
    expect(typeof event.data.object.balance_transaction).toBe('string');
    const res = await stripe.send(await sim.deliver(event));
    expect(res.status, res.text).toBe(200);
    expect(await stripeRefund(paid.body.data.id, made.body.data.id)).toMatchObject({
      status: 'approved',
      settlement: { fee: { value: '0.00', currency: 'USD' }, net: { value: '14.00', currency: 'USD' } },
      settlement_null_reason: null,
    });
  });

  it('reconciliation (Stripe): a refund left pending, approved by the lookup, carries its booking', async () => {
    const paid = await stripe.pay('33.00');
    expect(paid.body.data.status).toBe('approved');
    sim.refundMode = 'pending';
    const made = await stripe.post(`/v1/payments/${paid.body.data.id}/refunds`, {
      amount: { value: '13.00', currency: 'USD' },
    });
    sim.refundMode = 'auto';
    expect(made.body.data).toMatchObject({
      status: 'pending',
      settlement: null,
      settlement_null_reason: 'not_collected',
    });
    sim.settleRefund(made.body.data.processor_reference, 'succeeded'); // its events are never delivered
    await reconcile(await depsOfOwner(stripe.session.user.id), Date.now() + RECONCILE_AFTER_MS + MINUTE, ALL);
    expect(await stripeRefund(paid.body.data.id, made.body.data.id)).toMatchObject({
      status: 'approved',
      // Stripe returns no fee with a refund; the whole amount left the balance.
      settlement: { fee: { value: '0.00', currency: 'USD' }, net: { value: '13.00', currency: 'USD' } },
      settlement_null_reason: null,
    });
  });
});

describe('a settlement pending at the processor is read again', () => {
  /** Reads of a PaymentIntent at the simulator so far. */
  const readsOf = (paymentIntent: string) => sim.requestsTo('GET', `/v1/payment_intents/${paymentIntent}`).length;

  /** A Stripe payment approved by its signed news while Stripe has not booked its charge. */
  async function approvedUnbooked(value: string) {
    const payment = await atReader(value);
    sim.presentCard(READER);
    const charge = sim.paymentIntents.get(payment.processor_reference)!.latest_charge as string;
    sim.unbookedCharges.add(charge);
    const res = await stripe.send(
      await sim.deliver(sim.eventFor('payment_intent.succeeded', payment.processor_reference)),
    );
    expect(res.status, res.text).toBe(200);
    const read = await stripe.get(payment.id);
    expect(read).toMatchObject({
      status: 'approved',
      settlement: null,
      settlement_null_reason: 'pending_at_processor',
    });
    return { ...payment, charge, updated_at: read.updated_at as string };
  }

  it('a payment: not before its turn, then every turn until Stripe books it; then never again', async () => {
    const payment = await approvedUnbooked('40.00');
    const deps = await depsOfOwner(stripe.session.user.id);
    const start = Date.now();
    const reads = readsOf(payment.processor_reference);

    await runSettlementChecks(deps, start + SETTLEMENT_CHECK_AFTER_MS / 2, ALL);
    expect(readsOf(payment.processor_reference)).toBe(reads);

    const first = start + SETTLEMENT_CHECK_AFTER_MS + MINUTE;
    await runSettlementChecks(deps, first, ALL);
    expect(readsOf(payment.processor_reference)).toBeGreaterThan(reads);
    expect(await stripe.get(payment.id)).toMatchObject({
      settlement: null,
      settlement_null_reason: 'pending_at_processor',
      updated_at: payment.updated_at,
    });

    sim.unbookedCharges.delete(payment.charge);
    // Looked at a moment ago: not read again before its next turn.
    const looked = readsOf(payment.processor_reference);
    await runSettlementChecks(deps, first + MINUTE, ALL);
    expect(readsOf(payment.processor_reference)).toBe(looked);
    await runSettlementChecks(deps, first + SETTLEMENT_CHECK_AFTER_MS + MINUTE, ALL);
    const booked = await stripe.get(payment.id);
    expect(booked).toMatchObject({ status: 'approved', settlement: stripeCharge(4_000), settlement_null_reason: null });
    // A settlement reported later is a change of the payment its readers see.
    expect(Date.parse(booked.updated_at)).toBeGreaterThan(Date.parse(payment.updated_at));

    const done = readsOf(payment.processor_reference);
    await runSettlementChecks(deps, first + 3 * SETTLEMENT_CHECK_AFTER_MS, ALL);
    expect(readsOf(payment.processor_reference)).toBe(done);
  });

  it('gives up after SETTLEMENT_CHECK_MAX_AGE_MS: the reason stays, nothing is read', async () => {
    const payment = await approvedUnbooked('41.00');
    const reads = readsOf(payment.processor_reference);
    await runSettlementChecks(
      await depsOfOwner(stripe.session.user.id),
      Date.now() + SETTLEMENT_CHECK_MAX_AGE_MS + MINUTE,
      ALL,
    );
    expect(readsOf(payment.processor_reference)).toBe(reads);
    expect(await stripe.get(payment.id)).toMatchObject({
      settlement: null,
      settlement_null_reason: 'pending_at_processor',
    });
    sim.unbookedCharges.delete(payment.charge);
  });

  it('a refund: approved before Stripe booked it, its booking recorded by a later turn', async () => {
    const paid = await stripe.pay('42.00');
    sim.bookRefundsLater = true;
    const made = await stripe.post(`/v1/payments/${paid.body.data.id}/refunds`, {
      amount: { value: '12.00', currency: 'USD' },
    });
    sim.bookRefundsLater = false;
    expect(made.body.data).toMatchObject({
      status: 'approved',
      settlement: null,
      settlement_null_reason: 'pending_at_processor',
    });
    const deps = await depsOfOwner(stripe.session.user.id);
    const first = Date.now() + SETTLEMENT_CHECK_AFTER_MS + MINUTE;
    await runSettlementChecks(deps, first, ALL);
    expect(await stripeRefund(paid.body.data.id, made.body.data.id)).toMatchObject({
      settlement: null,
      settlement_null_reason: 'pending_at_processor',
    });
    sim.unbookedRefunds.delete(made.body.data.processor_reference);
    await runSettlementChecks(deps, first + SETTLEMENT_CHECK_AFTER_MS + MINUTE, ALL);
    expect(await stripeRefund(paid.body.data.id, made.body.data.id)).toMatchObject({
      status: 'approved',
      settlement: { fee: { value: '0.00', currency: 'USD' }, net: { value: '12.00', currency: 'USD' } },
      settlement_null_reason: null,
    });
  });
});

describe('settlement checks: what each run reads', () => {
  it('a payment found charged back by a settlement read: its dispute and events first, and the settlement kept', async () => {
    const payment = await atReader('43.00');
    sim.presentCard(READER);
    const charge = sim.paymentIntents.get(payment.processor_reference)!.latest_charge as string;
    sim.unbookedCharges.add(charge);
    expect(
      (await stripe.send(await sim.deliver(sim.eventFor('payment_intent.succeeded', payment.processor_reference))))
        .status,
    ).toBe(200);
    const opened = sim.openDispute(payment.processor_reference);
    sim.closeDispute(opened.id, 'lost'); // every dispute event is lost
    sim.unbookedCharges.delete(charge);

    await runSettlementChecks(
      await depsOfOwner(stripe.session.user.id),
      Date.now() + SETTLEMENT_CHECK_AFTER_MS + MINUTE,
      ALL,
    );
    const disputes = await call('GET', `/v1/payments/${payment.id}/disputes`, { token: stripe.apiKey.secret });
    expect(disputes.body.data.map((d: { status: string }) => d.status)).toEqual(['lost']);
    const read = await stripe.get(payment.id);
    expect(read).toMatchObject({ status: 'approved', settlement: stripeCharge(4_300), settlement_null_reason: null });
    expect(read.charged_back_at).toEqual(expect.any(String));
    const told = (
      await call('GET', `/v1/payments/${payment.id}/events?limit=100`, { token: stripe.apiKey.secret })
    ).body.data.map((e: { type: string }) => e.type);
    expect([...told].sort()).toEqual([
      'dispute.closed',
      'dispute.created',
      'payment.approved',
      'payment.charged_back',
      'payment.pending',
    ]);
  });

  it(`at most ${SETTLEMENT_CHECKS_PER_OWNER_PER_RUN} payments of one owner per run; the rest wait for the next`, async () => {
    const busy = await setupMerchant();
    const ids: string[] = [];
    for (let i = 0; i < SETTLEMENT_CHECKS_PER_OWNER_PER_RUN + 2; i++) {
      const made = await postIdempotent('/v1/payments', busy.key.secret, paymentBody(busy.pos.id, `1${i}.00`));
      expect(made.status, made.text).toBe(201);
      await call('POST', `/v1/test-helpers/payments/${made.body.data.id}/approve`, { token: busy.key.secret });
      ids.push(made.body.data.id);
    }
    const shard = (await depsOfOwner(busy.session.user.id)).d1;
    for (const id of ids)
      await shard
        .prepare(
          `UPDATE payments SET version = version + 1, settlement_fee_minor = NULL, settlement_net_minor = NULL,
           settlement_currency = NULL, settlement_available_on = NULL, settlement_null_reason = 'pending_at_processor'
           WHERE id = ?`,
        )
        .bind(id)
        .run();
    const at = Date.now() + SETTLEMENT_CHECK_AFTER_MS + MINUTE;
    await runSettlementChecks(await depsOfOwner(busy.session.user.id), at, ALL);
    const looked = async () =>
      (
        await shard
          .prepare(
            `SELECT id FROM payments WHERE id IN (${ids.map(() => '?').join(', ')}) AND reconciled_at IS NOT NULL`,
          )
          .bind(...ids)
          .all()
      ).results.length;
    expect(await looked()).toBe(SETTLEMENT_CHECKS_PER_OWNER_PER_RUN);
    await runSettlementChecks(await depsOfOwner(busy.session.user.id), at + MINUTE, ALL);
    expect(await looked()).toBe(ids.length);
  });

  it('the due rows are read as index ranges bounded by updated_at, not every collected payment or approved refund', async () => {
    const deps = await depsOfOwner(stripe.session.user.id);
    const reads = dueSettlementReads(deps, Date.now());
    for (const statement of [reads.payments, reads.refunds, voidedPaymentsDue(deps, Date.now(), 50)]) {
      const plan = await queryPlan(statement);
      const what = JSON.stringify(plan);
      expect(
        plan.some((step) =>
          /SEARCH (payments|refunds) USING INDEX \w+_status_idx \(status=\? AND updated_at>\?\)/.test(step),
        ),
        what,
      ).toBe(true);
      expect(
        plan.some((step) => /^SCAN (payments|refunds)\b/.test(step)),
        what,
      ).toBe(false);
    }
  });
});
