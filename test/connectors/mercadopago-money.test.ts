import { describe, expect, it } from 'vitest';
import { mercadoPagoPosV1, mercadoPagoQrV1 } from '../../src/connectors/mercadopago/index.ts';
import {
  chargebackStatus,
  chargebackToDispute,
  MercadoPagoChargeback,
  refundFailureReason,
} from '../../src/connectors/mercadopago/transformers.ts';
import { applyDisputeNews, type DisputeState } from '../../src/domain/disputes.ts';
import { connectorError, mpCtx, mpLookup, mpPayment } from '../helpers/mercadopago.ts';
import { MercadoPagoSimulator } from '../simulators/mercadopago.ts';

/**
 * Mercado Pago after the sale: what its material shows of refunds failing, chargebacks as they run (read
 * from the Chargebacks API), and fees (none in the Orders API).
 */

const pos = mercadoPagoPosV1.adapter;

const refundInput = (paymentProcessorReference: string, refundId: string, minor: number) => ({
  refundId,
  processorIdempotencyKey: refundId,
  attemptNumber: 1,
  paymentProcessorReference,
  amount: { minor, currency: 'ARS' },
});

function setup() {
  const sim = new MercadoPagoSimulator();
  const account = sim.addAccount({ currency: 'ARS' });
  return { sim, account, ctx: mpCtx(sim, account) };
}

describe('Mercado Pago fees', () => {
  it('an approved order says settlement null, not_reported (the Orders API reports no fee); a pending one nothing', async () => {
    const { sim, account, ctx } = setup();
    const approved = await pos.createPayment(ctx, mpPayment(2500));
    expect(approved).toMatchObject({ status: 'approved', settlement: null, settlementNullReason: 'not_reported' });
    const qr = await mercadoPagoQrV1.adapter.createPayment(mpCtx(sim, account, { type: 'qr' }), mpPayment(2500));
    expect(qr.status).toBe('pending');
    expect(qr).not.toHaveProperty('settlement');
    const refund = await pos.refundPayment(ctx, refundInput(approved.processorReference!, 'ref_1', 1000));
    expect(refund).toMatchObject({ status: 'approved', settlement: null, settlementNullReason: 'not_reported' });
  });
});

describe('Mercado Pago refund failures', () => {
  it('a rejected refund is declined (reason declined); a failed one unknown; none fails after approval in its material', async () => {
    expect(refundFailureReason('declined')).toBe('declined');
    expect(refundFailureReason('failed')).toBe('unknown');
    expect(refundFailureReason('approved')).toBeUndefined();
    expect(refundFailureReason('pending')).toBeUndefined();
    const { sim, ctx } = setup();
    const approved = await pos.createPayment(ctx, mpPayment(5000));
    const declined = await pos.refundPayment(ctx, refundInput(approved.processorReference!, 'ref_61', 1061));
    expect(declined).toMatchObject({ status: 'declined', failureReason: 'declined' });
    expect(declined).not.toHaveProperty('settlement');
    sim.faults.refundsProcessing = true;
    const pending = await pos.refundPayment(ctx, refundInput(approved.processorReference!, 'ref_2', 1000));
    sim.settleRefund(approved.processorReference!, pending.processorReference!, 'failed');
    expect(
      await pos.getRefund(ctx, {
        refundId: 'ref_2',
        amount: { minor: 1000, currency: 'ARS' },
        processorReference: pending.processorReference,
        processorIdempotencyKey: 'ref_2',
        paymentProcessorReference: approved.processorReference!,
      }),
    ).toMatchObject({ status: 'failed', failureReason: 'unknown' });
  });

  it('declares no reversal window: its material documents no refund failing after approval', () => {
    expect(mercadoPagoPosV1.refundReversalWindowMs).toBeUndefined();
    expect(mercadoPagoQrV1.refundReversalWindowMs).toBeUndefined();
    expect(pos.getVoidRefund).toBeUndefined();
  });
});

