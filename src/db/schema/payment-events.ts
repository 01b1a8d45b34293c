import { sqliteTable, text, integer, index } from 'drizzle-orm/sqlite-core';
import type { Environment } from '../../domain/environment.ts';
import { payments } from './payments.ts';

/**
 * The outbox: an event is written in the same D1 batch as the payment change it reports, so neither
 * can exist without the other. `payload` is the exact body delivered (and signed), kept as text.
 */
export const paymentEvents = sqliteTable(
  'payment_events',
  {
    id: text('id').primaryKey(),
    paymentId: text('payment_id')
      .notNull()
      .references(() => payments.id),
    ownerId: text('owner_id').notNull(),
    environment: text('environment').$type<Environment>().notNull(),
    type: text('type').notNull(),
    payload: text('payload').notNull(),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [
    // Lists are newest first by (created_at, id): a payment's events, and the owner's (GET /v1/events),
    // whole or of one type.
    index('payment_events_payment_idx').on(t.paymentId, t.createdAt, t.id),
    index('payment_events_owner_created_idx').on(t.ownerId, t.environment, t.createdAt, t.id),
    index('payment_events_owner_type_idx').on(t.ownerId, t.environment, t.type, t.createdAt, t.id),
  ],
);

export type PaymentEventRow = typeof paymentEvents.$inferSelect;
