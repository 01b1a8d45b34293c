import { z } from '@hono/zod-openapi';
import type Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { stripeRequest } from '../../src/connectors/stripe/index.ts';
import {
  sdkShape,
  StripePaymentIntent,
  type StripeDisputeEventType,
  type StripeErrorCode,
} from '../../src/connectors/stripe/sdk.ts';
import {
  DISPUTE_EVENT_TYPES,
  DISPUTE_STATUS_MAP,
  PAYMENT_INTENT_STATUS_MAP,
  STRIPE_ERROR_CODE_MAP,
} from '../../src/connectors/stripe/transformers.ts';
import type { ConnectorErrorKind, ProcessorPaymentStatus } from '../../src/connectors/types.ts';

/**
 * Tests of the typecheck itself: `npm run typecheck` compiles this file. Each `@ts-expect-error` below is
 * a field the official SDK (`stripe` 16.12.0, API 2024-06-20) does not know, or reads with another type,
 * written the way the connector writes its requests, schemas and tables. Typecheck must reject each one;
 * if the connector's typing ever loosened so that one compiled, the directive would itself be the error
 * ("Unused '@ts-expect-error' directive") and `npm run typecheck` would fail. The runtime assertions
 * check that the well-typed neighbours of those lines build what they should.
 */

type DisplayLine = Stripe.Terminal.ReaderSetReaderDisplayParams.Cart.LineItem;

describe('requests are typed by the SDK’s parameter types', () => {
  it('a misspelt or mistyped request field fails typecheck', () => {
    // @ts-expect-error `ammount` is not a field of Stripe.PaymentIntentCreateParams
    stripeRequest.createPaymentIntent({ ammount: 1000, currency: 'usd' }, 'key');
    // @ts-expect-error `capture_method` is the SDK's union ('automatic' | 'automatic_async' | 'manual')
    stripeRequest.createPaymentIntent({ amount: 1000, currency: 'usd', capture_method: 'automatically' }, 'key');
    // @ts-expect-error `amount` of Stripe.RefundCreateParams is a number of minor units, not a decimal string
    stripeRequest.createRefund({ payment_intent: 'pi_1', amount: '10.00' }, 'key');
    // @ts-expect-error `skip_tip` is not in Stripe.Terminal.ReaderProcessPaymentIntentParams.ProcessConfig
    stripeRequest.processPaymentIntent('tmr_1', { payment_intent: 'pi_1', process_config: { skip_tip: true } }, 'key');
    // @ts-expect-error `amount_to_captur` is not a field of Stripe.PaymentIntentCaptureParams
    stripeRequest.capturePaymentIntent('pi_1', { amount_to_captur: 100 }, 'key');
    // @ts-expect-error `paymentintent` is not a field of Stripe.RefundListParams
    stripeRequest.listRefunds({ paymentintent: 'pi_1' });
    // @ts-expect-error `payment_intent_id` is not a field of Stripe.DisputeListParams
    stripeRequest.listDisputes({ payment_intent_id: 'pi_1' });
    // @ts-expect-error `expand` of Stripe.PaymentIntentRetrieveParams is a list of paths
    stripeRequest.retrievePaymentIntent('pi_1', { expand: 'latest_charge' });
    // @ts-expect-error `totl` is not a field of Stripe.Terminal.ReaderSetReaderDisplayParams.Cart
    stripeRequest.setReaderDisplay('tmr_1', { type: 'cart', cart: { currency: 'usd', line_items: [], totl: 1 } }, 'k');
    // @ts-expect-error `type` of Stripe.Terminal.ReaderSetReaderDisplayParams is only 'cart'
    stripeRequest.setReaderDisplay('tmr_1', { type: 'text' }, 'k');
    // @ts-expect-error a line item's `amount` is an integer of minor units, not a decimal string
    const line: DisplayLine = { amount: '9.00', description: 'Tea', quantity: 1 };
    expect(line.quantity).toBe(1);

    const request = stripeRequest.processPaymentIntent(
      'tmr_1',
      { payment_intent: 'pi_1', process_config: { skip_tipping: true } },
      'key',
    );
    expect(request).toEqual({
      method: 'POST',
      path: '/v1/terminal/readers/tmr_1/process_payment_intent',
      params: { payment_intent: 'pi_1', process_config: { skip_tipping: true } },
      idempotencyKey: 'key',
    });
  });
});

