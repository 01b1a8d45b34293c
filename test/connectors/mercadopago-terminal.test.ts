import { beforeEach, describe, expect, it } from 'vitest';
import { mercadoPagoPosV1, mercadoPagoQrV1 } from '../../src/connectors/mercadopago/index.ts';
import {
  CANCEL_AT_TERMINAL_HEADER,
  OPERATING_MODE_TABLE,
  processorIdempotencyKey,
} from '../../src/connectors/mercadopago/transformers.ts';
import { type CancelPaymentInput, TerminalUnavailableError } from '../../src/connectors/types.ts';
import { connectorError, mpFixture, mpLookup, mpPayment, TERMINAL } from '../helpers/mercadopago.ts';
import type { MercadoPagoSimulator, SimAccount } from '../simulators/mercadopago.ts';

/**
 * Mercado Pago Point at the counter: the cancel of an order already on the terminal (202, completed later
 * by the terminal or overtaken by the customer's payment), the terminal as the terminals API lists it, and
 * a terminal that already holds an order.
 */

let sim: MercadoPagoSimulator;
let account: SimAccount;
let ctx: ReturnType<typeof mpFixture>['ctx'];

beforeEach(() => {
  ({ sim, account, ctx } = mpFixture());
});

const pos = mercadoPagoPosV1.adapter;

const cancelInput = (ref: string, key = 'pay_x:cancel'): CancelPaymentInput => ({
  ...mpLookup(ref),
  processorIdempotencyKey: key,
  currentStatus: 'pending',
});

/** A Point order the terminal holds (`at_terminal`), on a terminal that accepts cancels there. */
async function orderAtTerminal(): Promise<string> {
  sim.faults.pointWaitsAtTerminal = true;
  sim.faults.cancelAtTerminal = 'accepted';
  const outcome = await pos.createPayment(ctx(), mpPayment(2500));
  expect(outcome).toMatchObject({ status: 'pending', action: { type: 'at_terminal' } });
  expect(sim.orders.get(outcome.processorReference!)!.status).toBe('at_terminal');
  return outcome.processorReference!;
}

describe('cancel of a Point order on the terminal (x-allow-cancelable-status: at_terminal)', () => {
  it('sends the header, and reads Mercado Pago’s 202 as a cancel requested: the payment stays pending', async () => {
    const ref = await orderAtTerminal();
    const answer = await pos.cancelPayment(ctx(), cancelInput(ref));
    expect(answer).toMatchObject({
      status: 'pending',
      action: { type: 'at_terminal' },
      cancellation: 'requested',
      processorReference: ref,
      processorStatus: 'at_terminal/at_terminal',
    });
    const [post] = sim.requestsTo('POST', `/v1/orders/${ref}/cancel`);
    expect(post!.headers['x-allow-cancelable-status']).toBe('at_terminal');
    expect(post!.headers['x-idempotency-key']).toBe(await processorIdempotencyKey('cancel', 'pay_x:cancel'));
    expect(sim.orders.get(ref)!.status).toBe('at_terminal');
  });

  it('a retry with the same key is Mercado Pago’s replay: requested again, one cancel asked', async () => {
    const ref = await orderAtTerminal();
    await pos.cancelPayment(ctx(), cancelInput(ref));
    expect((await pos.cancelPayment(ctx(), cancelInput(ref))).cancellation).toBe('requested');
    expect(sim.requestsTo('POST', `/v1/orders/${ref}/cancel`)).toHaveLength(2);
    expect(sim.orders.get(ref)!.cancelRequested).toBe(true);
  });

  it('a 202 without a body (its body is not documented) is a cancel requested too', async () => {
    const ref = await orderAtTerminal();
    sim.faults.acceptedCancelBody = 'empty';
    expect(await pos.cancelPayment(ctx(), cancelInput(ref))).toMatchObject({
      status: 'pending',
      cancellation: 'requested',
    });
  });

  it('the terminal then cancels it: the notification points at the order, which now reads canceled', async () => {
    const ref = await orderAtTerminal();
    await pos.cancelPayment(ctx(), cancelInput(ref));
    expect(sim.completeCancellation(ref)).toBe(true);
    const [n] = await sim.delivered(ref);
    const news = await pos.parseNotification(ctx(), {
      headers: new Headers(n!.headers),
      rawBody: n!.rawBody,
      url: n!.url,
    });
    expect(news).toMatchObject({ resource: 'payment', processorReference: ref, status: null, trusted: true });
    expect(JSON.parse(n!.rawBody).action).toBe('order.canceled');
    expect(await pos.getPayment(ctx(), { ...mpLookup(ref), cancelRequested: true })).toMatchObject({
      status: 'canceled',
      action: { type: 'none' },
    });
  });

  it('the customer pays before the cancel lands: the order is processed, the payment approved', async () => {
    const ref = await orderAtTerminal();
    await pos.cancelPayment(ctx(), cancelInput(ref));
    sim.pay(ref);
    expect(sim.completeCancellation(ref)).toBe(false);
    const [n] = await sim.delivered(ref);
    expect(JSON.parse(n!.rawBody).action).toBe('order.processed');
    expect((await pos.getPayment(ctx(), { ...mpLookup(ref), cancelRequested: true })).status).toBe('approved');
  });

  it('a terminal that does not support it refuses as before: declined with Mercado Pago’s code', async () => {
    const ref = await orderAtTerminal();
    sim.faults.cancelAtTerminal = 'refused';
    expect(await connectorError(pos.cancelPayment(ctx(), cancelInput(ref)))).toMatchObject({
      kind: 'declined',
      processorCode: 'order_cannot_be_canceled',
    });
    expect(sim.requestsTo('POST', `/v1/orders/${ref}/cancel`)[0]!.headers).toMatchObject(CANCEL_AT_TERMINAL_HEADER);
  });

  it('an order the terminal has not taken yet (created) cancels at once, without the header', async () => {
    sim.faults.pointWaitsAtTerminal = true;
    const ref = (await pos.createPayment(ctx(), mpPayment(2500))).processorReference!;
    const order = sim.orders.get(ref)!;
    Object.assign(order, { status: 'created', statusDetail: 'created' });
    expect((await pos.getPayment(ctx(), mpLookup(ref))).action).toEqual({ type: 'at_terminal' });
    const answer = await pos.cancelPayment(ctx(), cancelInput(ref));
    expect(answer).toMatchObject({ status: 'canceled' });
    expect(answer.cancellation).toBeUndefined();
    expect(sim.requestsTo('POST', `/v1/orders/${ref}/cancel`)[0]!.headers['x-allow-cancelable-status']).toBeUndefined();
  });

  it('an order waiting for a check at the terminal is still refused without asking (check_terminal)', async () => {
    const ref = (await pos.createPayment(ctx(), mpPayment(2555))).processorReference!;
    expect(await connectorError(pos.cancelPayment(ctx(), cancelInput(ref)))).toMatchObject({
      kind: 'declined',
      processorCode: 'action_required',
    });
    expect(sim.requestsTo('POST', `/v1/orders/${ref}/cancel`)).toHaveLength(0);
  });
});

