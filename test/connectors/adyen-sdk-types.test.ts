import { describe, expect, it } from 'vitest';
import type {
  CheckoutPayment,
  CheckoutRefund,
  CheckoutResultCode,
  SdkEventCode,
  TerminalErrorCondition,
  TerminalRequest,
} from '../../src/connectors/adyen/sdk.ts';
import {
  CHECKOUT_RESULT_STATUS,
  ERROR_CONDITION_STATUS,
  EVENT_RULES,
  type AdyenEventCode,
} from '../../src/connectors/adyen/transformers.ts';
import type { ProcessorPaymentStatus } from '../../src/connectors/types.ts';

/**
 * Tests of the typecheck itself: `npm run typecheck` compiles this file. Each `@ts-expect-error` below is a field
 * or value the Adyen SDK (`@adyen/api-library` 32.1.0, types only) does not know, written the way the connector
 * writes its requests and tables. If the typing ever loosened so that one compiled, the directive itself would be
 * the error ("Unused '@ts-expect-error' directive") and `npm run typecheck` would fail.
 */

describe('requests are typed by the SDK’s models', () => {
  it('a misspelt or mistyped request field fails typecheck', () => {
    const payment = {
      amount: { currency: 'BRL', value: 1000 },
      merchantAccount: 'M',
      paymentMethod: { type: 'pix' },
      reference: 'pay_1',
      returnUrl: 'https://shop.example',
    } satisfies CheckoutPayment;
    // @ts-expect-error `merchantAcount` is not a field of checkout.PaymentRequest (and `merchantAccount` is required)
    ({ ...payment, merchantAccount: undefined, merchantAcount: 'M' }) satisfies CheckoutPayment;
    // @ts-expect-error Checkout amounts are integers of minor units, never decimal strings
    ({ merchantAccount: 'M', amount: { currency: 'BRL', value: '10.00' } }) satisfies CheckoutRefund;
    const header = {
      MessageClass: 'Service',
      MessageCategory: 'Payment',
      MessageType: 'Request',
      SaleID: 'till',
      POIID: 'P400-1',
    } as const;
    const request = {
      SaleToPOIRequest: {
        MessageHeader: header,
        PaymentRequest: {
          SaleData: { SaleTransactionID: { TransactionID: 'pay_1', TimeStamp: '2026-01-01T00:00:00.000Z' } },
          PaymentTransaction: { AmountsReq: { Currency: 'USD', RequestedAmount: 10.5 } },
        },
      },
    } satisfies TerminalRequest;
    // @ts-expect-error `MessageClass` is tapi.MessageClass: `Services` is none of its values
    ({ SaleToPOIRequest: { MessageHeader: { ...header, MessageClass: 'Services' } } }) satisfies TerminalRequest;
    const wrong = {
      SaleToPOIRequest: {
        MessageHeader: header,
        PaymentRequest: {
          ...request.SaleToPOIRequest.PaymentRequest,
          PaymentTransaction: { AmountsReq: { Currency: 'USD', RequestedAmount: '10.50' } },
        },
      },
    };
    // @ts-expect-error the Terminal API's `RequestedAmount` is a number in major units, not a string
    wrong satisfies TerminalRequest;
    expect(request.SaleToPOIRequest.PaymentRequest.PaymentTransaction.AmountsReq.RequestedAmount).toBe(10.5);
  });
});

describe('tables are keyed by the SDK’s unions', () => {
  it('a value outside the union fails typecheck, and every value of it is mapped', () => {
    // @ts-expect-error `Approved` is not a checkout.PaymentResponse.ResultCodeEnum value
    const code: CheckoutResultCode = 'Approved';
    // @ts-expect-error `Declined` is not a tapi.ErrorCondition value
    const condition: TerminalErrorCondition = 'Declined';
    // @ts-expect-error `PAYMENT_SUCCEEDED` is an eventCode of neither the SDK nor the description
    const event: AdyenEventCode = 'PAYMENT_SUCCEEDED';
    const { Authorised: _dropped, ...withoutOne } = CHECKOUT_RESULT_STATUS;
    // @ts-expect-error a table missing `Authorised` is not a Record over the SDK's union
    withoutOne satisfies Record<CheckoutResultCode, ProcessorPaymentStatus>;
    const sdkCode: SdkEventCode = 'AUTHORISATION';
    expect([code, condition, event, EVENT_RULES[sdkCode].kind, ERROR_CONDITION_STATUS.Refusal]).toEqual([
      'Approved',
      'Declined',
      'PAYMENT_SUCCEEDED',
      'payment',
      'declined',
    ]);
  });
});
