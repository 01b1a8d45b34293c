// The official library at test time: its types are the oracle for the tables.
import type Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { StripeEvent } from '../../src/connectors/stripe/sdk.ts';
import {
  chargedBackOutcome,
  DISPUTE_EVENT_TYPES,
  DISPUTE_STATUS_MAP,
  disputeStatus,
  encodeForm,
  eventToNotification,
  isDisputed,
  metadataQuery,
  normalizeStripeError,
  parseSignatureHeader,
  PAYMENT_FAILURE_MAP,
  PAYMENT_INTENT_STATUS_MAP,
  paymentIntentStatus,
  READER_ACTION_STATUS_MAP,
  REFUND_FAILURE_MAP,
  REFUND_STATUS_MAP,
  refundStatus,
  STRIPE_ERROR_TYPE_MAP,
  toStripeAmount,
  type StripeRefundFailureReason,
  type StripeRefundStatus,
} from '../../src/connectors/stripe/transformers.ts';
import { ConnectorError, type ProcessorPaymentStatus, type ProcessorRefundStatus } from '../../src/connectors/types.ts';
import { ERROR_TYPE_KINDS } from '../helpers/stripe.ts';
import { parseForm, StripeSimulator } from '../simulators/stripe.ts';

/** The Stripe connector's pure transformers: status and error tables, requests, signatures, events. No I/O. */

// ---------------------------------------------------------------------------------------------------------
// The tables, row by row against the SDK's own unions: each expectation below is a Record over the SDK's
// type, so a status or error type the SDK adds fails typecheck here until it is mapped (and documented).

describe('transformers: every status the SDK enumerates', () => {
  const paymentIntent: Record<Stripe.PaymentIntent.Status, ProcessorPaymentStatus> = {
    requires_payment_method: 'pending',
    requires_confirmation: 'pending',
    requires_action: 'pending',
    processing: 'processing',
    requires_capture: 'processing',
    succeeded: 'approved',
    canceled: 'canceled',
  };

  it('the PaymentIntent table is exactly the documented one; only succeeded approves', () => {
    expect(PAYMENT_INTENT_STATUS_MAP).toEqual(paymentIntent);
    const approving = Object.entries(PAYMENT_INTENT_STATUS_MAP).filter(([, ours]) => ours === 'approved');
    expect(approving).toEqual([['succeeded', 'approved']]);
  });

  it.each(Object.entries(paymentIntent))('PaymentIntent %s → %s', (status, ours) => {
    expect(paymentIntentStatus({ status })).toBe(ours);
  });

  it.each(['requires_source', 'partially_funded', '', 'SUCCEEDED', 'toString', '__proto__', 'constructor', 'approved'])(
    'unknown PaymentIntent status %j → pending, never approved',
    (status) => {
      expect(paymentIntentStatus({ status })).toBe('pending');
    },
  );

  const failure: Record<Stripe.PaymentIntent.LastPaymentError.Type, ProcessorPaymentStatus> = {
    card_error: 'declined',
    api_error: 'failed',
    idempotency_error: 'failed',
    invalid_request_error: 'failed',
  };

  it('a failed attempt, by every last_payment_error.type: card_error → declined, the others → failed', () => {
    expect(PAYMENT_FAILURE_MAP).toEqual(failure);
    for (const [type, ours] of Object.entries(failure)) {
      expect(paymentIntentStatus({ status: 'requires_payment_method', last_payment_error: { type } })).toBe(ours);
      expect(
        paymentIntentStatus(
          { status: 'requires_payment_method', last_payment_error: { type } },
          'payment_intent.payment_failed',
        ),
      ).toBe(ours);
    }
    expect(paymentIntentStatus({ status: 'requires_payment_method', last_payment_error: {} })).toBe('failed');
    expect(
      paymentIntentStatus(
        { status: 'requires_payment_method', last_payment_error: null },
        'payment_intent.payment_failed',
      ),
    ).toBe('failed');
    // The error only counts while the PaymentIntent waits for a new method: a later success wins.
    expect(paymentIntentStatus({ status: 'succeeded', last_payment_error: { type: 'card_error' } })).toBe('approved');
  });

  const refund: Record<StripeRefundStatus, ProcessorRefundStatus> = {
    pending: 'pending',
    requires_action: 'pending',
    succeeded: 'approved',
    failed: 'failed',
    canceled: 'failed',
  };

  it('the Refund table is exactly the documented one', () => {
    expect(REFUND_STATUS_MAP).toEqual(refund);
  });

  it.each(Object.entries(refund))('Refund %s → %s', (status, ours) => {
    expect(refundStatus({ status })).toBe(ours);
  });

  const refundFailure: Record<StripeRefundFailureReason, ProcessorRefundStatus> = {
    declined: 'declined',
    lost_or_stolen_card: 'failed',
    expired_or_canceled_card: 'failed',
    charge_for_pending_refund_disputed: 'failed',
    insufficient_funds: 'failed',
    merchant_request: 'failed',
    unknown: 'failed',
  };

  it('a failed refund by every documented failure_reason; unknown refund statuses are pending', () => {
    expect(REFUND_FAILURE_MAP).toEqual(refundFailure);
    for (const [failure_reason, ours] of Object.entries(refundFailure))
      expect(refundStatus({ status: 'failed', failure_reason })).toBe(ours);
    expect(refundStatus({ status: 'failed', failure_reason: 'something_new' })).toBe('failed');
    for (const status of ['', 'toString', 'approved', null]) expect(refundStatus({ status })).toBe('pending');
  });

  const readerAction: Record<Stripe.Terminal.Reader.Action.Status, ProcessorPaymentStatus | null> = {
    in_progress: 'pending',
    succeeded: null,
    failed: 'failed',
  };

  it('the reader action table: in_progress waits, succeeded defers to the PaymentIntent, failed ends a waiting attempt', () => {
    expect(READER_ACTION_STATUS_MAP).toEqual(readerAction);
  });
});

