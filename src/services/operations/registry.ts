import { cancelPayment } from '../payments/cancel-payment.ts';
import { createPayment } from '../payments/create-payment.ts';
import { createRefund } from '../payments/create-refund.ts';
import type { InputOf } from './operation.ts';

/** Every idempotent operation, by name: what the idempotency object can run (docs/idempotency.md). */
export const OPERATIONS = {
  [createPayment.name]: createPayment,
  [cancelPayment.name]: cancelPayment,
  [createRefund.name]: createRefund,
} as const;

export type Operations = typeof OPERATIONS;
export type OperationName = keyof Operations;

/** One request for one declared operation, as it crosses from the Worker into the idempotency object. */
export type OperationInvocation = {
  [Name in OperationName]: { operation: Name; input: InputOf<Operations[Name]> };
}[OperationName];