describe('Mercado Pago chargebacks as disputes', () => {
  const chargeback = (fields: Record<string, unknown>) =>
    MercadoPagoChargeback.parse({ id: '234000062890459000', ...fields });

  it('the status table: the decision first, then the SDK’s won/lost, then whether documentation is due', () => {
    expect(chargebackStatus(chargeback({ coverage_applied: true }))).toBe('won');
    expect(chargebackStatus(chargeback({ coverage_applied: false, status: 'won' }))).toBe('lost');
    expect(chargebackStatus(chargeback({ coverage_applied: null, status: 'lost' }))).toBe('lost');
    expect(chargebackStatus(chargeback({ status: 'won' }))).toBe('won');
    expect(chargebackStatus(chargeback({ documentation_required: true, documentation_status: 'pending' }))).toBe(
      'needs_response',
    );
    expect(chargebackStatus(chargeback({ documentation_required: true }))).toBe('needs_response');
    for (const documentation_status of ['review_pending', 'valid', 'invalid', 'not_supplied', 'not_applicable'])
      expect(chargebackStatus(chargeback({ documentation_required: true, documentation_status }))).toBe('under_review');
    for (const fields of [{}, { status: 'new' }, { status: 'in_review' }, { documentation_required: false }])
      expect(chargebackStatus(chargeback(fields))).toBe('under_review');
  });

  it('as ours: its amount (or the order’s), its reason when it is one of ours, the deadline; no funds dates', () => {
    const order = { id: 'ORD01X', total_amount: '2500.00' };
    expect(
      chargebackToDispute(
        chargeback({
          amount: 1000.5,
          currency: 'ARS',
          reason: 'general',
          documentation_required: true,
          documentation_status: 'pending',
          date_documentation_deadline: '2024-10-27T12:48:24.000-04:00',
        }),
        order,
        'ARS',
      ),
    ).toEqual({
      processorDisputeId: '234000062890459000',
      paymentProcessorReference: 'ORD01X',
      status: 'needs_response',
      amount: { minor: 100_050, currency: 'ARS' },
      reason: 'general',
      evidenceDueBy: Date.parse('2024-10-27T16:48:24.000Z'),
      fundsWithdrawnAt: null,
      fundsReinstatedAt: null,
      processorStatus: 'pending',
    });
    const odd = chargebackToDispute(chargeback({ reason: 'Producto no recibido', currency_id: 'ars' }), order, 'ARS');
    expect(odd).toMatchObject({ reason: 'general', amount: { minor: 250_000, currency: 'ARS' }, evidenceDueBy: null });
    expect(chargebackToDispute(chargeback({ reason: 'fraudulent' }), order, 'ARS').reason).toBe('fraudulent');
  });

  it('opened, documented, won: the lookup reports each step, through the dispute rules created, updated, closed', async () => {
    const { sim, ctx } = setup();
    const approved = await pos.createPayment(ctx, mpPayment(2500));
    const ref = approved.processorReference!;
    let record: DisputeState | null = null;
    const sent: string[] = [];
    const step = async () => {
      const read = await pos.getPayment(ctx, mpLookup(ref));
      expect(read.status).toBe('charged_back');
      expect(read.disputes).toHaveLength(1);
      const applied = applyDisputeNews(record, read.disputes![0]!, Date.now());
      if (applied.ok) {
        sent.push(...applied.events);
        record = applied.dispute;
      }
      return read.disputes![0]!;
    };
    expect((await pos.getPayment(ctx, mpLookup(ref))).disputes).toEqual([]);
    sim.chargeBack(ref, { reason: 'fraudulent' });
    expect(await step()).toMatchObject({
      status: 'needs_response',
      amount: { minor: 2500, currency: 'ARS' },
      reason: 'fraudulent',
      evidenceDueBy: expect.any(Number),
      paymentProcessorReference: ref,
    });
    sim.documentChargeback(ref);
    expect(await step()).toMatchObject({ status: 'under_review' });
    sim.decideChargeback(ref, 'won');
    expect(await step()).toMatchObject({ status: 'won', fundsReinstatedAt: null });
    expect(sent).toEqual(['dispute.created', 'dispute.updated', 'dispute.closed']);
    // Read by the id the order lists.
    const chargebackId = sim.orders.get(ref)!.chargebacks[0]!.id;
    expect(sim.requestsTo('GET', `/v1/chargebacks/${chargebackId}`).length).toBeGreaterThan(0);
  });

  it('lost; a chargeback the Chargebacks API does not find is left out; any other failure of it fails the lookup', async () => {
    const { sim, ctx } = setup();
    const approved = await pos.createPayment(ctx, mpPayment(2500));
    const ref = approved.processorReference!;
    sim.chargeBack(ref, { documentationRequired: false });
    sim.decideChargeback(ref, 'lost');
    expect((await pos.getPayment(ctx, mpLookup(ref))).disputes).toEqual([
      expect.objectContaining({ status: 'lost', evidenceDueBy: null }),
    ]);
    // Mercado Pago answers the chargeback read with `status`: the order is read as before.
    const answering =
      (status: number): typeof fetch =>
      (input, init) => {
        const url = new URL(input instanceof Request ? input.url : String(input));
        if (url.pathname.startsWith('/v1/chargebacks/'))
          return Promise.resolve(Response.json({ message: 'simulated', error: 'x', status }, { status }));
        return sim.fetch(input, init);
      };
    const leftOut = await pos.getPayment({ ...ctx, fetch: answering(404) }, mpLookup(ref));
    expect(leftOut).toMatchObject({ status: 'charged_back', disputes: [] });
    const error = await connectorError(pos.getPayment({ ...ctx, fetch: answering(500) }, mpLookup(ref)));
    expect(error.kind).toBe('unavailable');
  });
});