describe('transformers: requests', () => {
  it('encodes forms in bracket notation, leaving out undefined and null', () => {
    const params: Stripe.PaymentIntentCreateParams = {
      amount: 1050,
      currency: 'usd',
      payment_method_types: ['card_present'],
      capture_method: 'automatic',
      confirm: true,
      description: undefined,
      metadata: { payment_id: 'pay_1', external_reference: 'a b&c=d+é' },
      payment_method_data: { type: 'promptpay', billing_details: { email: 'a@b.co' } },
    };
    const form = encodeForm({ ...params, statement_descriptor: null });
    expect(form).toBe(
      'amount=1050&currency=usd&payment_method_types[]=card_present&capture_method=automatic&confirm=true' +
        '&metadata[payment_id]=pay_1&metadata[external_reference]=a%20b%26c%3Dd%2B%C3%A9' +
        '&payment_method_data[type]=promptpay&payment_method_data[billing_details][email]=a%40b.co',
    );
    // And the simulator reads it back as Stripe would.
    expect(parseForm(form)).toEqual({
      amount: '1050',
      currency: 'usd',
      payment_method_types: ['card_present'],
      capture_method: 'automatic',
      confirm: 'true',
      metadata: { payment_id: 'pay_1', external_reference: 'a b&c=d+é' },
      payment_method_data: { type: 'promptpay', billing_details: { email: 'a@b.co' } },
    });
  });

  it('amounts are integer minor units with the currency in lower case, where Stripe counts them as we do', () => {
    expect(toStripeAmount({ minor: 1050, currency: 'USD' }, 2)).toEqual({ amount: 1050, currency: 'usd' });
    expect(toStripeAmount({ minor: 1500, currency: 'CLP' }, 0)).toEqual({ amount: 1500, currency: 'clp' });
    expect(toStripeAmount({ minor: 12_345, currency: 'THB' }, 2)).toEqual({ amount: 12_345, currency: 'thb' });
    expect(toStripeAmount({ minor: 1_999, currency: 'SGD' }, 2)).toEqual({ amount: 1_999, currency: 'sgd' });
    for (const minor of [0, -1, 1.5, Number.NaN])
      expect(() => toStripeAmount({ minor, currency: 'USD' }, 2)).toThrow(ConnectorError);
    // A currency whose exponent Stripe counts otherwise (JPY is zero-decimal at Stripe) is never sent as ours.
    expect(() => toStripeAmount({ minor: 1000, currency: 'JPY' }, 2)).toThrow(ConnectorError);
    expect(() => toStripeAmount({ minor: 1000, currency: 'USD' }, 0)).toThrow(ConnectorError);
  });

  it('search queries quote and escape the value', () => {
    expect(metadataQuery('payment_id', 'pay_1')).toBe("metadata['payment_id']:'pay_1'");
    expect(metadataQuery('payment_id', "a'b\\c")).toBe("metadata['payment_id']:'a\\'b\\\\c'");
  });
});

