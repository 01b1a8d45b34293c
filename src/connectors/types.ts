import type { z } from 'zod';
import type { DisputeReason, DisputeStatus } from '../domain/disputes.ts';
import type { Environment } from '../domain/environment.ts';
import type { PaymentStatus, RefundedPaymentStatus } from '../domain/payment-state.ts';
import type { RefundStatus } from '../domain/refund-state.ts';
import type { RefundFailureReason } from '../domain/reversals.ts';
import type { ProcessorSettlementNullReason } from '../domain/settlement.ts';

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
 *
 * `at_terminal`: the payment was handed to the POS terminal and waits for the people at the counter (the
 * customer presents a card, or the cashier cancels on the device): a Mercado Pago Point order `created` or
 * `at_terminal`, a Stripe reader whose action is collecting this PaymentIntent, a sandbox POS amount ending
 * 56. Unlike `check_terminal` it settles by itself once they act, and it can be canceled (asynchronously
 * where the processor says so: `PaymentOutcome.cancellation`). The processor's news may be late or lost,
 * so the core re-reads such a payment on the short schedule of `src/domain/terminal-checks.ts`.
 */
export type PaymentAction =
  | { type: 'none' }
  /** `expiresAt` (epoch milliseconds): when the processor says the code stops being payable, where it says so. */
  | { type: 'display_qr'; qrData: string; expiresAt?: number }
  | { type: 'check_terminal' }
  | { type: 'at_terminal' };

export interface ConnectorContext<Credentials = unknown, Configuration = unknown> {
  /** Decrypted for the duration of one operation only; never logged, never returned. */
  credentials: Credentials;
  /**
   * The method's configuration merged with the payment's, defaults applied; for a call about an existing payment, the
   * method's with what the payment kept of its own laid over it (`ConnectorVersion.keptConfiguration`).
   */
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
  /**
   * POS only: the cart shown on the terminal before the card is presented, where the processor can show
   * one (Stripe `set_reader_display`). Its total is the payment's amount, in its currency (the adapter
   * refuses anything else: a customer must never see one total and be charged another). A version that
   * declares `display` in its configuration schema also reads it from the configuration when this is
   * absent; a version that cannot show a cart does not declare it, so the payment's configuration refuses it.
   */
  display?: TerminalDisplay;
}

/** A cart to show on a POS terminal: amounts in the payment's currency, in minor units. */
export interface TerminalDisplay {
  lines: { description: string; quantity: number; amount: Money }[];
  /** Included in `total` (shown apart where the terminal shows tax). */
  tax?: Money;
  total: Money;
}

