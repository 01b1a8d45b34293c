import type { z } from '@hono/zod-openapi';
import type { Environment } from '../domain/environment.ts';
import type { PaymentStatus, RefundedPaymentStatus } from '../domain/payment-state.ts';
import type { RefundStatus } from '../domain/refund-state.ts';

/**
 * The connector interface. A connector version describes what a processor integration offers (channel,
 * capabilities, currencies, credential and configuration schemas); its adapter performs the operations.
 * Adapters are stateless: everything they need arrives in the context and the input, and the core
 * persists each attempt before calling them and records the outcome after.
 *
 * Shaped after real processors: Stripe PaymentIntents (card-present Terminal readers for POS, QR methods
 * through `next_action`) and Mercado Pago's Orders API (dynamic QR, Point terminals). Both take an
 * idempotency key per request, answer asynchronously for most outcomes, and notify through signed
 * webhooks; both are covered by the shapes below.
 */

export type Channel = 'pos' | 'qr';
export type Capability = 'payments' | 'refunds' | 'cancellations';
export const CAPABILITIES = ['payments', 'refunds', 'cancellations'] as const satisfies readonly Capability[];

/**
 * Our payment statuses a processor can report: all but `created` (ours before the processor is asked) and
 * the refund statuses (derived by the core from the refund ledger), plus `charged_back`: the payer's bank
 * took an approved payment's money back (a chargeback; not a status of ours, docs/states.md).
 */
export type ProcessorPaymentStatus = Exclude<PaymentStatus, 'created' | RefundedPaymentStatus> | 'charged_back';
/** Our refund statuses a processor can report: all but `created`. */
export type ProcessorRefundStatus = Exclude<RefundStatus, 'created'>;

export interface Money {
  /** Integer minor units (cents; CLP has none). */
  minor: number;
  currency: string;
}

/**
 * `check_terminal`: the payment stays `pending` but will not settle by itself; someone must check the
 * terminal (e.g. Mercado Pago Point's `action_required`). The core shows it, tells the merchant, and
 * stops polling the processor for it.
 */
export type PaymentAction = { type: 'none' } | { type: 'display_qr'; qrData: string } | { type: 'check_terminal' };

export interface ConnectorContext<Credentials = unknown, Configuration = unknown> {
  /** Decrypted for the duration of one operation only; never logged, never returned. */
  credentials: Credentials;
  /** The method's configuration merged with the payment's, defaults applied. */
  configuration: Configuration;
  environment: Environment;
  /** Outbound HTTP; tests point it at a processor simulator. */
  fetch: typeof fetch;
}

export interface CreatePaymentInput {
  paymentId: string;
  /**
   * Sent to the processor as its idempotency key. Stable for one payment attempt: a retry after a
   * timeout resumes the same processor-side operation instead of creating a second charge.
   */
  processorIdempotencyKey: string;
  /** 1 for the first call of this attempt, 2 for the first retry... Real processors rely on the key. */
  attemptNumber: number;
  amount: Money;
  externalReference: string;
  description?: string;
  /** Where the processor should send its notifications about this payment. */
  notificationUrl?: string;
}

export interface PaymentOutcome {
  status: ProcessorPaymentStatus;
  /** The processor's id of the payment (PaymentIntent id, order id...); null when none was created. */
  processorReference: string | null;
  action: PaymentAction;
  /** The processor's own status word, kept for support; never in a public response. */
  processorStatus: string;
  declineCode?: string;
}

export interface PaymentLookupInput {
  paymentId: string;
  processorReference: string | null;
  processorIdempotencyKey: string;
  amount: Money;
}

export interface CancelPaymentInput extends PaymentLookupInput {
  processorIdempotencyKey: string;
  /** The payment's status before the cancel: `approved` asks for a void. */
  currentStatus: ProcessorPaymentStatus;
}

export interface RefundInput {
  refundId: string;
  processorIdempotencyKey: string;
  attemptNumber: number;
  paymentProcessorReference: string;
  amount: Money;
  reason?: string;
}

export interface RefundOutcome {
  status: ProcessorRefundStatus;
  processorReference: string | null;
  processorStatus: string;
}

export interface RefundLookupInput {
  refundId: string;
  amount: Money;
  processorReference: string | null;
  processorIdempotencyKey: string;
  paymentProcessorReference: string;
}

export interface InboundNotification {
  headers: Headers;
  rawBody: string;
  url: string;
}

/**
 * What a verified notification says. `trusted: false` means the processor sent it unsigned (some
 * processors document such cases): the core must re-fetch the resource instead of believing the body.
 */
export type ProcessorNotification = {
  eventId: string;
  processorReference: string;
  trusted: boolean;
} & (
  | { resource: 'payment'; status: ProcessorPaymentStatus | null }
  | { resource: 'refund'; status: ProcessorRefundStatus | null }
);

/** `not_found`: the processor has no such payment or refund (only from the lookups). */
export type ConnectorErrorKind =
  | 'declined'
  | 'timeout'
  | 'unavailable'
  | 'configuration_invalid'
  | 'invalid_notification'
  | 'not_found';

/**
 * The only error an adapter throws. The processor's own code is kept for `details`; its raw payload is
 * not, so nothing of it can reach a public response.
 */
export class ConnectorError extends Error {
  constructor(
    readonly kind: ConnectorErrorKind,
    message: string,
    readonly processorCode?: string,
  ) {
    super(message);
    this.name = 'ConnectorError';
  }
}

export interface ConnectorAdapter<Credentials = unknown, Configuration = unknown> {
  createPayment(ctx: ConnectorContext<Credentials, Configuration>, input: CreatePaymentInput): Promise<PaymentOutcome>;
  getPayment(ctx: ConnectorContext<Credentials, Configuration>, input: PaymentLookupInput): Promise<PaymentOutcome>;
  cancelPayment(ctx: ConnectorContext<Credentials, Configuration>, input: CancelPaymentInput): Promise<PaymentOutcome>;
  refundPayment(ctx: ConnectorContext<Credentials, Configuration>, input: RefundInput): Promise<RefundOutcome>;
  getRefund(ctx: ConnectorContext<Credentials, Configuration>, input: RefundLookupInput): Promise<RefundOutcome>;
  /** Verifies the notification's signature (failing closed) and parses it. Throws `invalid_notification`. */
  parseNotification(
    ctx: ConnectorContext<Credentials, Configuration>,
    input: InboundNotification,
  ): Promise<ProcessorNotification>;
}

export interface ConnectorVersion {
  /** The value of `connector_definition_version_id`. */
  id: string;
  definitionId: string;
  provider: string;
  name: string;
  type: Channel;
  version: string;
  status: 'published' | 'deprecated';
  capabilities: Capability[];
  currencies: string[];
  credentialsSchema: z.ZodType;
  /** Every field has a default or is optional, so `{}` is a valid configuration. */
  configurationSchema: z.ZodType;
  // biome-ignore lint/suspicious/noExplicitAny: the registry holds versions of every credential and configuration type; each version's defineVersion checks its own.
  adapter: ConnectorAdapter<any, any>;
}

export interface ConnectorDefinition {
  id: string;
  provider: string;
  name: string;
  type: Channel;
  versions: ConnectorVersion[];
}
