import { onEveryShard } from '../helpers/shards.ts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SANDBOX_SIGNATURE_HEADER, signSandboxNotification } from '../../src/connectors/sandbox/index.ts';
import { runTerminalChecks } from '../../src/jobs/terminal-checks.ts';
import { call, createKey, expectError, seedSession, type ApiResponse, type Session } from '../helpers/api.ts';
import { paymentRowsByReference } from '../helpers/merchant.ts';
import { ADYEN_CHECKOUT_ORIGIN, ADYEN_DEVICE_ORIGIN, AdyenSimulator, type SignedWebhook } from '../simulators/adyen.ts';
import { expireQrPayments } from '../../src/jobs/expire-qr-payments.ts';
import { MercadoPagoSimulator, MP_BASE, type SimAccount, type SimNotification } from '../simulators/mercadopago.ts';
import {
  REFUND_FAIL_CARD,
  STRIPE_ORIGIN,
  StripeSimulator,
  stripeId,
  type SignedDelivery,
} from '../simulators/stripe.ts';

/**
 * The one flow suite: the first steps of every merchant (log in, create an API key), then the whole payment,
 * cancel and refund flow, run unchanged against every connector: the built-in sandbox, Stripe against its simulator and Mercado Pago against its simulator
 * (the Worker runs in this isolate, so its outbound fetch is answered by the simulator installed as the
 * global fetch). A profile supplies only what differs between processors: how to create the POS and QR
 * methods, the currencies, how to install its processor, and how "the buyer paid" or "the buyer's bank
 * declined" reaches us for a pending QR payment (the sandbox's test helpers; a real processor's signed
 * notification to /v1/processor-notifications/{method}). The test body below never looks at the profile's
 * name, and goes through the public API only, with one exception: a 504/503 answer carries no payment id,
 * so the payment that was kept (pending / created) is read by its external_reference from D1.
 */

type Channel = 'pos' | 'qr';
type Payment = {
  id: string;
  status: string;
  processor_reference: string | null;
  updated_at: string;
  action?: { type: string; qr_data?: string };
  [key: string]: unknown;
};

interface MethodSpec {
  connector_definition_version_id: string;
  credentials: Record<string, string>;
  configuration?: Record<string, unknown>;
}

/** What a profile is told when it must act as the processor for one payment. */
interface ProcessorNewsContext {
  /** The payment method the payment was made with (where its processor sends notifications). */
  methodId: string;
  /** The merchant's API key secret (the sandbox's test helpers take the same auth as reading the payment). */
  token: string;
  payment: Payment;
}

/** News already sent once; `again` sends the very same news a second time. */
interface SentNews {
  response: ApiResponse;
  again: () => Promise<ApiResponse>;
}

interface Profile {
  name: string;
  currencies: Record<Channel, string>;
  /** Before the profile's tests: the processor answers the Worker's outbound requests from now on. */
  install: () => void;
  uninstall: () => void;
  method: (channel: Channel) => MethodSpec;
  /** The processor's asynchronous news for a pending QR payment: the buyer paid, or the buyer's bank declined. */
  settleQr: (ctx: ProcessorNewsContext, outcome: 'paid' | 'declined') => Promise<SentNews>;
  /** A notification saying the payment is still pending, sent after it was settled (omitted when the profile cannot send one). */
  latePending?: (ctx: ProcessorNewsContext) => Promise<ApiResponse>;
  /** How many payments the processor holds for our payment id (omitted when the processor's state is not observable). */
  processorPaymentCount?: (paymentId: string) => number;
  /**
   * The processor's news that the terminal settled a POS payment that waited for a check at the terminal
   * (POS ending 55). Omitted when the processor has no such state; its test is then skipped.
   */
  settleTerminalCheck?: (ctx: ProcessorNewsContext) => Promise<SentNews>;
  /** The processor's news that an approved POS payment was charged back (omitted when it cannot be driven; skipped). */
  chargeBack?: (ctx: ProcessorNewsContext) => Promise<SentNews>;
  /**
   * A POS payment whose refunds the processor reports failed after they succeeded: `prepare` runs before the
   * payment is made (Stripe: the Terminal test card whose refunds fail later), `fail` is the processor's news
   * that the approved refund failed with `expired_or_canceled_card`. Omitted when the processor documents no
   * such failure (Mercado Pago, its NOTES.md); the test is then skipped.
   */
  /**
   * The processor's news of a chargeback of an approved POS payment: `open` it (the funds withdrawn), then
   * `close` it `won` (the funds reinstated) or `lost`. Omitted when it cannot be driven; its test is skipped.
   */
  dispute?: {
    open: (ctx: ProcessorNewsContext) => Promise<SentNews>;
    close: (ctx: ProcessorNewsContext, dispute: { id: string }, outcome: 'won' | 'lost') => Promise<SentNews>;
    /**
     * Where the processor's material says otherwise than Stripe's, and how (each connector's NOTES.md):
     * `noFundsDates`, it dates neither the funds withheld nor their return (Mercado Pago: both stay null);
     * `summaryWhenOpened`, its payment reads charged back as soon as a chargeback opens, before it is decided
     * (Mercado Pago's order `charged_back`), so `charged_back_at` is set then, once, and stays after a win.
     */
    differs?: { noFundsDates?: true; summaryWhenOpened?: true };
  };
  /** Whether an approved payment carries the processor's `settlement` (`not_reported` otherwise). */
  reportsSettlement: boolean;
  refundFailsLater?: {
    prepare: () => void;
    fail: (ctx: ProcessorNewsContext, refund: { id: string; processor_reference: string }) => Promise<SentNews>;
  };
  /** At the counter: a POS payment that waits at the terminal for the customer, and the terminal itself. */
  counter: Counter;
  /**
   * Where the processor answers a refund `received` and tells its outcome later (Adyen's REFUND webhook): its news
   * for the refund just made. Absent: the refund's answer is its outcome.
   */
  refundNews?: (ctx: ProcessorNewsContext, refund: { id: string; processor_reference: string }) => Promise<SentNews>;
  /**
   * Where the processor carries out a cancel later (Adyen's `/cancels` and `/reversals`: CANCELLATION,
   * CANCEL_OR_REFUND): its news once done. A void of an approved payment is then answered 409 by the core, which
   * does not yet record an accepted void (the connector's NOTES.md); the news voids it.
   */
  cancelNews?: (ctx: ProcessorNewsContext) => Promise<SentNews>;
  /** The processor's own news that a QR nobody paid expired (Adyen's OFFER_CLOSED); absent: the service's expiry job. */
  qrExpiry?: (ctx: ProcessorNewsContext) => Promise<SentNews>;
  /** The failure reason the processor's news of a refund failed later gives. */
  refundFailureReason?: string;
}

