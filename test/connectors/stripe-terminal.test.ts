import type Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { displayFromConfiguration, displayIssues } from '../../src/connectors/display.ts';
import { stripePosV1, stripeQrV1 } from '../../src/connectors/stripe/index.ts';
import {
  encodeForm,
  READER_ACTION_ACTIVITY,
  READER_EVENT_TYPES,
  READER_UNAVAILABLE_CODES,
  readerDisplayParams,
  readerTerminalState,
} from '../../src/connectors/stripe/transformers.ts';
import { type CreatePaymentInput, type TerminalDisplay, TerminalUnavailableError } from '../../src/connectors/types.ts';
import { connectorError } from '../helpers/connectors.ts';
import { posConfig, READER, stripeCtx, stripeLookup, stripePayment } from '../helpers/stripe.ts';
import { parseForm, StripeSimulator } from '../simulators/stripe.ts';

/**
 * Stripe Terminal at the counter: the reader as a terminal (GET /v1/terminal/readers/{id}), the cart shown
 * before the card (set_reader_display), an offline or busy reader refusing at once, the reader events, and
 * the cancel of a payment on the reader (synchronous at Stripe).
 */

const pos = stripePosV1.adapter;
const ctx = (sim: StripeSimulator, config: Record<string, unknown> = {}) => stripeCtx(sim, posConfig(config));

const usd = (minor: number) => ({ minor, currency: 'USD' });
const cart = (total = 2500): TerminalDisplay => ({
  lines: [
    { description: 'Flat white', quantity: 2, amount: usd(900) },
    { description: 'Croissant', quantity: 1, amount: usd(500) },
  ],
  tax: usd(200),
  total: usd(total),
});
/** `cart()` as Stripe reads it from the form body: every value a string. */
const CART_FORM = {
  type: 'cart',
  cart: {
    currency: 'usd',
    line_items: [
      { amount: '900', description: 'Flat white', quantity: '2' },
      { amount: '500', description: 'Croissant', quantity: '1' },
    ],
    tax: '200',
    total: '2500',
  },
};
const withDisplay = (input: CreatePaymentInput, display: TerminalDisplay = cart(input.amount.minor)) => ({
  ...input,
  display,
});

describe('getTerminal: the reader', () => {
  it('online and idle; then busy with the payment it collects, named by its PaymentIntent', async () => {
    const sim = new StripeSimulator({ readerMode: 'manual' });
    expect(await pos.getTerminal!(ctx(sim))).toEqual({
      processorId: READER,
      status: 'online',
      processorStatus: 'online',
    });
    const pi = (await pos.createPayment(ctx(sim), stripePayment(2500))).processorReference!;
    expect(await pos.getTerminal!(ctx(sim))).toEqual({
      processorId: READER,
      status: 'busy',
      busyWith: { kind: 'payment', processorReference: pi },
      processorStatus: 'online/process_payment_intent:in_progress',
    });
    sim.presentCard(READER);
    expect((await pos.getTerminal!(ctx(sim))).status).toBe('online');
    const [get] = sim.requestsTo('GET', `/v1/terminal/readers/${READER}`).slice(-1);
    expect(get!.headers['stripe-version']).toBe('2024-06-20');
  });

  it('busy with another integration’s refund or card saving, normalized', async () => {
    const sim = new StripeSimulator();
    sim.occupyReader(READER, 'refund_payment');
    expect((await pos.getTerminal!(ctx(sim))).busyWith).toEqual({ kind: 'refund', processorReference: null });
    sim.occupyReader(READER, 'process_setup_intent');
    expect((await pos.getTerminal!(ctx(sim))).busyWith).toEqual({ kind: 'setup', processorReference: null });
  });

  it('offline (no signal for 2 minutes at Stripe): offline, with the action it was left doing', async () => {
    const sim = new StripeSimulator({ readerMode: 'manual' });
    const pi = (await pos.createPayment(ctx(sim), stripePayment(2500))).processorReference!;
    sim.offlineReaders.add(READER);
    expect(await pos.getTerminal!(ctx(sim))).toMatchObject({
      status: 'offline',
      busyWith: { kind: 'payment', processorReference: pi },
    });
  });

  it('a cart on the screen does not make it busy: the payment takes the screen over', () => {
    const reader = {
      id: READER,
      object: 'terminal.reader' as const,
      status: 'online',
      action: { type: 'set_reader_display', status: 'in_progress', failure_code: null },
    };
    expect(readerTerminalState(reader)).toMatchObject({ status: 'online' });
    expect(readerTerminalState({ ...reader, status: null, action: null }).status).toBe('unknown');
    expect(readerTerminalState({ ...reader, action: { ...reader.action, type: 'collect_inputs' } }).busyWith).toEqual({
      kind: 'input',
      processorReference: null,
    });
    expect(readerTerminalState({ ...reader, action: { ...reader.action, type: 'a_later_word' } }).busyWith).toEqual({
      kind: 'other',
      processorReference: null,
    });
  });

  it('a reader Stripe does not know is not_found; no reader configured is configuration_invalid; QR has none', async () => {
    const sim = new StripeSimulator();
    expect((await connectorError(pos.getTerminal!(stripeCtx(sim, { reader_id: 'tmr_' })))).kind).toBe('not_found');
    expect(await connectorError(pos.getTerminal!(stripeCtx(sim, {})))).toMatchObject({
      kind: 'configuration_invalid',
      processorCode: 'stripe_reader_missing',
    });
    expect(stripeQrV1.adapter.getTerminal).toBeUndefined();
  });

  it('maps every action type of the SDK (a type it adds fails typecheck until mapped)', () => {
    const sdkTypes: Record<Stripe.Terminal.Reader.Action.Type, true> = {
      process_payment_intent: true,
      process_setup_intent: true,
      refund_payment: true,
      set_reader_display: true,
    };
    for (const type of Object.keys(sdkTypes)) expect(Object.hasOwn(READER_ACTION_ACTIVITY, type)).toBe(true);
  });
});

