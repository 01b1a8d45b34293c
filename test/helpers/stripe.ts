import type Stripe from 'stripe';
import { stripePosV1, stripeQrV1 } from '../../src/connectors/stripe/index.ts';
import type { ConnectorContext, ConnectorErrorKind, CreatePaymentInput } from '../../src/connectors/types.ts';
import { stripeId, type StripeSimulator } from '../simulators/stripe.ts';

/** Shared by the Stripe connector tests: contexts pointed at the simulator, payment inputs, the error-type oracle. */

export const SECRET_KEY = `sk_test_${stripeId('k').slice(2)}`;
export const READER = 'tmr_FrontCounter01';

export type Config = Record<string, unknown>;

export function stripeCtx(
  sim: StripeSimulator,
  configuration: Config = {},
  overrides: Partial<ConnectorContext> = {},
): ConnectorContext<any, any> {
  return {
    credentials: { secret_key: SECRET_KEY, webhook_secret: sim.webhookSecret },
    configuration,
    environment: 'test',
    fetch: sim.fetch,
    ...overrides,
  };
}

export const posConfig = (config: Config = {}) =>
  stripePosV1.configurationSchema.parse({ reader_id: READER, ...config }) as Config;
export const qrConfig = (config: Config = {}) => stripeQrV1.configurationSchema.parse(config) as Config;

export function stripePayment(
  minor: number,
  currency = 'USD',
  options: { key?: string; attemptNumber?: number; paymentId?: string } = {},
): CreatePaymentInput {
  const paymentId = options.paymentId ?? `pay_${crypto.randomUUID()}`;
  return {
    paymentId,
    processorIdempotencyKey: options.key ?? paymentId,
    attemptNumber: options.attemptNumber ?? 1,
    amount: { minor, currency },
    externalReference: `order-${crypto.randomUUID()}`,
    description: 'Two coffees',
  };
}

export const stripeLookup = (input: CreatePaymentInput, processorReference: string | null) => ({
  paymentId: input.paymentId,
  processorReference,
  processorIdempotencyKey: input.processorIdempotencyKey,
  amount: input.amount,
});

/**
 * Every error type the SDK knows (`Stripe.RawErrorType`) → ours; `unavailable` and `timeout` are the
 * retryable kinds. `idempotency_error` (a key reused with other parameters): a request with that key ran,
 * so its outcome is unknown, not failed.
 */
export const ERROR_TYPE_KINDS: Record<Stripe.RawErrorType, ConnectorErrorKind> = {
  card_error: 'declined',
  invalid_request_error: 'configuration_invalid',
  api_error: 'unavailable',
  idempotency_error: 'timeout',
  rate_limit_error: 'unavailable',
  authentication_error: 'configuration_invalid',
  invalid_grant: 'configuration_invalid',
};