export interface PaymentOutcome {
  status: ProcessorPaymentStatus;
  /** The processor's id of the payment (PaymentIntent id, order id...); null when none was created. */
  processorReference: string | null;
  /**
   * The processor's own id of the payment where `processorReference` is another name of it, learned only later
   * (Adyen POS: `processorReference` is the transaction id the service sent, by which Adyen's news name the payment;
   * the PSP reference its refunds and voids address exists once the terminal took the card). The core keeps the first
   * one reported and gives it back with every later call (`PaymentLookupInput`, `RefundInput`).
   */
  processorPaymentId?: string;
  action: PaymentAction;
  /** The processor's own status word, kept for support; never in a public response. */
  processorStatus: string;
  declineCode?: string;
  /**
   * Only from `cancelPayment`: `requested` means the processor accepted the cancel but has not done it yet
   * (Mercado Pago answers 202 for a Point order `at_terminal`). `status` and `action` are then the
   * payment's as they still are (the payment is not canceled); the cancellation completes later, by the
   * processor's notification or by a lookup (`getPayment` with `cancelRequested`), and the customer may
   * still pay first, in which case the payment is approved. Absent: the cancel's outcome is `status`.
   */
  cancellation?: 'requested';
  /** What the processor kept of the collected payment (see `Settlement`); absent when nothing was collected. */
  settlement?: Settlement | null;
  /** Why `settlement` is null; set exactly when it is. */
  settlementNullReason?: SettlementNullReason;
  /**
   * The payment's disputes as the processor reports them now, when this answer read them (`[]`: it has
   * none); absent when it did not. Reconciliation finds with it a dispute whose notification was lost.
   */
  disputes?: ProcessorDispute[];
  /**
   * Only from `cancelPayment`'s void of a collected payment carried out by a refund: the processor's id of that
   * refund. Kept with the void (`void_refund_reference`), so news of a failed refund reopens the payment only
   * when it is this void's refund (docs/states.md, "Void reversals").
   */
  voidRefundReference?: string;
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
 * - `unrepresentable_amount`: it booked an amount no ISO 4217 amount holds (Stripe: a fraction of a króna, whose
 *   Stripe unit is a hundredth). A settlement in a currency outside ISO 4217 may be reported as it is: the core
 *   records it so (domain/settlement.ts).
 * An outcome of money that did not move (a payment not collected, a refund not approved or failed) carries
 * no `settlement` at all. A settlement once reported does not change at the processor, so the core records
 * the first one it is given (`settlementChange`, src/domain/settlement.ts); a refund reversed later has
 * moved nothing in the end (its settlement goes).
 */
export type SettlementNullReason = ProcessorSettlementNullReason;

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
  /** `PaymentOutcome.processorPaymentId` as first reported; absent while none was. */
  processorPaymentId?: string;
  processorIdempotencyKey: string;
  amount: Money;
  /**
   * The processor accepted a cancel of this payment that has not completed (`cancellation: 'requested'`).
   * Real processors report the outcome themselves; a stateless simulated one (the sandbox) needs to be told.
   */
  cancelRequested?: boolean;
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
  /** The payment's `PaymentOutcome.processorPaymentId` as first reported; absent while none was. */
  paymentProcessorPaymentId?: string;
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

export interface DisputeLookupInput {
  processorDisputeId: string;
  /** The disputed payment as the lookups know it (its `processorReference` is set: it was collected). */
  payment: PaymentLookupInput;
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
      /** Verified news naming the payment's `PaymentOutcome.processorPaymentId` (kept when none was yet). */
      processorPaymentId?: string;
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
      /**
       * With status `approved`, when the news itself says what the processor kept (as `PaymentOutcome`);
       * absent when it does not (the core may read the payment for it).
       */
      settlement?: Settlement | null;
      settlementNullReason?: SettlementNullReason;
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

/**
 * The processor refused to hand a payment (or a display) to the terminal because the terminal cannot take
 * it now: `offline` (Stripe `terminal_reader_offline`, the sandbox's offline device) or `busy` with another
 * action (Stripe `terminal_reader_busy`, Mercado Pago `already_queued_order_for_terminal`). It answers at
 * once, instead of after the processor's timeout. Its kind is `unavailable`: nothing was collected and the
 * same request may succeed once the device is back, so code that knows only `ConnectorError` stays right;
 * the core may tell the merchant which (`terminal`) instead of a generic 503.
 */
export class TerminalUnavailableError extends ConnectorError {
  constructor(
    readonly terminal: 'offline' | 'busy',
    message: string,
    processorCode?: string,
  ) {
    super('unavailable', message, processorCode);
    this.name = 'TerminalUnavailableError';
  }
}

// ---------------------------------------------------------------------------------------------------------
// Terminals (POS versions)

/**
 * A POS terminal as its processor reports it. `unknown`: the processor does not say (Mercado Pago's
 * terminals API shows no connectivity), which is never read as online.
 */
export type TerminalStatus = 'online' | 'offline' | 'busy' | 'unknown';

/**
 * What a terminal is busy with, normalized: a `payment` (`processorReference` is its processor id when the
 * processor names it, so the core can tell its own payment from another), a `refund`, saving a card
 * (`setup`), collecting `input` on screen, or anything `other`.
 */
export interface TerminalActivity {
  kind: 'payment' | 'refund' | 'setup' | 'input' | 'other';
  processorReference: string | null;
}

export interface TerminalState {
  /** The processor's id of the device (Stripe `tmr_…`, Mercado Pago `NEWLAND_N950__…`). */
  processorId: string;
  status: TerminalStatus;
  /** Set when `busy`, and when `offline` with an action the device was doing when it was last seen. */
  busyWith?: TerminalActivity;
  /**
   * Mercado Pago Point's operating mode: only `pdv` (and `self_service`) terminals take orders from the
   * API; `standalone` ones are operated by hand; `unknown` when Mercado Pago says `UNDEFINED` or another word.
   */
  operatingMode?: 'pdv' | 'self_service' | 'standalone' | 'unknown';
  /** The processor's own words, kept for support; never in a public response. */
  processorStatus: string;
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
  /**
   * The payment's disputes as the processor reports them now (`[]`: none), each normalized through the
   * connector's status table. Versions that can list them declare `disputeWindowMs`; the dispute re-reads
   * (src/jobs/dispute-checks.ts) use it to find a dispute whose notification was lost. `not_found` when the
   * processor has no such payment.
   */
  listDisputes?(
    ctx: ConnectorContext<Credentials, Configuration>,
    input: PaymentLookupInput,
  ): Promise<ProcessorDispute[]>;
  /**
   * One dispute by the processor's id, for a dispute still open after the payment's window, where reading it
   * costs less than listing the payment's. `not_found` when the processor does not know it (or it is another
   * payment's).
   */
  getDispute?(ctx: ConnectorContext<Credentials, Configuration>, input: DisputeLookupInput): Promise<ProcessorDispute>;
  /** Verifies the notification's signature (failing closed) and parses it. Throws `invalid_notification`. */
  parseNotification(
    ctx: ConnectorContext<Credentials, Configuration>,
    input: InboundNotification,
  ): Promise<ProcessorNotification>;
  /**
   * POS versions whose processor can describe the device: the terminal of the method's configuration (the
   * core may merge a payment's over it, as for a create). One processor read, nothing written, so the core
   * may cache it briefly for a checkout screen that polls. Throws `configuration_invalid` when no terminal is
   * configured, `not_found` when the processor does not list it, `unavailable`/`timeout` as any read.
   */
  getTerminal?(ctx: ConnectorContext<Credentials, Configuration>): Promise<TerminalState>;
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
  /**
   * The deployments that offer it; absent: both. A version not offered in one is not listed there, no method can be
   * made or changed on it, and its adapter refuses every call there (`defineVersion`): the sandbox moves no money, so
   * it is `test` only, as Stripe's test keys and Mercado Pago's `TEST-` tokens are refused in `live`.
   */
  environments?: readonly Environment[];
  credentialsSchema: z.ZodType;
  /** Every field has a default or is optional, so `{}` is a valid configuration. */
  configurationSchema: z.ZodType;
  /**
   * The configuration fields that say where a payment is made (the POS terminal, the till it speaks as), where later
   * calls of the payment need them (Adyen addresses every read and abort to the terminal). Kept with each payment
   * from the configuration it was created with (the method's merged with the payment's own) and laid over the
   * method's for every later call of it, so a terminal given per payment, or a method moved to another terminal
   * since, never sends them elsewhere. Absent: later calls use the method's configuration.
   */
  keptConfiguration?: readonly string[];
  /**
   * How long after approval the processor may still report a refund (or a void's refund) failed; absent
   * when its material documents no such failure. Reconciliation keeps reading approved refunds this long.
   */
  refundReversalWindowMs?: number;
  /**
   * How long after a sale the processor lets a cardholder dispute it; set exactly when the adapter can list a
   * payment's disputes (`listDisputes`). The dispute re-reads list a collected payment's disputes this long.
   */
  disputeWindowMs?: number;
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