describe('an offline or busy reader refuses a payment at once', () => {
  it('offline: TerminalUnavailableError offline with Stripe’s code, after one hand-over attempt', async () => {
    const sim = new StripeSimulator();
    sim.offlineReaders.add(READER);
    const error = await connectorError(pos.createPayment(ctx(sim), stripePayment(2500)));
    expect(error).toBeInstanceOf(TerminalUnavailableError);
    expect(error).toMatchObject({ kind: 'unavailable', terminal: 'offline', processorCode: 'terminal_reader_offline' });
    expect(sim.requestsTo('POST', `/v1/terminal/readers/${READER}/process_payment_intent`)).toHaveLength(1);
  });

  it('busy with another action: TerminalUnavailableError busy; the PaymentIntent is kept for the retry', async () => {
    const sim = new StripeSimulator();
    sim.occupyReader(READER, 'refund_payment');
    const input = stripePayment(2500);
    expect(await connectorError(pos.createPayment(ctx(sim), input))).toMatchObject({
      terminal: 'busy',
      processorCode: 'terminal_reader_busy',
    });
    sim.readers.get(READER)!.action!.status = 'succeeded';
    expect((await pos.createPayment(ctx(sim), { ...input, attemptNumber: 2 })).status).toBe('approved');
    expect(sim.paymentIntentCount()).toBe(1);
  });

  it('the two codes, as the 2024-06-20 error-code union names them', () => {
    expect(READER_UNAVAILABLE_CODES).toEqual({ terminal_reader_offline: 'offline', terminal_reader_busy: 'busy' });
  });
});

describe('the cart on the reader (set_reader_display) before the card', () => {
  it('shows the lines, tax and total before handing the PaymentIntent over', async () => {
    const sim = new StripeSimulator({ readerMode: 'manual' });
    const input = withDisplay(stripePayment(2500));
    expect((await pos.createPayment(ctx(sim), input)).action).toEqual({ type: 'at_terminal' });
    const paths = sim.requests.filter((r) => r.method === 'POST').map((r) => r.path);
    expect(paths).toEqual([
      '/v1/payment_intents',
      `/v1/terminal/readers/${READER}/set_reader_display`,
      `/v1/terminal/readers/${READER}/process_payment_intent`,
    ]);
    const [shown] = sim.requestsTo('POST', `/v1/terminal/readers/${READER}/set_reader_display`);
    expect(shown!.params).toEqual(CART_FORM);
    expect(shown!.rawBody).toContain('cart[line_items][0][amount]=900');
    expect(shown!.idempotencyKey).toBe(`${input.processorIdempotencyKey}:display:1`);
  });

  it('reads the display from the payment’s configuration (decimal strings) when the core passes none', async () => {
    const sim = new StripeSimulator();
    const display = {
      lines: [{ description: 'Tea', quantity: 1, amount: { value: '25.00', currency: 'USD' } }],
      total: { value: '25.00', currency: 'USD' },
    };
    expect(stripePosV1.configurationSchema.safeParse({ reader_id: READER, display }).success).toBe(true);
    expect((await pos.createPayment(ctx(sim, { display }), stripePayment(2500))).status).toBe('approved');
    const [shown] = sim.requestsTo('POST', `/v1/terminal/readers/${READER}/set_reader_display`);
    expect(shown!.params.cart).toEqual({
      currency: 'usd',
      line_items: [{ amount: '2500', description: 'Tea', quantity: '1' }],
      total: '2500',
    });
  });

  it('a total other than the amount, or another currency, is refused before anything is created', async () => {
    const sim = new StripeSimulator();
    const error = await connectorError(pos.createPayment(ctx(sim), withDisplay(stripePayment(2500), cart(2400))));
    expect(error).toMatchObject({ kind: 'configuration_invalid', processorCode: 'display_invalid' });
    expect(error.message).toContain('display.total');
    expect(sim.requests).toHaveLength(0);
    expect(displayIssues({ ...cart(), tax: { minor: 200, currency: 'EUR' } }, usd(2500))).toEqual([
      { field: 'display.tax', issue: 'Must be in the payment’s currency' },
    ]);
    expect(() =>
      displayFromConfiguration({
        lines: [{ description: 'x', quantity: 1, amount: { value: '1.005', currency: 'USD' } }],
        total: { value: '1.00', currency: 'USD' },
      }),
    ).toThrow(/display\.lines\.0\.amount/);
  });

  it('an offline reader refuses the display already: the same fast refusal, no hand-over tried', async () => {
    const sim = new StripeSimulator();
    sim.offlineReaders.add(READER);
    expect(await connectorError(pos.createPayment(ctx(sim), withDisplay(stripePayment(2500))))).toMatchObject({
      terminal: 'offline',
    });
    expect(sim.requestsTo('POST', `/v1/terminal/readers/${READER}/process_payment_intent`)).toHaveLength(0);
  });

  it('the cart parameters are the SDK’s (ReaderSetReaderDisplayParams) and encode as the SDK does', () => {
    const params: Stripe.Terminal.ReaderSetReaderDisplayParams = readerDisplayParams(cart());
    const { tax: _, ...noTax } = cart();
    expect(readerDisplayParams(noTax).cart).not.toHaveProperty('tax');
    expect(parseForm(encodeForm(params))).toEqual(CART_FORM);
    expect(encodeForm({ expand: ['a', 'b'], items: [{ x: 1 }, { x: 2 }] })).toBe(
      'expand[]=a&expand[]=b&items[0][x]=1&items[1][x]=2',
    );
  });
});