describe('transformers: errors', () => {
  it('every error type the SDK knows is mapped, with its retryability (unavailable/timeout retry, the others are final)', () => {
    expect(STRIPE_ERROR_TYPE_MAP).toEqual(ERROR_TYPE_KINDS);
  });

  const err = (type: string, code?: string, decline_code?: string) => ({
    error: {
      type,
      ...(code ? { code } : {}),
      ...(decline_code ? { decline_code } : {}),
      message: 'RAW PROCESSOR MESSAGE',
    },
  });
  const rows: [number, unknown, 'lookup' | 'write', string, string][] = [
    [402, err('card_error', 'card_declined', 'insufficient_funds'), 'write', 'declined', 'insufficient_funds'],
    [402, err('card_error', 'expired_card'), 'write', 'declined', 'expired_card'],
    [401, err('invalid_request_error'), 'write', 'configuration_invalid', 'invalid_request_error'],
    [401, err('authentication_error'), 'write', 'configuration_invalid', 'authentication_error'],
    [401, null, 'lookup', 'configuration_invalid', 'http_401'],
    [403, err('invalid_request_error', 'secret_key_required'), 'write', 'configuration_invalid', 'secret_key_required'],
    [
      400,
      err('invalid_request_error', 'parameter_invalid_integer'),
      'write',
      'configuration_invalid',
      'parameter_invalid_integer',
    ],
    [400, err('invalid_request_error', 'amount_too_small'), 'write', 'configuration_invalid', 'amount_too_small'],
    [400, err('invalid_grant'), 'write', 'configuration_invalid', 'invalid_grant'],
    // The key was used before with other parameters: what that request did is unknown, never a failure.
    [400, err('idempotency_error'), 'write', 'timeout', 'idempotency_error'],
    [400, err('invalid_request_error', 'charge_already_refunded'), 'write', 'declined', 'charge_already_refunded'],
    [400, err('invalid_request_error', 'amount_too_large'), 'write', 'declined', 'amount_too_large'],
    [400, err('invalid_request_error', 'refund_disputed_payment'), 'write', 'declined', 'refund_disputed_payment'],
    [
      400,
      err('invalid_request_error', 'payment_intent_unexpected_state'),
      'write',
      'declined',
      'payment_intent_unexpected_state',
    ],
    [400, err('invalid_request_error', 'intent_invalid_state'), 'write', 'declined', 'intent_invalid_state'],
    [400, err('invalid_request_error', 'terminal_reader_offline'), 'write', 'unavailable', 'terminal_reader_offline'],
    [400, err('invalid_request_error', 'terminal_reader_busy'), 'write', 'unavailable', 'terminal_reader_busy'],
    [
      400,
      err('invalid_request_error', 'terminal_reader_hardware_fault'),
      'write',
      'unavailable',
      'terminal_reader_hardware_fault',
    ],
    [400, err('invalid_request_error', 'terminal_reader_timeout'), 'write', 'timeout', 'terminal_reader_timeout'],
    [
      400,
      err('invalid_request_error', 'terminal_reader_invalid_location_for_payment'),
      'write',
      'configuration_invalid',
      'terminal_reader_invalid_location_for_payment',
    ],
    [400, err('invalid_request_error', 'lock_timeout'), 'write', 'unavailable', 'lock_timeout'],
    [400, err('invalid_request_error', 'resource_missing'), 'lookup', 'not_found', 'resource_missing'],
    [400, err('invalid_request_error', 'resource_missing'), 'write', 'configuration_invalid', 'resource_missing'],
    [404, err('invalid_request_error', 'resource_missing'), 'lookup', 'not_found', 'resource_missing'],
    [404, err('invalid_request_error', 'resource_missing'), 'write', 'configuration_invalid', 'resource_missing'],
    [409, err('idempotency_error', 'idempotency_key_in_use'), 'write', 'unavailable', 'idempotency_key_in_use'],
    [409, err('invalid_request_error', 'idempotency_key_in_use'), 'write', 'unavailable', 'idempotency_key_in_use'],
    [409, err('idempotency_error'), 'write', 'unavailable', 'idempotency_error'],
    [424, err('api_error'), 'write', 'unavailable', 'api_error'],
    [429, err('invalid_request_error', 'rate_limit'), 'write', 'unavailable', 'rate_limit'],
    [429, err('rate_limit_error'), 'write', 'unavailable', 'rate_limit_error'],
    [429, null, 'lookup', 'unavailable', 'http_429'],
    [500, err('api_error'), 'write', 'unavailable', 'api_error'],
    [502, 'not json', 'write', 'unavailable', 'http_502'],
    [503, null, 'lookup', 'unavailable', 'http_503'],
  ];

  it.each(rows)('HTTP %d %j (%s) → %s, processor code %s', (status, body, operation, kind, code) => {
    const error = normalizeStripeError(status, body, { operation });
    expect(error).toBeInstanceOf(ConnectorError);
    expect(error.kind).toBe(kind);
    expect(error.processorCode).toBe(code);
    expect(error.message).not.toContain('RAW PROCESSOR MESSAGE');
  });

  it('Stripe-Should-Retry: true makes a final-looking 4xx retryable; false changes nothing', () => {
    expect(
      normalizeStripeError(400, err('invalid_request_error', 'some_new_code'), {
        operation: 'write',
        shouldRetry: true,
      }).kind,
    ).toBe('unavailable');
    expect(
      normalizeStripeError(400, err('invalid_request_error', 'some_new_code'), {
        operation: 'write',
        shouldRetry: false,
      }).kind,
    ).toBe('configuration_invalid');
    expect(
      normalizeStripeError(402, err('card_error', 'card_declined'), { operation: 'write', shouldRetry: true }).kind,
    ).toBe('declined');
    expect(normalizeStripeError(500, err('api_error'), { operation: 'write', shouldRetry: false }).kind).toBe(
      'unavailable',
    );
  });
});

