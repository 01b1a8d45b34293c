import { sqliteTable, text, integer, index, uniqueIndex } from 'drizzle-orm/sqlite-core';
import type { DisputeReason, DisputeStatus } from '../../domain/disputes.ts';
import type { Environment } from '../../domain/environment.ts';
import type { DisputeRecord } from '../../domain/ledger/records.ts';
import { payments } from './payments.ts';

/**
 * Disputes of payments (inquiries and chargebacks), as their processor reports them (domain/disputes.ts).
 * Data plane, like payments: every row carries its owner and environment, so every read is scoped without
 * a join. A dispute is written only in its payment's compare-and-set batch (services/disputes/), so its
 * changes and their events are ordered by the payment's `version`.
 */
export const disputes = sqliteTable(
  'disputes',
  {
    id: text('id').primaryKey(),
    paymentId: text('payment_id')
      .notNull()
      .references(() => payments.id),
    ownerId: text('owner_id').notNull(),
    environment: text('environment').$type<Environment>().notNull(),
    /** The processor's id of the dispute (Stripe `du_…`, a Mercado Pago chargeback id, the sandbox's `sbx_dp_…`). */
    processorDisputeId: text('processor_dispute_id').notNull(),
    status: text('status').$type<DisputeStatus>().notNull(),
    amountMinor: integer('amount_minor').notNull(),
    currency: text('currency').notNull(),
    reason: text('reason').$type<DisputeReason>().notNull(),
    evidenceDueBy: integer('evidence_due_by'),
    fundsWithdrawnAt: integer('funds_withdrawn_at'),
    fundsReinstatedAt: integer('funds_reinstated_at'),
    /** The processor's own status word, for support; never in a public response. */
    processorStatus: text('processor_status').notNull(),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [
    // One row per processor dispute of a payment: the same news twice finds the row it wrote.
    uniqueIndex('disputes_processor_idx').on(t.paymentId, t.processorDisputeId),
    // A payment's disputes in list order (GET /v1/payments/{id}/disputes).
    index('disputes_payment_idx').on(t.paymentId, t.createdAt, t.id),
    // GET /v1/disputes, whole or by status: a range of one index each (as payments_owner_*_idx).
    index('disputes_owner_created_idx').on(t.ownerId, t.environment, t.createdAt, t.id),
    index('disputes_owner_status_idx').on(t.ownerId, t.environment, t.status, t.createdAt, t.id),
  ],
);

export type DisputeRow = typeof disputes.$inferSelect;

// The rows are the ledger's records (domain/ledger/records.ts): a drift between the two fails to compile here.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const disputeRowsAreRecords: Same<DisputeRow, DisputeRecord> = true;
void disputeRowsAreRecords;