describe('reader events', () => {
  const parse = (sim: StripeSimulator, delivery: { rawBody: string; headers: Record<string, string> }) =>
    pos.parseNotification(ctx(sim), {
      headers: new Headers(delivery.headers),
      rawBody: delivery.rawBody,
      url: 'https://payments.example.com/v1/processor-notifications/x',
    });

  it('terminal.reader.action_updated (API 2025-06-30 on) names the PaymentIntent; the core re-reads it', async () => {
    const sim = new StripeSimulator({ readerMode: 'manual' });
    const pi = (await pos.createPayment(ctx(sim), stripePayment(2500))).processorReference!;
    const event = sim.readerActionUpdated(READER);
    expect(await parse(sim, await sim.deliver(event))).toEqual({
      eventId: event.id,
      resource: 'payment',
      processorReference: pi,
      status: null,
      trusted: true,
    });
  });

  it('the three reader events are mapped; action_succeeded and action_failed are the SDK’s', async () => {
    expect(Object.keys(READER_EVENT_TYPES)).toEqual([
      'terminal.reader.action_succeeded',
      'terminal.reader.action_failed',
      'terminal.reader.action_updated',
    ]);
    const sdkReaderEvents: Extract<Stripe.Event.Type, `terminal.reader.${string}`>[] = [
      'terminal.reader.action_succeeded',
      'terminal.reader.action_failed',
    ];
    // @ts-expect-error 16.12.0 (API 2024-06-20) has no terminal.reader.action_updated: it is typed from 18.3.0
    sdkReaderEvents.push('terminal.reader.action_updated');
    const sim = new StripeSimulator({ readerMode: 'manual' });
    const pi = (await pos.createPayment(ctx(sim), stripePayment(2500))).processorReference!;
    sim.presentCard(READER, 'customer_cancel');
    expect(await parse(sim, await sim.deliver(sim.eventFor('terminal.reader.action_failed', READER)))).toMatchObject({
      processorReference: pi,
      status: null,
    });
  });
});

describe('cancel of a payment on the reader', () => {
  it('is synchronous at Stripe: the reader’s action is canceled, then the PaymentIntent; never “requested”', async () => {
    const sim = new StripeSimulator({ readerMode: 'manual' });
    const input = stripePayment(2500);
    const created = await pos.createPayment(ctx(sim), input);
    expect(created.action).toEqual({ type: 'at_terminal' });
    const outcome = await pos.cancelPayment(ctx(sim), {
      ...stripeLookup(input, created.processorReference),
      processorIdempotencyKey: `${input.processorIdempotencyKey}:cancel`,
      currentStatus: 'pending',
    });
    expect(outcome).toMatchObject({ status: 'canceled', action: { type: 'none' } });
    expect(outcome.cancellation).toBeUndefined();
    expect((await pos.getTerminal!(ctx(sim))).status).toBe('online');
  });
});
