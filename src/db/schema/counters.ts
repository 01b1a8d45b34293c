import { sqliteTable, text, integer, primaryKey } from 'drizzle-orm/sqlite-core';
import type { DisputeStatus } from '../../domain/disputes.ts';
import type { Environment } from '../../domain/environment.ts';
import type { CounterSpan } from '../../domain/ledger/counts.ts';
import type { PaymentStatus } from '../../domain/payment-state.ts';

/**
 * Per-owner counters, kept by the ledger's changes in the same batch as the rows they count
 * (domain/ledger/counts.ts, services/payments/store.ts): a list's `total` and the payments report are read from them,
 * never by counting the owner's history. Each count is kept in spans: `all` (the whole history, `bucket` 0), and
 * `days512`, `days64`, `days8`, `day`, `hour` and `quarter` (`bucket` the first millisecond of the UTC span of that
 * length holding the row's `created_at`): a range is a few buckets of each but for its edges (domain/buckets.ts).
 */
export const paymentCounters = sqliteTable(
  'payment_counters',
  {
    ownerId: text('owner_id').notNull(),
    environment: text('environment').$type<Environment>().notNull(),
    span: text('span').$type<CounterSpan>().notNull(),
    bucket: integer('bucket').notNull(),
    status: text('status').$type<PaymentStatus>().notNull(),
    paymentMethodId: text('payment_method_id').notNull(),
    currency: text('currency').notNull(),
    count: integer('count').notNull(),
    /** The payments' amounts, in minor units of `currency`. */
    amountMinor: integer('amount_minor').notNull(),
  },
  (t) => [
    primaryKey({
      columns: [t.ownerId, t.environment, t.span, t.bucket, t.status, t.paymentMethodId, t.currency],
    }),
  ],
);

/** The owner's events (GET /v1/events), by type. */
export const eventCounters = sqliteTable(
  'event_counters',
  {
    ownerId: text('owner_id').notNull(),
    environment: text('environment').$type<Environment>().notNull(),
    span: text('span').$type<CounterSpan>().notNull(),
    bucket: integer('bucket').notNull(),
    type: text('type').notNull(),
    count: integer('count').notNull(),
  },
  (t) => [primaryKey({ columns: [t.ownerId, t.environment, t.span, t.bucket, t.type] })],
);

/** The owner's disputes (GET /v1/disputes), by status, over the whole history. */
export const disputeCounters = sqliteTable(
  'dispute_counters',
  {
    ownerId: text('owner_id').notNull(),
    environment: text('environment').$type<Environment>().notNull(),
    status: text('status').$type<DisputeStatus>().notNull(),
    count: integer('count').notNull(),
  },
  (t) => [primaryKey({ columns: [t.ownerId, t.environment, t.status] })],
);