interface Counter {
  /** A POS amount that waits at the terminal once `prepare` ran; `prepare` answers the undoing of itself. */
  value: string;
  prepare: () => () => void;
  /**
   * How the processor answers a cancel there: `requested` (accepted, carried out later: `completeCancel` is
   * the processor doing it and telling us, `payFirst` the customer paying before it lands) or `immediate`.
   */
  cancel: 'requested' | 'immediate';
  completeCancel?: (ctx: ProcessorNewsContext) => Promise<void>;
  payFirst?: (ctx: ProcessorNewsContext) => Promise<void>;
  /** What GET .../terminal answers for the POS method's device. */
  terminal: { status: string; operating_mode: string | null };
  /** The device goes offline (or back online); omitted when the processor shows no connectivity (skipped). */
  setOffline?: (ctx: Omit<ProcessorNewsContext, 'payment'>, offline: boolean) => Promise<void>;
}

const urlOf = (input: RequestInfo | URL) =>
  typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;

/** Routes the Worker's outbound fetch to one simulator; anything else would be the network, which tests never reach. */
function installFetch(origin: string, simFetch: typeof fetch) {
  vi.spyOn(globalThis, 'fetch').mockImplementation((input, init) => {
    if (urlOf(input).startsWith(`${origin}/`)) return simFetch(input, init);
    return Promise.reject(new TypeError(`network access refused in tests: ${urlOf(input)}`));
  });
}

const uninstallFetch = () => vi.mocked(globalThis.fetch).mockRestore();

const postNotification = (methodId: string, rawBody: string, headers: Record<string, string>, query = '') =>
  call('POST', `/v1/processor-notifications/${methodId}${query}`, { rawBody, headers });

// ---------------------------------------------------------------------------------------------------------
// Sandbox: the built-in processor, driven by its test helpers.