describe('response schemas agree with the SDK’s object types', () => {
  it('a schema field the SDK type lacks, or types otherwise, fails typecheck', () => {
    // @ts-expect-error `statuss` is not a field of Stripe.PaymentIntent
    sdkShape<Stripe.PaymentIntent>()({ statuss: z.string() });
    // @ts-expect-error `amount` of Stripe.PaymentIntent is a number
    sdkShape<Stripe.PaymentIntent>()({ amount: z.string() });
    // @ts-expect-error `payment_intent` of Stripe.Refund may come expanded (an object): a string-only schema would refuse it
    sdkShape<Stripe.Refund>()({ payment_intent: z.string().nullable() });
    // @ts-expect-error `dat` is not a field of Stripe.PaymentIntent.NextAction.PromptpayDisplayQrCode (nested objects are checked too)
    sdkShape<Stripe.PaymentIntent.NextAction.PromptpayDisplayQrCode>()({ dat: z.string() });
    // @ts-expect-error `livemode` of Stripe.Event is a boolean
    sdkShape<Stripe.Event>()({ livemode: z.literal('false') });

    // The connector's own schema is one that compiles, and parses what the SDK type describes.
    const shape = sdkShape<Stripe.PaymentIntent>()({ status: z.string(), amount: z.number() });
    expect(Object.keys(shape)).toEqual(['status', 'amount']);
    expect(Object.keys(StripePaymentIntent.shape)).toContain('next_action');
  });
});

describe('tables are keyed by the SDK’s unions', () => {
  it('a status or error code the SDK does not have fails typecheck', () => {
    // @ts-expect-error 'approved' is not a Stripe.PaymentIntent.Status
    void ({ ...PAYMENT_INTENT_STATUS_MAP, approved: 'approved' } satisfies Record<
      Stripe.PaymentIntent.Status,
      ProcessorPaymentStatus
    >);
    const incomplete = {
      requires_payment_method: 'pending',
      requires_confirmation: 'pending',
      requires_action: 'pending',
      requires_capture: 'processing',
      succeeded: 'approved',
      canceled: 'canceled',
    } as const;
    // @ts-expect-error a table missing a status of the SDK's union (here `processing`) is incomplete
    void (incomplete satisfies Record<Stripe.PaymentIntent.Status, ProcessorPaymentStatus>);
    // @ts-expect-error 'charged_back' is not a Stripe.Dispute.Status (Stripe says `lost`)
    void ({ ...DISPUTE_STATUS_MAP, charged_back: 'charged_back' } satisfies Record<
      Stripe.Dispute.Status,
      'charged_back' | null
    >);
    // @ts-expect-error 'charge.dispute.lost' is not an event of the 2024-06-20 API (a lost dispute comes as `charge.dispute.closed`)
    void ({ ...DISPUTE_EVENT_TYPES, 'charge.dispute.lost': true } satisfies Record<StripeDisputeEventType, true>);
    // @ts-expect-error 'terminal_reader_invalid_state' is not an error code of the 2024-06-20 API
    void ({ ...STRIPE_ERROR_CODE_MAP, terminal_reader_invalid_state: 'unavailable' } satisfies Partial<
      Record<StripeErrorCode, ConnectorErrorKind>
    >);

    expect(PAYMENT_INTENT_STATUS_MAP.succeeded).toBe('approved');
    expect(STRIPE_ERROR_CODE_MAP.terminal_reader_offline).toBe('unavailable');
  });
});
