/**
 * The Adyen SDK's models, imported as types only (`@adyen/api-library` uses `node:crypto` and `https`, so it
 * cannot run in a Worker): they are the oracle of every field the connector sends or reads, and nothing of the
 * SDK is bundled. `Wire<T>` is a model as it travels in JSON: the SDK types enumerations as TypeScript enums and
 * timestamps as `Date`, where the wire carries their string values.
 */
import type { DeviceStatusResponse } from '@adyen/api-library/lib/src/typings/clouddevice/deviceStatusResponse';
import type { CheckoutQrCodeAction } from '@adyen/api-library/lib/src/typings/checkout/checkoutQrCodeAction';
import type { PaymentCancelRequest } from '@adyen/api-library/lib/src/typings/checkout/paymentCancelRequest';
import type { PaymentCancelResponse } from '@adyen/api-library/lib/src/typings/checkout/paymentCancelResponse';
import type { PaymentDetails } from '@adyen/api-library/lib/src/typings/checkout/paymentDetails';
import type { PaymentRefundRequest } from '@adyen/api-library/lib/src/typings/checkout/paymentRefundRequest';
import type { PaymentRefundResponse } from '@adyen/api-library/lib/src/typings/checkout/paymentRefundResponse';
import type { PaymentRequest as CheckoutPaymentRequest } from '@adyen/api-library/lib/src/typings/checkout/paymentRequest';
import type { PaymentResponse as CheckoutPaymentResponse } from '@adyen/api-library/lib/src/typings/checkout/paymentResponse';
import type { PaymentReversalRequest } from '@adyen/api-library/lib/src/typings/checkout/paymentReversalRequest';
import type { PaymentReversalResponse } from '@adyen/api-library/lib/src/typings/checkout/paymentReversalResponse';
import type { PixDetails } from '@adyen/api-library/lib/src/typings/checkout/pixDetails';
import type { DeviceStatus } from '@adyen/api-library/lib/src/typings/clouddevice/deviceStatus';
import type { NotificationRequestItem } from '@adyen/api-library/lib/src/typings/notification/notificationRequestItem';
import type { ErrorCondition } from '@adyen/api-library/lib/src/typings/tapi/errorCondition';
import type { Result } from '@adyen/api-library/lib/src/typings/tapi/result';
import type { TerminalAPIRequest } from '@adyen/api-library/lib/src/typings/tapi/terminalAPIRequest';
import type { TerminalAPIResponse } from '@adyen/api-library/lib/src/typings/tapi/terminalAPIResponse';

/** A model as JSON carries it: enumerations as their string values, `Date` as an ISO 8601 string. */
export type Wire<T> = T extends Date
  ? string
  : T extends string
    ? `${T}`
    : T extends number | boolean | null | undefined
      ? T
      : T extends readonly (infer U)[]
        ? Wire<U>[]
        : T extends object
          ? { [K in keyof T]: Wire<T[K]> }
          : T;

// Terminal API (typings/tapi)
export type TerminalRequest = Wire<TerminalAPIRequest>;
export type TerminalResponse = Wire<TerminalAPIResponse>;
/** `tapi.ErrorCondition`: why a Terminal API request failed (`Response.ErrorCondition`). */
export type TerminalErrorCondition = `${ErrorCondition}`;
/** `tapi.Result`: `Response.Result`. */
export type TerminalResult = `${Result}`;

// Cloud device API (typings/clouddevice)
export type CloudDeviceStatus = `${DeviceStatus}`;
export type CloudDeviceStatusResponse = Wire<DeviceStatusResponse>;

// Checkout API v72 (typings/checkout)
export type CheckoutPayment = Wire<CheckoutPaymentRequest>;
export type CheckoutPaymentAnswer = Wire<CheckoutPaymentResponse>;
/** `checkout.PaymentResponse.ResultCodeEnum`. */
export type CheckoutResultCode = `${CheckoutPaymentResponse.ResultCodeEnum}`;
export type CheckoutQrAction = Wire<CheckoutQrCodeAction>;
export type CheckoutRefund = Wire<PaymentRefundRequest>;
export type CheckoutRefundAnswer = Wire<PaymentRefundResponse>;
export type CheckoutCancel = Wire<PaymentCancelRequest>;
export type CheckoutCancelAnswer = Wire<PaymentCancelResponse>;
export type CheckoutReversal = Wire<PaymentReversalRequest>;
export type CheckoutReversalAnswer = Wire<PaymentReversalResponse>;
/**
 * The QR methods the connector offers: Pix is `PixDetails.TypeEnum`, the others are `PaymentDetails.TypeEnum`
 * values (`paynow`, `promptpay`, `duitnow`, `wechatpayQR`).
 */
export type CheckoutQrMethod =
  | `${PixDetails.TypeEnum}`
  | Extract<`${PaymentDetails.TypeEnum}`, 'paynow' | 'promptpay' | 'duitnow' | 'wechatpayQR'>;

// Standard webhooks (typings/notification)
export type NotificationItem = Wire<NotificationRequestItem>;
/** `notification.NotificationRequestItem.EventCodeEnum`. */
export type SdkEventCode = `${NotificationRequestItem.EventCodeEnum}`;
