import type { z } from 'zod';
import type { DisputeReason, DisputeStatus } from '../domain/disputes.ts';
import type { Environment } from '../domain/environment.ts';
import type { PaymentStatus, RefundedPaymentStatus } from '../domain/payment-state.ts';
import type { RefundStatus } from '../domain/refund-state.ts';
import type { RefundFailureReason } from '../domain/reversals.ts';

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
  /** What the processor kept of the collected payment (see `Settlement`); absent when nothing was collected. */
  settlement?: Settlement | null;
  /** Why `settlement` is null; set exactly when it is. */
  settlementNullReason?: SettlementNullReason;
  /**
   * The payment's disputes as the processor reports them now, when this answer read them (`[]`: it has
   * none); absent when it did not. Reconciliation finds with it a dispute whose notification was lost.
   */
  disputes?: ProcessorDispute[];
}

/**
 * What the processor kept of an operation and when the rest is the merchant's, as it reports it. Signed
 * as the merchant's balance moves: a payment's `net` is positive, a refund's negative, and `net` is the
 * gross amount less `fee`. In the currency the processor settles in, which may differ from the payment's
 * (Stripe converts to the account's currency). `availableOn`: epoch milliseconds.
 */
export interface Settlement {
  fee: Money;
  net: Money;
  availableOn: number;
}

/**
 * Why an outcome says `settlement: null` although the money moved:
 * - `pending_at_processor`: collected, but the processor has not booked it yet; a later read tells.
 * - `not_reported`: the processor's API does not report it for this operation (each NOTES.md says where).
 * An outcome of money that did not move (a payment not collected, a refund not approved or failed) carries
 * no `settlement` at all. A settlement once reported does not change at the processor, so the core records
 * the first one it is given; a refund reversed later has moved nothing in the end (its settlement goes).
 */
export type SettlementNullReason = 'pending_at_processor' | 'not_reported';

/**
 * A dispute (an inquiry or a chargeback) of a payment, normalized (src/domain/disputes.ts has the statuses,
 * reasons and the rules the core applies). Times are epoch milliseconds.
 */
export interface ProcessorDispute {
  /** The processor's id of the dispute (Stripe `du_…`, a Mercado Pago chargeback id). */
  processorDisputeId: string;
  /** The `processorReference` of the disputed payment. */
  paymentProcessorReference: string;
  status: DisputeStatus;
  /** In the dispute's own currency; usually the payment's amount, but a dispute may be partial. */
  amount: Money;
  reason: DisputeReason;
  evidenceDueBy: number | null;
  fundsWithdrawnAt: number | null;
  fundsReinstatedAt: number | null;
  /** The processor's own status word, kept for support; never in a public response. */
  processorStatus: string;
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
  /**
   * Why the refund failed (status `failed` or `declined`), when the processor says. An approved refund
   * reported failed later is a reversal (`reverseRefund` in src/domain/reversals.ts).
   */
  failureReason?: RefundFailureReason;
  /** As on `PaymentOutcome`: a refund's `net` is negative (the money left the merchant's balance). */
  settlement?: Settlement | null;
  settlementNullReason?: SettlementNullReason;
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
  | {
      resource: 'payment';
      status: ProcessorPaymentStatus | null;
      /**
       * News of one of the payment's disputes, to be believed only when `trusted` (otherwise the core reads
       * `getPayment`'s `disputes`). `status` is then `charged_back` when the dispute is lost (the chargeback
       * summary), else null.
       */
      dispute?: ProcessorDispute;
      /**
       * With status `approved`: the refund that fulfilled a void of this collected payment failed, so the
       * money is back with the merchant (`reverseVoid` in src/domain/reversals.ts).
       */
      voidReversal?: { processorRefundReference: string; failureReason: RefundFailureReason };
    }
  | {
      resource: 'refund';
      status: ProcessorRefundStatus | null;
      /** With status `failed`/`declined`: why it failed, when the notification says. */
      failureReason?: RefundFailureReason;
    }
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
  /**
   * The refund by which this connector fulfilled a void of the payment (absent on connectors whose void
   * is no refund that can fail later). `not_found` when there is none. Reconciliation reads it for payments
   * voided within `refundReversalWindowMs`, to find a void reversed after its notification was lost.
   */
  getVoidRefund?(ctx: ConnectorContext<Credentials, Configuration>, input: PaymentLookupInput): Promise<RefundOutcome>;
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
  /**
   * How long after approval the processor may still report a refund (or a void's refund) failed; absent
   * when its material documents no such failure. Reconciliation keeps reading approved refunds this long.
   */
  refundReversalWindowMs?: number;
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
