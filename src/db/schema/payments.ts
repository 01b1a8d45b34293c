import { sql } from 'drizzle-orm';
import { sqliteTable, text, integer, index, uniqueIndex } from 'drizzle-orm/sqlite-core';
import type { Environment } from '../../domain/environment.ts';
import type { PaymentStatus, RequiredAction } from '../../domain/payment-state.ts';
import type { RefundStatus } from '../../domain/refund-state.ts';
import type { RefundFailureReason } from '../../domain/reversals.ts';
import type { SettlementNullReason } from '../../domain/settlement.ts';
import type { PaymentRecord, RefundRecord } from '../../domain/ledger/records.ts';

/**
 * Payments. `version` grows by one with every change: writers read, decide through the state machine,
 * and write back only if the version is unchanged (compare-and-set), so concurrent changes of one
 * payment (refunds, notifications, cancel) never overwrite each other. The refunds table is the ledger;
 * a refund change bumps its payment's version too.
 */
export const payments = sqliteTable(
  'payments',
  {
    id: text('id').primaryKey(),
    /** The owner (control plane `users.id`; no foreign key: it lives in another database). */
    ownerId: text('owner_id').notNull(),
    environment: text('environment').$type<Environment>().notNull(),
    /** Control plane `payment_methods.id` (no foreign key: another database). */
    paymentMethodId: text('payment_method_id').notNull(),
    apiKeyId: text('api_key_id'),
    /** The caller key (domain/caller.ts `callerKey`) of the creator: `external_reference` is unique within it. */
    referenceScope: text('reference_scope').notNull(),
    externalReference: text('external_reference').notNull(),
    amountMinor: integer('amount_minor').notNull(),
    currency: text('currency').notNull(),
    status: text('status').$type<PaymentStatus>().notNull(),
    version: integer('version').notNull(),
    // The running totals (domain/ledger/records.ts), written only by the ledger's changes.
    amountRefunded: integer('amount_refunded').notNull().default(0),
    amountReserved: integer('amount_reserved').notNull().default(0),
    refundCount: integer('refund_count').notNull().default(0),
    amountChargedBack: integer('amount_charged_back').notNull().default(0),
    openDisputeId: text('open_dispute_id'),
    processorReference: text('processor_reference'),
    /** The processor's own id of the payment where `processor_reference` is another name of it (Adyen POS: the PSP reference); the first reported. */
    processorPaymentId: text('processor_payment_id'),
    /** Sent to the processor with every call for this payment's creation; never changes. */
    processorIdempotencyKey: text('processor_idempotency_key').notNull(),
    processorAttempts: integer('processor_attempts').notNull(),
    processorStatus: text('processor_status'),
    qrData: text('qr_data'),
    /**
     * Set when the processor said the payment will not settle by itself until someone acts (e.g. checks
     * the terminal); shown as `action` while the payment is `pending`. Reconciliation then asks rarely.
     */
    requiredAction: text('required_action').$type<RequiredAction>(),
    description: text('description'),
    metadata: text('metadata', { mode: 'json' }).$type<Record<string, unknown>>(),
    /**
     * What later calls of the payment keep of the configuration it was created with (ConnectorVersion
     * `keptConfiguration`: e.g. its terminal); null when the version keeps nothing, or for rows from before.
     */
    keptConfiguration: text('kept_configuration', { mode: 'json' }).$type<Record<string, unknown>>(),
    webhookUrl: text('webhook_url'),
    /** When a pending QR payment expires (its method's `qr_ttl_seconds`). */
    expiresAt: integer('expires_at'),
    /** Last time reconciliation asked the processor about this payment. */
    reconciledAt: integer('reconciled_at'),
    /**
     * When the processor reported a chargeback (domain/payment-state.ts `chargeback`): the status stays
     * collected, refunds and cancels are refused.
     */
    chargedBackAt: integer('charged_back_at'),
    /**
     * What the processor reported it kept of the money that moved (domain/settlement.ts): fee and net in
     * minor units of `settlement_currency` (the processor's settlement currency), and when the net is
     * available; all null until reported. `settlement_null_reason` says why they are null when money moved.
     */
    settlementFeeMinor: integer('settlement_fee_minor'),
    settlementNetMinor: integer('settlement_net_minor'),
    settlementCurrency: text('settlement_currency'),
    settlementAvailableOn: integer('settlement_available_on'),
    settlementNullReason: text('settlement_null_reason').$type<SettlementNullReason>(),
    /**
     * When the payment was voided: canceled after it was collected (`approved` → `canceled`). Such a void's
     * refund may still fail at the processor, which makes the payment collected again (domain/reversals.ts
     * `reverseVoid`): reconciliation reads it again within the processor's window. Cleared by that reversal.
     */
    voidedAt: integer('voided_at'),
    /**
     * The processor's id of the refund that carried out that void (`PaymentOutcome.voidRefundReference`), when
     * known; null otherwise (voids from before it was kept). News that a void's refund failed reopens the payment
     * only when it names this refund: a refund of an earlier void, reversed already, says nothing of this one.
     */
    voidRefundReference: text('void_refund_reference'),
    /** Set while a cancellation is at the processor; refunds wait (domain/ledger/cancels.ts). */
    cancelClaimedAt: integer('cancel_claimed_at'),
    /** The idempotency attempt holding that cancellation (`attemptKey` below): its retry resumes it. */
    cancelAttemptKey: text('cancel_attempt_key'),
    /**
     * When the processor accepted a cancel it completes later (`cancellation: 'requested'`, e.g. Mercado Pago's
     * 202 for a Point order at the terminal): the public `cancel_requested_at`. Kept when the cancel completes
     * (`canceled`), cleared when the payment resolves otherwise (the customer paid first). docs/states.md, "Cancel at
     * the terminal".
     */
    cancelRequestedAt: integer('cancel_requested_at'),
    /** While `pending`: the processor's last word was that the payment waits at the terminal (`action.type: at_terminal`). */
    atTerminal: integer('at_terminal', { mode: 'boolean' }).notNull().default(false),
    /**
     * The terminal re-read schedule (docs/terminal-checks.md, jobs/terminal-checks.ts): when the payment was
     * first seen waiting at its terminal, how many reads were made since, and when the next is due (null: none).
     */
    terminalSeenAt: integer('terminal_seen_at'),
    terminalChecks: integer('terminal_checks').notNull().default(0),
    terminalCheckAt: integer('terminal_check_at'),
    /**
     * When the payment's disputes are next read from its processor (docs/dispute-checks.md, jobs/dispute-checks.ts):
     * set when it is collected and while a dispute of it is open; null when no read is due ever again.
     */
    disputeCheckAt: integer('dispute_check_at'),
    /**
     * The idempotency attempt that created the payment: the id of its idempotency object (one per
     * credential, operation and Idempotency-Key) and its request fingerprint. Written with the row, so a
     * retry finds its own payment here even when the object lost its memory between this insert and its
     * own storage write (a deploy, an eviction, a crash): it resumes instead of meeting its own reference.
     */
    attemptKey: text('attempt_key'),
    attemptFingerprint: text('attempt_fingerprint'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('payments_reference_idx').on(t.referenceScope, t.externalReference),
    index('payments_status_idx').on(t.status, t.updatedAt),
    // The QR expiries due (jobs/expire-qr-payments.ts `dueExpiries`): those waiting on a required action or on the
    // processor's news of a withdrawal it accepted are not in it, so however many a shard keeps, the range skips none.
    index('payments_expiry_idx')
      .on(t.status, t.expiresAt)
      .where(sql`${t.requiredAction} is null and ${t.cancelRequestedAt} is null`),
    index('payments_processor_reference_idx').on(t.paymentMethodId, t.processorReference),
    // The terminal re-reads due (jobs/terminal-checks.ts): only payments with a read scheduled are in it.
    index('payments_terminal_check_idx').on(t.terminalCheckAt).where(sql`${t.terminalCheckAt} is not null`),
    // The dispute re-reads due (jobs/dispute-checks.ts `dueReads`): only payments with a read scheduled are in it,
    // and each entry holds what the per-owner ranks need, so the due range is read from the index alone.
    index('payments_dispute_check_idx')
      .on(t.disputeCheckAt, t.environment, t.ownerId, t.id)
      .where(sql`${t.disputeCheckAt} is not null`),
    // GET /v1/payments (services/payments/reads.ts): each filter has an index that starts with the
    // owner and environment, holds the filter's column, and ends in the list's order (created_at, id), so
    // every page and its count is a range of one index, never a scan of the table.
    index('payments_owner_created_idx').on(t.ownerId, t.environment, t.createdAt, t.id),
    index('payments_owner_status_idx').on(t.ownerId, t.environment, t.status, t.createdAt, t.id),
    index('payments_owner_method_idx').on(t.ownerId, t.environment, t.paymentMethodId, t.createdAt, t.id),
    index('payments_owner_reference_idx').on(t.ownerId, t.environment, t.externalReference, t.createdAt, t.id),
  ],
);

export const refunds = sqliteTable(
  'refunds',
  {
    id: text('id').primaryKey(),
    paymentId: text('payment_id')
      .notNull()
      .references(() => payments.id),
    ownerId: text('owner_id').notNull(),
    amountMinor: integer('amount_minor').notNull(),
    currency: text('currency').notNull(),
    status: text('status').$type<RefundStatus>().notNull(),
    reason: text('reason'),
    /** Why a `failed` or `declined` refund failed, when the processor said (domain/reversals.ts); else null. */
    failureReason: text('failure_reason').$type<RefundFailureReason>(),
    processorReference: text('processor_reference'),
    processorIdempotencyKey: text('processor_idempotency_key').notNull(),
    processorAttempts: integer('processor_attempts').notNull(),
    processorStatus: text('processor_status'),
    /** As on payments; a refund's net is negative (the money left the merchant's balance). */
    settlementFeeMinor: integer('settlement_fee_minor'),
    settlementNetMinor: integer('settlement_net_minor'),
    settlementCurrency: text('settlement_currency'),
    settlementAvailableOn: integer('settlement_available_on'),
    settlementNullReason: text('settlement_null_reason').$type<SettlementNullReason>(),
    reconciledAt: integer('reconciled_at'),
    /** As on payments: the attempt that reserved this refund, so its retry resumes it (services/payments/create-refund.ts). */
    attemptKey: text('attempt_key'),
    attemptFingerprint: text('attempt_fingerprint'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [
    // One refund per attempt: even two copies of one idempotency object could not reserve twice.
    uniqueIndex('refunds_attempt_idx').on(t.paymentId, t.attemptKey),
    // A payment's ledger in the order it is listed (GET /v1/payments/{id}/refunds) and read.
    index('refunds_payment_idx').on(t.paymentId, t.createdAt, t.id),
    index('refunds_status_idx').on(t.status, t.updatedAt),
    index('refunds_processor_reference_idx').on(t.processorReference),
  ],
);

export type PaymentRow = typeof payments.$inferSelect;
export type RefundRow = typeof refunds.$inferSelect;

// The rows are the ledger's records (domain/ledger/records.ts): a column the ledger does not know, or a record field
// with no column, fails to compile here.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const paymentRowsAreRecords: Same<PaymentRow, PaymentRecord> = true;
const refundRowsAreRecords: Same<RefundRow, RefundRecord> = true;
void paymentRowsAreRecords;
void refundRowsAreRecords;
