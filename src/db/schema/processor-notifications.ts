import { sqliteTable, text, integer, primaryKey } from 'drizzle-orm/sqlite-core';

/** Processor notifications already applied, by the processor's event id: duplicates change nothing. */
export const processorNotifications = sqliteTable(
  'processor_notifications',
  {
    paymentMethodId: text('payment_method_id').notNull(),
    eventId: text('event_id').notNull(),
    resource: text('resource').notNull(),
    processorReference: text('processor_reference').notNull(),
    outcome: text('outcome').notNull(),
    receivedAt: integer('received_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.paymentMethodId, t.eventId] })],
);