describe('transformers: notifications', () => {
  const hex = 'a'.repeat(64);
  it('parses Stripe-Signature headers and refuses garbled ones', () => {
    expect(parseSignatureHeader(`t=1700000000,v1=${hex}`)).toEqual({ timestamp: 1700000000, signatures: [hex] });
    expect(parseSignatureHeader(`t=1700000000,v1=${hex},v1=${'b'.repeat(64)},v0=${'c'.repeat(64)}`)).toEqual({
      timestamp: 1700000000,
      signatures: [hex, 'b'.repeat(64)],
    });
    expect(parseSignatureHeader(` t=1700000000, v1=${hex}`)).toEqual({ timestamp: 1700000000, signatures: [hex] });
    for (const bad of [
      null,
      '',
      `v1=${hex}`,
      't=1700000000',
      `t=1700000000,v0=${hex}`,
      `t=abc,v1=${hex}`,
      `t=-1,v1=${hex}`,
      `t=1,t=2,v1=${hex}`,
      `t=1700000000,v1=${hex.slice(1)}`,
      `t=1700000000,v1=${'A'.repeat(64)}`,
      `t=1700000000,v1=${'z'.repeat(64)}`,
      `t=1700000000;v1=${hex}`,
      `t=1700000000,v1`,
      'x'.repeat(5000),
    ]) {
      expect(parseSignatureHeader(bad)).toBeNull();
    }
  });

  const sim = new StripeSimulator();
  const news = (event: object) => {
    const json = JSON.parse(JSON.stringify(event));
    return eventToNotification(StripeEvent.parse(json), json.data.object);
  };
  const base = sim.buildPaymentIntent({
    amount: 1000,
    currency: 'usd',
    capture_method: 'automatic',
    description: null,
    metadata: {},
    payment_method_types: ['card_present'],
  });
  const pi = (
    status: Stripe.PaymentIntent.Status,
    extra: Partial<Stripe.PaymentIntent> = {},
  ): Stripe.PaymentIntent => ({ ...base, status, ...extra });

  it('maps PaymentIntent, Refund, charge, reader and other events', () => {
    const succeeded = sim.makeEvent('payment_intent.succeeded', pi('succeeded'));
    expect(news(succeeded)).toEqual({
      eventId: succeeded.id,
      resource: 'payment',
      processorReference: succeeded.data.object.id,
      status: 'approved',
      trusted: true,
    });
    const cardError = { type: 'card_error', code: 'card_declined' } as const;
    expect(
      news(
        sim.makeEvent(
          'payment_intent.payment_failed',
          pi('requires_payment_method', { last_payment_error: cardError }),
        ),
      ).status,
    ).toBe('declined');
    expect(
      news(
        sim.makeEvent(
          'payment_intent.payment_failed',
          pi('requires_payment_method', { last_payment_error: { type: 'api_error' } }),
        ),
      ).status,
    ).toBe('failed');
    expect(news(sim.makeEvent('payment_intent.canceled', pi('canceled'))).status).toBe('canceled');
    expect(news(sim.makeEvent('payment_intent.processing', pi('processing'))).status).toBe('processing');
    expect(news(sim.makeEvent('payment_intent.requires_action', pi('requires_action'))).status).toBe('pending');
    // Authorized only: the core is told to ask, and the connector's lookup captures it.
    expect(news(sim.makeEvent('payment_intent.amount_capturable_updated', pi('requires_capture'))).status).toBeNull();
    const refundObject = sim.buildRefund(pi('succeeded'), {
      amount: 1000,
      metadata: {},
      reason: null,
      status: 'succeeded',
    });
    expect(news(sim.makeEvent('charge.refund.updated', refundObject))).toMatchObject({
      resource: 'refund',
      processorReference: refundObject.id,
      status: 'approved',
    });
    expect(
      news(sim.makeEvent('refund.updated', { ...refundObject, status: 'failed', failure_reason: 'declined' })),
    ).toMatchObject({ resource: 'refund', status: 'declined' });
    expect(
      news(sim.rawEvent('charge.refunded', { id: 'ch_1', object: 'charge', payment_intent: 'pi_9' })),
    ).toMatchObject({ resource: 'payment', processorReference: 'pi_9', status: null });
    const reader = {
      id: 'tmr_1',
      object: 'terminal.reader',
      status: 'online',
      action: {
        type: 'process_payment_intent',
        status: 'succeeded',
        failure_code: null,
        process_payment_intent: { payment_intent: 'pi_7' },
      },
    };
    expect(news(sim.rawEvent('terminal.reader.action_succeeded', reader))).toMatchObject({
      resource: 'payment',
      processorReference: 'pi_7',
      status: null,
    });
    expect(news(sim.rawEvent('customer.created', { id: 'cus_1', object: 'customer' }))).toMatchObject({
      resource: 'payment',
      processorReference: 'cus_1',
      status: null,
    });
    // A PaymentIntent event whose object is malformed, or of a type we do not read, is news without a status.
    expect(news(sim.rawEvent('payment_intent.succeeded', { id: 'pi_1', object: 'payment_intent' })).status).toBeNull();
    expect(news(sim.rawEvent('payment_intent.partially_funded_v2', pi('succeeded'))).status).toBeNull();
  });
  describe('disputes', () => {
    // A disputed, succeeded PaymentIntent of the simulator, and its dispute as every event carries it.
    const paid = sim.buildPaymentIntent({
      amount: 4200,
      currency: 'usd',
      capture_method: 'automatic',
      description: null,
      metadata: {},
      payment_method_types: ['card_present'],
    });
    sim.paymentIntents.set(paid.id, paid);
    sim.setPaymentIntentStatus(paid.id, 'succeeded');
    const dispute = sim.openDispute(paid.id);
    const statuses: Record<Stripe.Dispute.Status, 'charged_back' | null> = {
      warning_needs_response: null,
      warning_under_review: null,
      warning_closed: null,
      needs_response: null,
      under_review: null,
      won: null,
      lost: 'charged_back',
    };
    const eventTypes = Object.keys(DISPUTE_EVENT_TYPES) as (keyof typeof DISPUTE_EVENT_TYPES)[];

    it('the dispute table is exactly the documented one: only lost (final at Stripe) charges back; a status Stripe adds later changes nothing', () => {
      expect(DISPUTE_STATUS_MAP).toEqual(statuses);
      for (const [status, ours] of Object.entries(statuses)) expect(disputeStatus({ status })).toBe(ours);
      for (const status of ['prevented', 'LOST', 'lost ', '', 'charged_back', '__proto__', 'constructor', 'toString'])
        expect(disputeStatus({ status })).toBeNull();
    });

    it('every dispute event of 2024-06-20 is read', () => {
      expect(eventTypes.sort()).toEqual([
        'charge.dispute.closed',
        'charge.dispute.created',
        'charge.dispute.funds_reinstated',
        'charge.dispute.funds_withdrawn',
        'charge.dispute.updated',
      ]);
    });

    it.each(
      eventTypes.flatMap((type) =>
        (Object.keys(statuses) as Stripe.Dispute.Status[]).map((status) => [type, status] as const),
      ),
    )('%s with a dispute %s → news of its PaymentIntent, charged_back only when lost', (type, status) => {
      const event = sim.makeEvent(type, { ...dispute, status });
      expect(news(event)).toEqual({
        eventId: event.id,
        resource: 'payment',
        processorReference: paid.id,
        status: statuses[status],
        trusted: true,
        // The whole dispute, normalized (src/domain/disputes.ts): its funds were withdrawn when it opened.
        dispute: {
          processorDisputeId: dispute.id,
          paymentProcessorReference: paid.id,
          status,
          amount: { minor: 4200, currency: 'USD' },
          reason: 'fraudulent',
          evidenceDueBy: dispute.evidence_details.due_by! * 1000,
          fundsWithdrawnAt: dispute.balance_transactions[0]!.created * 1000,
          fundsReinstatedAt: null,
          processorStatus: status,
        },
      });
    });

    it('an expanded payment_intent names it too; a dispute without one, or malformed, or under another event type, says nothing of any payment', () => {
      expect(
        news(sim.makeEvent('charge.dispute.closed', { ...dispute, status: 'lost', payment_intent: paid })),
      ).toMatchObject({ processorReference: paid.id, status: 'charged_back' });
      expect(
        news(sim.makeEvent('charge.dispute.closed', { ...dispute, status: 'lost', payment_intent: null })),
      ).toMatchObject({ processorReference: dispute.id, status: null });
      expect(
        news(sim.rawEvent('charge.dispute.closed', { id: 'du_1', object: 'dispute', status: 'lost' })),
      ).toMatchObject({ processorReference: 'du_1', status: null });
      expect(news(sim.rawEvent('charge.dispute.closed', { ...dispute, status: 7 }))).toMatchObject({
        processorReference: dispute.id,
        status: null,
      });
      expect(news(sim.rawEvent('charge.updated', { ...dispute, status: 'lost' }))).toMatchObject({
        processorReference: dispute.id,
        status: null,
      });
    });

    it('a lookup charges back a succeeded PaymentIntent only for a lost dispute of its own, and only reads the disputes of a disputed charge', () => {
      const succeeded = { id: paid.id, status: 'succeeded' };
      expect(chargedBackOutcome(succeeded, [{ ...dispute, status: 'lost' }])).toEqual({
        status: 'charged_back',
        processorReference: paid.id,
        action: { type: 'none' },
        processorStatus: 'dispute_lost',
      });
      expect(
        chargedBackOutcome(succeeded, [
          { ...dispute, status: 'won' },
          { ...dispute, status: 'under_review' },
        ]),
      ).toBeNull();
      expect(
        chargedBackOutcome(succeeded, [
          { ...dispute, status: 'won' },
          { ...dispute, id: 'du_2', status: 'lost' },
        ]),
      ).toMatchObject({ status: 'charged_back' });
      expect(chargedBackOutcome(succeeded, [{ ...dispute, status: 'lost', payment_intent: 'pi_other' }])).toBeNull();
      expect(chargedBackOutcome({ ...succeeded, status: 'processing' }, [{ ...dispute, status: 'lost' }])).toBeNull();
      expect(chargedBackOutcome(succeeded, [])).toBeNull();
      expect(isDisputed({ status: 'succeeded', latest_charge: { id: 'ch_1', disputed: true } })).toBe(true);
      expect(isDisputed({ status: 'succeeded', latest_charge: { id: 'ch_1', disputed: false } })).toBe(false);
      // Not expanded, absent or not succeeded: nothing to read.
      expect(isDisputed({ status: 'succeeded', latest_charge: 'ch_1' })).toBe(false);
      expect(isDisputed({ status: 'succeeded', latest_charge: null })).toBe(false);
      expect(isDisputed({ status: 'succeeded' })).toBe(false);
      expect(isDisputed({ status: 'requires_capture', latest_charge: { id: 'ch_1', disputed: true } })).toBe(false);
    });
  });
});