function sandboxProfile(): Profile {
  const apiKey = `sbx-${crypto.randomUUID()}`;
  const helper = (ctx: ProcessorNewsContext, action: 'approve' | 'decline' | 'charge_back') =>
    call('POST', `/v1/test-helpers/payments/${ctx.payment.id}/${action}`, { token: ctx.token });
  const sent = async (ctx: ProcessorNewsContext, action: 'approve' | 'decline' | 'charge_back'): Promise<SentNews> => ({
    response: await helper(ctx, action),
    again: () => helper(ctx, action),
  });
  return {
    name: 'sandbox',
    currencies: { pos: 'USD', qr: 'USD' },
    install: () => {},
    uninstall: () => {},
    method: (channel) => ({
      connector_definition_version_id: channel === 'pos' ? 'cnv_sandbox_pos_v1' : 'cnv_sandbox_qr_v1',
      credentials: { api_key: apiKey },
    }),
    settleQr: (ctx, outcome) => sent(ctx, outcome === 'paid' ? 'approve' : 'decline'),
    settleTerminalCheck: (ctx) => sent(ctx, 'approve'),
    chargeBack: (ctx) => sent(ctx, 'charge_back'),
    dispute: {
      async open(ctx) {
        // Each call opens another dispute: `again` re-sends nothing new, it reads the dispute back.
        const response = await call('POST', `/v1/test-helpers/payments/${ctx.payment.id}/dispute`, {
          token: ctx.token,
        });
        return { response, again: () => call('GET', `/v1/disputes/${response.body.data.id}`, { token: ctx.token }) };
      },
      async close(ctx, dispute, outcome) {
        const close = () =>
          call('POST', `/v1/test-helpers/disputes/${dispute.id}/close`, { token: ctx.token, body: { outcome } });
        return { response: await close(), again: close };
      },
    },
    reportsSettlement: true,
    refundFailsLater: {
      prepare: () => {},
      async fail(ctx, refund) {
        const fail = () => call('POST', `/v1/test-helpers/refunds/${refund.id}/fail`, { token: ctx.token });
        return { response: await fail(), again: fail };
      },
    },
    counter: {
      value: '20.56',
      prepare: () => () => {},
      cancel: 'requested',
      // The service's next scheduled read (the cron, a minute later) finds the cancel done.
      completeCancel: async () => void (await onEveryShard((deps) => runTerminalChecks(deps, Date.now() + 60_000))),
      payFirst: async (ctx) => void (await helper(ctx, 'approve')),
      terminal: { status: 'online', operating_mode: null },
      async setOffline(ctx, offline) {
        const res = await call('POST', `/v1/test-helpers/payment-methods/${ctx.methodId}/terminal`, {
          token: ctx.token,
          body: { status: offline ? 'offline' : 'online' },
        });
        expect(res.status, res.text).toBe(200);
      },
    },
    async latePending(ctx) {
      // The sandbox's own signed notification, as its processor would send it.
      const rawBody = JSON.stringify({
        id: `sbxevt_${crypto.randomUUID()}`,
        resource: 'payment',
        reference: ctx.payment.processor_reference,
        status: 'pending',
      });
      const signature = await signSandboxNotification({ api_key: apiKey }, rawBody);
      return postNotification(ctx.methodId, rawBody, {
        'Content-Type': 'application/json',
        [SANDBOX_SIGNATURE_HEADER]: signature,
      });
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// Stripe: Terminal (USD, one reader) and PromptPay (THB) against the Stripe simulator.

function stripeProfile(): Profile {
  const READER = 'tmr_FlowCounter01';
  const sim = new StripeSimulator();
  const secretKey = `sk_test_${stripeId('k').slice(2)}`;
  const send = (methodId: string, delivery: SignedDelivery) =>
    postNotification(methodId, delivery.rawBody, delivery.headers);
  /** Our payment id → its Stripe dispute (`du_…`). */
  const stripeDisputes = new Map<string, string>();
  return {
    name: 'Stripe',
    currencies: { pos: 'USD', qr: 'THB' },
    install: () => installFetch(STRIPE_ORIGIN, sim.fetch),
    uninstall: uninstallFetch,
    method: (channel) => ({
      connector_definition_version_id: channel === 'pos' ? 'cnv_stripe_pos_v1' : 'cnv_stripe_qr_v1',
      credentials: { secret_key: secretKey, webhook_secret: sim.webhookSecret },
      configuration: channel === 'pos' ? { reader_id: READER } : { payment_method_type: 'promptpay' },
    }),
    async settleQr(ctx, outcome) {
      const delivery = await sim.settlePayment(
        ctx.payment.processor_reference!,
        outcome === 'paid' ? 'succeed' : 'decline',
      );
      return { response: await send(ctx.methodId, delivery), again: () => send(ctx.methodId, delivery) };
    },
    async latePending(ctx) {
      // The PaymentIntent's requires_action event (it was waiting for the scan), delivered after its success.
      return send(
        ctx.methodId,
        await sim.deliver(sim.eventFor('payment_intent.requires_action', ctx.payment.processor_reference!)),
      );
    },
    processorPaymentCount: (paymentId) => sim.paymentIntentCount(paymentId),
    // The reader waits for a card; Stripe cancels a payment on the reader at once (its NOTES.md).
    counter: {
      value: '20.00',
      prepare: () => {
        sim.readerMode = 'manual';
        return () => (sim.readerMode = 'auto');
      },
      cancel: 'immediate',
      terminal: { status: 'online', operating_mode: null },
      setOffline: async (_ctx, offline) => void sim.offlineReaders[offline ? 'add' : 'delete'](READER),
    },
    refundFailsLater: {
      prepare: () => sim.useTestCard(READER, REFUND_FAIL_CARD),
      async fail(ctx, refund) {
        sim.failAsyncRefunds();
        const delivery = await sim.deliver(sim.eventFor('charge.refund.updated', refund.processor_reference));
        return { response: await send(ctx.methodId, delivery), again: () => send(ctx.methodId, delivery) };
      },
    },
    dispute: {
      async open(ctx) {
        // A chargeback at Stripe: `charge.dispute.created`, then `charge.dispute.funds_withdrawn`.
        const dispute = sim.openDispute(ctx.payment.processor_reference!);
        stripeDisputes.set(ctx.payment.id, dispute.id);
        const created = await send(ctx.methodId, await sim.deliver(sim.eventFor('charge.dispute.created', dispute.id)));
        if (created.status !== 200) return { response: created, again: async () => created };
        const delivery = await sim.deliver(sim.eventFor('charge.dispute.funds_withdrawn', dispute.id));
        return { response: await send(ctx.methodId, delivery), again: () => send(ctx.methodId, delivery) };
      },
      async close(ctx, _dispute, outcome) {
        const id = stripeDisputes.get(ctx.payment.id)!;
        sim.closeDispute(id, outcome);
        if (outcome === 'won') {
          const reinstated = await send(
            ctx.methodId,
            await sim.deliver(sim.eventFor('charge.dispute.funds_reinstated', id)),
          );
          if (reinstated.status !== 200) return { response: reinstated, again: async () => reinstated };
        }
        const delivery = await sim.deliver(sim.eventFor('charge.dispute.closed', id));
        return { response: await send(ctx.methodId, delivery), again: () => send(ctx.methodId, delivery) };
      },
    },
    reportsSettlement: true,
    async chargeBack(ctx) {
      // Stripe's chargeback as it unfolds: the dispute opens and the funds are withdrawn (news, not final:
      // a dispute can still be won), then it closes lost. The PaymentIntent stays succeeded throughout.
      const dispute = sim.openDispute(ctx.payment.processor_reference!);
      for (const type of ['charge.dispute.created', 'charge.dispute.funds_withdrawn'] as const) {
        const response = await send(ctx.methodId, await sim.deliver(sim.eventFor(type, dispute.id)));
        if (response.status !== 200) return { response, again: async () => response };
      }
      sim.closeDispute(dispute.id, 'lost');
      const delivery = await sim.deliver(sim.eventFor('charge.dispute.closed', dispute.id));
      return { response: await send(ctx.methodId, delivery), again: () => send(ctx.methodId, delivery) };
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// Mercado Pago: Point (one terminal) and dynamic QR (one store POS) in ARS against the Orders API simulator.

function mercadoPagoProfile(): Profile {
  const sim = new MercadoPagoSimulator();
  let account: SimAccount | undefined;
  const TERMINAL = 'NEWLAND_N950__N950NCB801293324';
  const accountOf = () => {
    if (!account) {
      account = sim.addAccount({ currency: 'ARS' });
      sim.addTerminal(account, TERMINAL);
    }
    return account;
  };
  const send = (n: SimNotification) => call('POST', n.path, { rawBody: n.rawBody, headers: n.headers });
  /** Mercado Pago posts to the application's webhook URL: the method's notification route. */
  const notifyingTo = (methodId: string) =>
    (accountOf().notificationUrl = `http://localhost/v1/processor-notifications/${methodId}`);
  /** Something happens at Mercado Pago, and the notification of that event, signed as Mercado Pago signs it, is sent. */
  const news = async (ctx: ProcessorNewsContext, happen: () => void): Promise<SentNews> => {
    notifyingTo(ctx.methodId);
    happen();
    const n = (await sim.delivered(ctx.payment.processor_reference!)).at(-1)!;
    return { response: await send(n), again: () => send(n) };
  };
  return {
    name: 'Mercado Pago',
    currencies: { pos: 'ARS', qr: 'ARS' },
    install: () => installFetch(MP_BASE, sim.fetch),
    uninstall: uninstallFetch,
    method: (channel) => ({
      connector_definition_version_id: channel === 'pos' ? 'cnv_mercadopago_pos_v1' : 'cnv_mercadopago_qr_v1',
      credentials: { access_token: accountOf().accessToken, webhook_secret: accountOf().webhookSecret },
      configuration: channel === 'pos' ? { terminal_id: TERMINAL } : { external_pos_id: 'STORE001POS001' },
    }),
    async settleQr(ctx, outcome) {
      const orderId = ctx.payment.processor_reference!;
      return news(ctx, () => (outcome === 'paid' ? sim.pay(orderId) : sim.decline(orderId)));
    },
    // The operator checked the terminal: Mercado Pago processes the Point order and notifies it.
    settleTerminalCheck: (ctx) => news(ctx, () => sim.pay(ctx.payment.processor_reference!)),
    chargeBack: (ctx) => news(ctx, () => sim.chargeBack(ctx.payment.processor_reference!)),
    // A chargeback opened on the order, then decided; each change notified on the order (`order.charged_back`),
    // which the service answers by reading the order and its chargebacks (NOTES.md, "Chargebacks as disputes").
    dispute: {
      open: (ctx) => news(ctx, () => sim.chargeBack(ctx.payment.processor_reference!, { reason: 'fraudulent' })),
      close: (ctx, _dispute, outcome) =>
        news(ctx, () => sim.decideChargeback(ctx.payment.processor_reference!, outcome)),
      differs: { noFundsDates: true, summaryWhenOpened: true },
    },
    reportsSettlement: false,
    async latePending(ctx) {
      notifyingTo(ctx.methodId);
      const orderId = ctx.payment.processor_reference!;
      // The `order.created` news, arriving after the payment was settled (its body says `created`).
      return send(
        await sim.notification(orderId, {
          event: {
            orderId,
            action: 'order.created',
            data: { id: orderId, status: 'created', status_detail: 'created', type: 'qr' },
          },
        }),
      );
    },
    processorPaymentCount: (paymentId) => sim.ordersFor(paymentId).length,
    // A Point Smart terminal: the order waits at_terminal, its cancel is accepted with 202 and notified later;
    // one order per terminal, as Mercado Pago keeps it. The terminals API shows no connectivity.
    counter: {
      value: '20.00',
      prepare: () => {
        Object.assign(sim.faults, {
          pointWaitsAtTerminal: true,
          cancelAtTerminal: 'accepted',
          oneOrderPerTerminal: true,
        });
        return () => sim.resetFaults();
      },
      cancel: 'requested',
      completeCancel: async (ctx) =>
        void (await news(ctx, () => sim.completeCancellation(ctx.payment.processor_reference!))).response,
      payFirst: async (ctx) => void (await news(ctx, () => sim.pay(ctx.payment.processor_reference!))).response,
      terminal: { status: 'unknown', operating_mode: 'pdv' },
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// Adyen: Terminal API over the Cloud device API (one terminal, USD) and Checkout Pix (BRL) against its simulator.

function adyenProfile(): Profile {
  const sim = new AdyenSimulator();
  const POIID = 'S1F2-000158215131748';
  sim.addTerminal(POIID);
  const send = (methodId: string, delivery: { rawBody: string; headers?: Record<string, string> }) =>
    postNotification(methodId, delivery.rawBody, delivery.headers ?? { 'Content-Type': 'application/json' });
  const sent = async (
    ctx: ProcessorNewsContext,
    delivery: SignedWebhook | Promise<SignedWebhook>,
  ): Promise<SentNews> => {
    const d = await delivery;
    return { response: await send(ctx.methodId, d), again: () => send(ctx.methodId, d) };
  };
  /** The terminal's own (unsigned) event notification of the payment, which makes the service read the terminal. */
  const terminalEvent = async (ctx: ProcessorNewsContext) => {
    const res = await send(ctx.methodId, { rawBody: sim.terminalEvents.at(-1)! });
    expect(res.status, res.text).toBe(200);
  };
  const pspOf = (payment: Payment) =>
    payment.processor_reference?.startsWith('pay_')
      ? sim.pspOfTerminalPayment(payment.processor_reference)
      : payment.processor_reference!;
  return {
    name: 'Adyen',
    currencies: { pos: 'USD', qr: 'BRL' },
    install: () => {
      vi.spyOn(globalThis, 'fetch').mockImplementation((input, init) => {
        const url = urlOf(input);
        if (url.startsWith(`${ADYEN_CHECKOUT_ORIGIN}/`) || url.startsWith(`${ADYEN_DEVICE_ORIGIN}/`))
          return sim.fetch(input, init);
        return Promise.reject(new TypeError(`network access refused in tests: ${url}`));
      });
    },
    uninstall: uninstallFetch,
    method: (channel) => ({
      connector_definition_version_id: channel === 'pos' ? 'cnv_adyen_pos_v1' : 'cnv_adyen_qr_v1',
      credentials: { api_key: sim.apiKey, merchant_account: sim.merchantAccount, hmac_key: sim.hmacKey },
      configuration: channel === 'pos' ? { poiid: POIID } : { return_url: 'https://shop.example/return' },
    }),
    settleQr: (ctx, outcome) => sent(ctx, sim.settleQr(ctx.payment.processor_reference!, outcome)),
    processorPaymentCount: (paymentId) => sim.terminalPaymentCount(paymentId),
    refundNews: (ctx) => sent(ctx, sim.lastDelivery('REFUND')),
    cancelNews: (ctx) =>
      sent(ctx, sim.lastDelivery(ctx.payment.status === 'approved' ? 'CANCEL_OR_REFUND' : 'CANCELLATION')),
    qrExpiry: (ctx) => sent(ctx, sim.paymentEvent(ctx.payment.processor_reference!, 'OFFER_CLOSED')),
    refundFailureReason: 'declined',
    refundFailsLater: {
      prepare: () => {},
      fail: (ctx, refund) => sent(ctx, sim.failRefund(refund.processor_reference, 'REFUND_FAILED')),
    },
    dispute: {
      async open(ctx) {
        // Adyen's dispute as it unfolds: announced (NOTIFICATION_OF_CHARGEBACK), then the funds deducted (CHARGEBACK).
        const announced = await sent(ctx, sim.disputeEvent(pspOf(ctx.payment), 'NOTIFICATION_OF_CHARGEBACK'));
        if (announced.response.status !== 200) return announced;
        return sent(ctx, sim.disputeEvent(pspOf(ctx.payment), 'CHARGEBACK'));
      },
      // Won: defended successfully (CHARGEBACK_REVERSED); lost: the defence period ended undefended.
      close: (ctx, _dispute, outcome) =>
        sent(
          ctx,
          sim.disputeEvent(
            pspOf(ctx.payment),
            outcome === 'won' ? 'CHARGEBACK_REVERSED' : 'DISPUTE_DEFENSE_PERIOD_ENDED',
          ),
        ),
    },
    async chargeBack(ctx) {
      const opened = await sent(ctx, sim.disputeEvent(pspOf(ctx.payment), 'CHARGEBACK'));
      if (opened.response.status !== 200) return opened;
      return sent(ctx, sim.disputeEvent(pspOf(ctx.payment), 'DISPUTE_DEFENSE_PERIOD_ENDED'));
    },
    reportsSettlement: false,
    // The terminal waits for the card; the cancel is an AbortRequest the terminal carries out, told by its event.
    counter: {
      value: '20.00',
      prepare: () => {
        sim.terminalMode = 'manual';
        sim.abortsLand = 'on_demand';
        return () => {
          sim.terminalMode = 'auto';
          sim.abortsLand = 'at_once';
        };
      },
      cancel: 'requested',
      async completeCancel(ctx) {
        sim.landAborts();
        await terminalEvent(ctx);
      },
      async payFirst(ctx) {
        sim.customerPays(ctx.payment.id);
        await terminalEvent(ctx);
      },
      terminal: { status: 'online', operating_mode: null },
      setOffline: async (_ctx, offline) => void sim.offlineTerminals[offline ? 'add' : 'delete'](POIID),
    },
  };
}

const PROFILES: Profile[] = [sandboxProfile(), stripeProfile(), mercadoPagoProfile(), adyenProfile()];

// ---------------------------------------------------------------------------------------------------------
// Where every merchant starts, whatever its processor: an account, an API key, the session and the contract.

describe('a first flow', () => {
  it('logs in, creates an API key, and uses it', async () => {
    const admin = await seedSession({ role: 'admin' });
    const me = await call('GET', '/v1/auth/me', { token: admin.accessToken });
    expect(me.status).toBe(200);
    expect(me.body.data.role).toBe('admin');
    const key = await createKey(admin, ['payments:read']);
    expect(key.secret).toMatch(/^sk_test_[A-Za-z0-9_-]{43}$/);
    const list = await call('GET', '/v1/account/api-keys', { token: admin.accessToken });
    expect(list.status).toBe(200);
    expect(list.body.pagination).toEqual({ limit: 50, offset: 0, total: 1, has_more: false });
    expect(list.text).not.toContain(key.secret);
    const refreshed = await call('POST', '/v1/auth/refresh', { body: { refresh_token: admin.refreshToken } });
    expect(refreshed.status).toBe(201);
    const reuse = await call('POST', '/v1/auth/refresh', { body: { refresh_token: admin.refreshToken } });
    expect(reuse.status).toBe(401);
    const after = await call('POST', '/v1/auth/refresh', {
      body: { refresh_token: refreshed.body.data.refresh_token },
    });
    expect(after.status).toBe(401);
    const spec = await call('GET', '/openapi.json');
    expect(spec.status).toBe(200);
    expect(spec.body.openapi).toBe('3.1.0');
  });
});

// ---------------------------------------------------------------------------------------------------------
// The suite: identical for every profile.

describe.each(PROFILES)('the payment flow with the $name connectors', (profile) => {
  let session: Session;
  let apiKey: { id: string; secret: string };
  const methods = {} as Record<Channel, string>;

  beforeAll(async () => {
    profile.install();
    session = await seedSession();
    apiKey = await createKey(session);
    for (const channel of ['pos', 'qr'] as const) {
      const spec = profile.method(channel);
      const created = await call('POST', '/v1/account/payment-methods', {
        token: session.accessToken,
        body: { name: `Flow ${channel}`, ...spec },
      });
      expect(created.status, created.text).toBe(201);
      expect(created.body.data).toMatchObject({
        type: channel,
        capabilities: ['payments', 'refunds', 'cancellations'],
      });
      methods[channel] = created.body.data.id;
      const link = await call('POST', `/v1/account/payment-methods/${methods[channel]}/api-keys`, {
        token: session.accessToken,
        body: { api_key_id: apiKey.id },
      });
      expect(link.status, link.text).toBe(201);
    }
  });

  afterAll(() => profile.uninstall());

  const bodyFor = (channel: Channel, value: string, reference = `order-${crypto.randomUUID()}`) => ({
    amount: { value, currency: profile.currencies[channel] },
    external_reference: reference,
    payment_method: methods[channel],
  });
  const pay = (body: unknown, key: string = crypto.randomUUID()) =>
    call('POST', '/v1/payments', { token: apiKey.secret, body, headers: { 'Idempotency-Key': key } });
  const get = (id: string) => call('GET', `/v1/payments/${id}`, { token: apiKey.secret });
  const cancel = (id: string, key: string = crypto.randomUUID()) =>
    call('POST', `/v1/payments/${id}/cancel`, { token: apiKey.secret, headers: { 'Idempotency-Key': key } });
  /** A refund, and where the processor tells its outcome later, that news: the answer is then the refund as it reads after. */
  const refund = async (payment: Payment, value: string, key: string = crypto.randomUUID()): Promise<ApiResponse> => {
    const res = await call('POST', `/v1/payments/${payment.id}/refunds`, {
      token: apiKey.secret,
      body: { amount: { value, currency: (payment.amount as { currency: string }).currency } },
      headers: { 'Idempotency-Key': key },
    });
    if (res.status !== 201 || !profile.refundNews) return res;
    expect(res.body.data.status).toBe('pending');
    const channel = payment.payment_method === methods.qr ? 'qr' : 'pos';
    const sent = await profile.refundNews(news(payment, channel), res.body.data);
    expect(sent.response.status, sent.response.text).toBe(200);
    const read = await call('GET', `/v1/payments/${payment.id}/refunds/${res.body.data.id}`, { token: apiKey.secret });
    return { ...read, status: res.status };
  };
  const eventTypes = async (id: string): Promise<string[]> => {
    const res = await call('GET', `/v1/payments/${id}/events?limit=100`, { token: apiKey.secret });
    expect(res.status, res.text).toBe(200);
    return (res.body.data as { type: string }[]).map((e) => e.type);
  };
  const news = (payment: Payment, channel: Channel = 'qr'): ProcessorNewsContext => ({
    methodId: methods[channel],
    token: apiKey.secret,
    payment,
  });

  async function approvedPos(value = '100.00'): Promise<Payment> {
    const res = await pay(bodyFor('pos', value));
    expect(res.status, res.text).toBe(201);
    expect(res.body.data.status).toBe('approved');
    return res.body.data;
  }

  async function pendingQr(value = '40.00'): Promise<Payment> {
    const res = await pay(bodyFor('qr', value));
    expect(res.status, res.text).toBe(201);
    expect(res.body.data.status).toBe('pending');
    return res.body.data;
  }

  /** The payment the service kept for a request that got no payment back (504/503 name none). */
  async function keptPayment(reference: string) {
    const rows = await paymentRowsByReference(reference);
    expect(rows).toHaveLength(1);
    return rows[0]!;
  }

  describe('POS', () => {
    it('approved with action none; the replay with the same key is byte-identical; the external_reference cannot be reused', async () => {
      const body = bodyFor('pos', '25.00');
      const key = crypto.randomUUID();
      const res = await pay(body, key);
      expect(res.status, res.text).toBe(201);
      expect(res.body.data).toMatchObject({
        status: 'approved',
        action: { type: 'none' },
        amount: { value: '25.00', currency: profile.currencies.pos },
        external_reference: body.external_reference,
      });
      expect(res.body.data.processor_reference).toEqual(expect.any(String));
      // What the processor kept: reported as it booked it, or null with the documented reason.
      const read = (await get(res.body.data.id)).body.data;
      if (profile.reportsSettlement) {
        expect(read.settlement_null_reason, JSON.stringify(read)).toBeNull();
        expect(Object.keys(read.settlement)).toEqual(['fee', 'net', 'available_on']);
        expect(Number(read.settlement.fee.value) + Number(read.settlement.net.value)).toBeCloseTo(25, 2);
      } else {
        expect(read).toMatchObject({ settlement: null, settlement_null_reason: 'not_reported' });
      }

      const replay = await pay(body, key);
      expect(replay.status).toBe(201);
      expect(replay.text).toBe(res.text);
      if (profile.processorPaymentCount) expect(profile.processorPaymentCount(res.body.data.id)).toBe(1);

      expectError(await pay(body), 409, 'external_reference_conflict');
      expectError(
        await pay({ ...body, amount: { value: '26.00', currency: profile.currencies.pos } }),
        409,
        'external_reference_conflict',
      );
      expect((await get(res.body.data.id)).body.data.status).toBe('approved');
    });

    it('ending 51 → 201 declined', async () => {
      const res = await pay(bodyFor('pos', '10.51'));
      expect(res.status, res.text).toBe(201);
      expect(res.body.data.status).toBe('declined');
      expect((await get(res.body.data.id)).body.data.status).toBe('declined');
    });

    it('ending 54 → 201 failed', async () => {
      const res = await pay(bodyFor('pos', '10.54'));
      expect(res.status, res.text).toBe(201);
      expect(res.body.data.status).toBe('failed');
    });

    it('ending 52 → 504 processor_timeout, the payment kept pending; the retry with the same key → 201 approved, the same payment, one at the processor', async () => {
      const body = bodyFor('pos', '10.52');
      const key = crypto.randomUUID();
      const first = await pay(body, key);
      const error = expectError(first, 504, 'processor_timeout');
      expect(error.retryable).toBe(true);
      const kept = await keptPayment(body.external_reference);
      expect(kept.status).toBe('pending');
      expect((await get(kept.id)).body.data.status).toBe('pending');

      const retry = await pay(body, key);
      expect(retry.status, retry.text).toBe(201);
      expect(retry.body.data).toMatchObject({ id: kept.id, status: 'approved', action: { type: 'none' } });
      if (profile.processorPaymentCount) expect(profile.processorPaymentCount(kept.id)).toBe(1);
      expect((await pay(body, key)).text).toBe(retry.text);
    });

    it('ending 53 → 503 processor_unavailable, the payment kept created; the retry with the same key → 201 approved', async () => {
      const body = bodyFor('pos', '10.53');
      const key = crypto.randomUUID();
      const error = expectError(await pay(body, key), 503, 'processor_unavailable');
      expect(error.retryable).toBe(true);
      const kept = await keptPayment(body.external_reference);
      expect(kept.status).toBe('created');

      const retry = await pay(body, key);
      expect(retry.status, retry.text).toBe(201);
      expect(retry.body.data).toMatchObject({ id: kept.id, status: 'approved', action: { type: 'none' } });
      if (profile.processorPaymentCount) expect(profile.processorPaymentCount(kept.id)).toBe(1);
    });
  });

  describe('outcomes the merchant must act on', () => {
    it.runIf(profile.settleTerminalCheck)(
      'POS ending 55 → 201 pending with action check_terminal, told once, not cancelable; the terminal’s outcome settles it',
      async () => {
        const res = await pay(bodyFor('pos', '10.55'));
        expect(res.status, res.text).toBe(201);
        expect(res.body.data).toMatchObject({ status: 'pending', action: { type: 'check_terminal' } });
        const payment: Payment = res.body.data;
        expect((await get(payment.id)).body.data.action).toEqual({ type: 'check_terminal' });
        expect(await eventTypes(payment.id)).toEqual(['payment.action_required']);
        const refused = expectError(await cancel(payment.id), 409, 'invalid_state_transition');
        expect(refused.details).toMatchObject({ action: 'check_terminal' });

        const sent = await profile.settleTerminalCheck!(news(payment, 'pos'));
        expect(sent.response.status, sent.response.text).toBe(200);
        const settled = (await get(payment.id)).body.data;
        expect(settled.status).toBe('approved');
        expect(settled.action).toBeUndefined();
        expect((await sent.again()).status).toBe(200);
        expect((await eventTypes(payment.id)).filter((t) => t === 'payment.approved')).toHaveLength(1);
      },
    );

    it.runIf(profile.chargeBack)(
      'an approved POS payment charged back → still approved, charged_back_at set, told once; no refund, no cancel',
      async () => {
        const payment = await approvedPos('70.00');
        expect(payment.charged_back_at).toBeNull();
        const sent = await profile.chargeBack!(news(payment, 'pos'));
        expect(sent.response.status, sent.response.text).toBe(200);
        const read = (await get(payment.id)).body.data;
        // The interface's states are closed: the chargeback is a field, never a pending-looking status.
        expect(read.status).toBe('approved');
        expect(Date.parse(read.charged_back_at)).toBeGreaterThanOrEqual(Date.parse(payment.updated_at));
        expect(read.updated_at).toBe(read.charged_back_at);
        const refused = expectError(await refund(payment, '1.00'), 409, 'invalid_state_transition');
        expect(refused.details).toMatchObject({ status: 'approved', charged_back_at: read.charged_back_at });
        expectError(await cancel(payment.id), 409, 'invalid_state_transition');
        expect((await sent.again()).status).toBe(200);
        expect((await get(payment.id)).body.data).toEqual(read);
        expect((await eventTypes(payment.id)).filter((t) => t === 'payment.charged_back')).toHaveLength(1);
      },
    );

    it.runIf(profile.dispute)(
      'a dispute opened (funds withdrawn) and won (reinstated), another lost (charged_back_at): through the API and the events',
      async () => {
        const disputesOf = async (payment: Payment) => {
          const res = await call('GET', `/v1/payments/${payment.id}/disputes`, { token: apiKey.secret });
          expect(res.status, res.text).toBe(200);
          return res.body.data as { id: string; status: string; [key: string]: unknown }[];
        };
        const count = (types: string[], type: string) => types.filter((t) => t === type).length;

        const { noFundsDates, summaryWhenOpened } = profile.dispute!.differs ?? {};
        const aDate = expect.any(String);
        const payment = await approvedPos('80.00');
        const opened = await profile.dispute!.open(news(payment, 'pos'));
        expect(opened.response.status, opened.response.text).toBe(200);
        const [dispute] = await disputesOf(payment);
        expect(dispute).toMatchObject({
          payment_id: payment.id,
          status: 'needs_response',
          amount: payment.amount,
          reason: 'fraudulent',
          funds_reinstated_at: null,
        });
        expect(dispute!.funds_withdrawn_at).toEqual(noFundsDates ? null : aDate);
        expect(dispute!.evidence_due_by).toEqual(expect.any(String));
        expect((await opened.again()).status).toBe(200);
        expect(await disputesOf(payment)).toHaveLength(1);
        const summary = summaryWhenOpened ? aDate : null;
        expect((await get(payment.id)).body.data).toMatchObject({ status: 'approved', charged_back_at: summary });

        const won = await profile.dispute!.close(news(payment, 'pos'), dispute!, 'won');
        expect(won.response.status, won.response.text).toBe(200);
        const read = await call('GET', `/v1/disputes/${dispute!.id}`, { token: apiKey.secret });
        expect(read.body.data).toMatchObject({ id: dispute!.id, status: 'won' });
        expect(read.body.data.funds_reinstated_at).toEqual(noFundsDates ? null : aDate);
        expect((await won.again()).status).toBe(200);
        expect((await get(payment.id)).body.data).toMatchObject({ status: 'approved', charged_back_at: summary });
        const told = await eventTypes(payment.id);
        expect([count(told, 'dispute.created'), count(told, 'dispute.closed')]).toEqual([1, 1]);
        expect(count(told, 'payment.charged_back')).toBe(summaryWhenOpened ? 1 : 0);

        const other = await approvedPos('81.00');
        await profile.dispute!.open(news(other, 'pos'));
        const [second] = await disputesOf(other);
        const lost = await profile.dispute!.close(news(other, 'pos'), second!, 'lost');
        expect(lost.response.status, lost.response.text).toBe(200);
        expect((await disputesOf(other))[0]).toMatchObject({
          id: second!.id,
          status: 'lost',
          funds_reinstated_at: null,
        });
        const charged = (await get(other.id)).body.data;
        expect(charged.status).toBe('approved');
        expect(charged.charged_back_at).toEqual(expect.any(String));
        expectError(await refund(other, '1.00'), 409, 'invalid_state_transition');
        const toldLost = await eventTypes(other.id);
        expect([count(toldLost, 'dispute.closed'), count(toldLost, 'payment.charged_back')]).toEqual([1, 1]);
        const listed = await call('GET', '/v1/disputes?status=lost&limit=100', { token: apiKey.secret });
        expect(listed.body.data.map((d: { id: string }) => d.id)).toContain(second!.id);
      },
    );
  });

  describe('QR', () => {
    it('pending with a QR code shown while pending; the buyer pays → approved through the processor’s news; repeated and late news change nothing', async () => {
      const payment = await pendingQr();
      expect(payment.action).toMatchObject({ type: 'display_qr', qr_data: expect.stringMatching(/\S/) });
      const read = await get(payment.id);
      expect(read.body.data.status).toBe('pending');
      expect(read.body.data.action).toEqual(payment.action);

      const sent = await profile.settleQr(news(payment), 'paid');
      expect(sent.response.status, sent.response.text).toBe(200);
      const approved = (await get(payment.id)).body.data;
      expect(approved.status).toBe('approved');
      expect(approved.updated_at > payment.updated_at).toBe(true);
      expect((await eventTypes(payment.id)).filter((t) => t === 'payment.approved')).toHaveLength(1);

      const again = await sent.again();
      expect(again.status, again.text).toBe(200);
      if (profile.latePending) {
        const late = await profile.latePending(news(payment));
        expect(late.status, late.text).toBe(200);
      }
      const after = (await get(payment.id)).body.data;
      expect(after).toEqual(approved);
      expect((await eventTypes(payment.id)).filter((t) => t === 'payment.approved')).toHaveLength(1);
    });

    it('nobody pays → expired (by the processor’s news where it sends one, else the service’s expiry job), told once', async () => {
      const payment = await pendingQr('40.07');
      if (profile.qrExpiry) {
        const sent = await profile.qrExpiry(news(payment));
        expect(sent.response.status, sent.response.text).toBe(200);
        expect((await sent.again()).status).toBe(200);
      } else {
        await onEveryShard((deps) => expireQrPayments(deps, Date.now() + 86_400_000 + 1, 10_000));
      }
      expect((await get(payment.id)).body.data.status).toBe('expired');
      expect((await eventTypes(payment.id)).filter((t) => t === 'payment.expired')).toHaveLength(1);
    });

    it('the buyer’s bank declines → declined', async () => {
      const payment = await pendingQr('40.51');
      const sent = await profile.settleQr(news(payment), 'declined');
      expect(sent.response.status, sent.response.text).toBe(200);
      expect((await get(payment.id)).body.data.status).toBe('declined');
      expect(await eventTypes(payment.id)).toContain('payment.declined');
    });
  });

  describe('refunds', () => {
    it('partial, declined (ending 61, balance unchanged), the full remainder, then nothing left', async () => {
      const payment = await approvedPos('100.00');
      const partial = await refund(payment, '30.00');
      expect(partial.status, partial.text).toBe(201);
      expect(partial.body.data).toMatchObject({
        status: 'approved',
        payment_id: payment.id,
        amount: { value: '30.00', currency: profile.currencies.pos },
      });
      expect((await get(payment.id)).body.data.status).toBe('partially_refunded');

      const declined = await refund(payment, '10.61');
      expect(declined.status, declined.text).toBe(201);
      expect(declined.body.data.status).toBe('declined');
      expect((await get(payment.id)).body.data.status).toBe('partially_refunded');

      // The declined refund took nothing: the remainder is still 70.00.
      const rest = await refund(payment, '70.00');
      expect(rest.status, rest.text).toBe(201);
      expect(rest.body.data.status).toBe('approved');
      expect((await get(payment.id)).body.data.status).toBe('refunded');

      // Refunds are allowed from approved and partially_refunded only (docs/states.md).
      expectError(await refund(payment, '0.01'), 409, 'invalid_state_transition');
      expect((await get(payment.id)).body.data.status).toBe('refunded');
    });

    it.runIf(profile.refundFailsLater)(
      'an approved refund that fails later → failed with its reason, the payment collected again, told once; the money refundable again',
      async () => {
        profile.refundFailsLater!.prepare();
        const payment = await approvedPos('30.00');
        const made = await refund(payment, '30.00');
        expect(made.body.data).toMatchObject({ status: 'approved', failure_reason: null });
        expect((await get(payment.id)).body.data.status).toBe('refunded');

        const sent = await profile.refundFailsLater!.fail(news(payment, 'pos'), made.body.data);
        expect(sent.response.status, sent.response.text).toBe(200);
        const read = await call('GET', `/v1/payments/${payment.id}/refunds/${made.body.data.id}`, {
          token: apiKey.secret,
        });
        expect(read.body.data).toMatchObject({
          status: 'failed',
          failure_reason: profile.refundFailureReason ?? 'expired_or_canceled_card',
        });
        const collected = (await get(payment.id)).body.data;
        expect(collected.status).toBe('approved');
        expect((await sent.again()).status).toBe(200);
        expect((await get(payment.id)).body.data).toEqual(collected);
        expect((await eventTypes(payment.id)).filter((t) => t === 'refund.failed')).toHaveLength(1);

        const again = await refund(payment, '30.00');
        expect(again.body.data.status).toBe('approved');
        expect((await get(payment.id)).body.data.status).toBe('refunded');
      },
    );

    it('a pending QR payment cannot be refunded: 409 invalid_state_transition', async () => {
      const payment = await pendingQr();
      expectError(await refund(payment, '1.00'), 409, 'invalid_state_transition');
      expect((await get(payment.id)).body.data.status).toBe('pending');
    });
  });

  describe('cancel', () => {
    it('a pending QR payment → 200 canceled (or 202, completed by the processor’s news)', async () => {
      const payment = await pendingQr();
      const res = await cancel(payment.id);
      if (profile.cancelNews) {
        expect(res.status, res.text).toBe(202);
        const sent = await profile.cancelNews(news(payment));
        expect(sent.response.status, sent.response.text).toBe(200);
      } else {
        expect(res.status, res.text).toBe(200);
        expect(res.body.data.status).toBe('canceled');
      }
      expect((await get(payment.id)).body.data.status).toBe('canceled');
    });

    it('an approved POS payment with no refund is voided → 200 canceled; again with a new key → 409, with the same key the replay', async () => {
      const payment = await approvedPos('60.00');
      const key = crypto.randomUUID();
      const res = await cancel(payment.id, key);
      if (profile.cancelNews) {
        // The processor accepted the void and carries it out later: 202 with cancel_requested_at, and no refund may
        // go out meanwhile (it would pay out twice); the processor's news then voids the payment.
        expect(res.status, res.text).toBe(202);
        expect(res.body.data).toMatchObject({ status: 'approved', cancel_requested_at: expect.any(String) });
        expectError(await refund(payment, '1.00'), 409, 'invalid_state_transition');
        expect((await cancel(payment.id)).status).toBe(202);
        const sent = await profile.cancelNews(news(payment, 'pos'));
        expect(sent.response.status, sent.response.text).toBe(200);
        expect((await get(payment.id)).body.data.status).toBe('canceled');
        expect((await sent.again()).status).toBe(200);
        expect((await eventTypes(payment.id)).filter((t) => t === 'payment.canceled')).toHaveLength(1);
        return;
      }
      expect(res.status, res.text).toBe(200);
      expect(res.body.data.status).toBe('canceled');
      expectError(await cancel(payment.id), 409, 'invalid_state_transition');
      const replay = await cancel(payment.id, key);
      expect(replay.status).toBe(200);
      expect(replay.text).toBe(res.text);
      expect((await get(payment.id)).body.data.status).toBe('canceled');
    });
  });

  describe('at the counter', () => {
    const { counter } = profile;
    const terminal = () => call('GET', `/v1/payment-methods/${methods.pos}/terminal`, { token: apiKey.secret });

    async function atTerminal(): Promise<Payment> {
      const res = await pay(bodyFor('pos', counter.value));
      expect(res.status, res.text).toBe(201);
      expect(res.body.data).toMatchObject({
        status: 'pending',
        action: { type: 'at_terminal' },
        cancel_requested_at: null,
      });
      return res.body.data;
    }

    it('the terminal behind the POS method', async () => {
      const res = await terminal();
      expect(res.status, res.text).toBe(200);
      expect(res.body.data).toMatchObject({ payment_method: methods.pos, ...counter.terminal });
      expect(res.body.data.processor_id).toEqual(expect.any(String));
    });

    it('send to the terminal, the customer leaves, cancel: canceled (at once, or 202 then completed), and the terminal is free', async () => {
      const undo = counter.prepare();
      try {
        const payment = await atTerminal();
        const key = crypto.randomUUID();
        const res = await cancel(payment.id, key);
        if (counter.cancel === 'requested') {
          expect(res.status, res.text).toBe(202);
          expect(res.body.data).toMatchObject({ status: 'pending', cancel_requested_at: expect.any(String) });
          expect((await cancel(payment.id, key)).text).toBe(res.text);
          await counter.completeCancel!(news(payment, 'pos'));
        } else {
          expect(res.status, res.text).toBe(200);
        }
        expect((await get(payment.id)).body.data.status).toBe('canceled');
        expect(await eventTypes(payment.id)).toContain('payment.canceled');
        // The terminal is free: the next payment reaches it (a busy one would answer 409 terminal_unavailable).
        const next = await atTerminal();
        const freed = await cancel(next.id);
        expect(freed.status).toBe(counter.cancel === 'requested' ? 202 : 200);
        if (counter.cancel === 'requested') await counter.completeCancel!(news(next, 'pos'));
        expect((await get(next.id)).body.data.status).toBe('canceled');
      } finally {
        undo();
      }
    });

    it.runIf(counter.cancel === 'requested')(
      'cancel requested, but the customer pays first: approved, told by payment.approved',
      async () => {
        const undo = counter.prepare();
        try {
          const payment = await atTerminal();
          expect((await cancel(payment.id)).status).toBe(202);
          await counter.payFirst!(news(payment, 'pos'));
          const read = (await get(payment.id)).body.data;
          // The cancel it had requested is over: `cancel_requested_at` clears when the payment resolves otherwise.
          expect(read).toMatchObject({ status: 'approved', cancel_requested_at: null });
          expect(await eventTypes(payment.id)).toContain('payment.approved');
        } finally {
          undo();
        }
      },
    );

    it.runIf(counter.setOffline)(
      'an offline terminal refuses a payment at once (409 terminal_unavailable); back online, the same key succeeds',
      async () => {
        const ctx = { methodId: methods.pos, token: apiKey.secret };
        const body = bodyFor('pos', '27.00');
        const key = crypto.randomUUID();
        await counter.setOffline!(ctx, true);
        try {
          const refused = expectError(await pay(body, key), 409, 'terminal_unavailable');
          expect(refused.details).toMatchObject({ terminal_status: 'offline' });
        } finally {
          await counter.setOffline!(ctx, false);
        }
        const paid = await pay(body, key);
        expect(paid.status, paid.text).toBe(201);
        expect(paid.body.data.status).toBe('approved');
      },
    );
  });
});