describe('getTerminal: GET /terminals/v1/list', () => {
  it('finds the configured terminal and says its operating mode; connectivity is not shown, so unknown', async () => {
    sim.addTerminal(account, 'PAX_A910__SMARTPOS1234345545', 'STANDALONE');
    sim.addTerminal(account, TERMINAL, 'PDV');
    expect(await pos.getTerminal!(ctx())).toEqual({
      processorId: TERMINAL,
      status: 'unknown',
      operatingMode: 'pdv',
      processorStatus: 'operating_mode/PDV',
    });
    const [get] = sim.requestsTo('GET', '/terminals/v1/list');
    expect(get!.path).toBe('/terminals/v1/list?limit=50&offset=0');
    expect(get!.headers.authorization).toBe(`Bearer ${account.accessToken}`);
  });

  it('every documented mode, and UNDEFINED or another word as unknown', async () => {
    expect(OPERATING_MODE_TABLE).toEqual({ PDV: 'pdv', SELF_SERVICE: 'self_service', STANDALONE: 'standalone' });
    for (const [mode, ours] of [
      ['STANDALONE', 'standalone'],
      ['SELF_SERVICE', 'self_service'],
      ['UNDEFINED', 'unknown'],
    ] as const) {
      account.terminals.length = 0;
      sim.addTerminal(account, TERMINAL, mode);
      expect((await pos.getTerminal!(ctx())).operatingMode).toBe(ours);
    }
  });

  it('reads the pages (50 at most each) until the terminal appears', async () => {
    for (let i = 0; i < 120; i++) sim.addTerminal(account, `PAX_A910__SMARTPOS${String(i).padStart(10, '0')}`);
    sim.addTerminal(account, TERMINAL, 'PDV');
    expect((await pos.getTerminal!(ctx())).processorId).toBe(TERMINAL);
    expect(sim.requestsTo('GET', '/terminals/v1/list').map((r) => r.path)).toEqual([
      '/terminals/v1/list?limit=50&offset=0',
      '/terminals/v1/list?limit=50&offset=50',
      '/terminals/v1/list?limit=50&offset=100',
    ]);
  });

  it('a terminal Mercado Pago does not list is not_found, after the last page', async () => {
    for (let i = 0; i < 50; i++) sim.addTerminal(account, `PAX_A910__SMARTPOS${String(i).padStart(10, '0')}`);
    expect(await connectorError(pos.getTerminal!(ctx()))).toMatchObject({
      kind: 'not_found',
      processorCode: 'terminal_not_listed',
    });
    expect(sim.requestsTo('GET', '/terminals/v1/list')).toHaveLength(1);
  });

  it('without a terminal_id: configuration_invalid, nothing sent; a 5xx is unavailable; QR has no terminal', async () => {
    expect(await connectorError(pos.getTerminal!(ctx({ configuration: {} })))).toMatchObject({
      kind: 'configuration_invalid',
      processorCode: 'missing_terminal_id',
    });
    expect(sim.requests).toHaveLength(0);
    sim.faults.unavailableNext = 1;
    expect((await connectorError(pos.getTerminal!(ctx()))).kind).toBe('unavailable');
    expect(mercadoPagoQrV1.adapter.getTerminal).toBeUndefined();
  });
});

describe('a terminal that already holds an order', () => {
  it('refuses a new Point order at once: TerminalUnavailableError busy, with Mercado Pago’s code', async () => {
    sim.faults.pointWaitsAtTerminal = true;
    sim.faults.oneOrderPerTerminal = true;
    await pos.createPayment(ctx(), mpPayment(2500));
    const error = await connectorError(pos.createPayment(ctx(), mpPayment(2600)));
    expect(error).toBeInstanceOf(TerminalUnavailableError);
    expect(error).toMatchObject({
      kind: 'unavailable',
      terminal: 'busy',
      processorCode: 'already_queued_order_for_terminal',
    });
    expect(sim.orders.size).toBe(1);
  });
});
