import { sqliteTable, text, integer, index } from 'drizzle-orm/sqlite-core';
import { paymentEvents } from './payment-events.ts';

export type DeliveryStatus = 'pending' | 'succeeded' | 'dead';

/** One delivery per event to its payment's `webhook_url`; retried until 2xx or three days pass. */
export const webhookDeliveries = sqliteTable('webhook_deliveries', {
  eventId: text('event_id').primaryKey().references(() => paymentEvents.id),
  paymentId: text('payment_id').notNull(),
  ownerId: text('owner_id').notNull(),
  url: text('url').notNull(),
  status: text('status').$type<DeliveryStatus>().notNull(),
  attempts: integer('attempts').notNull(),
  nextAttemptAt: integer('next_attempt_at'),
  lastAttemptAt: integer('last_attempt_at'),
  lastStatusCode: integer('last_status_code'),
  lastError: text('last_error'),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
}, (t) => [index('webhook_deliveries_due_idx').on(t.status, t.nextAttemptAt)]);

export const webhookDeliveryAttempts = sqliteTable('webhook_delivery_attempts', {
  id: text('id').primaryKey(),
  eventId: text('event_id').notNull().references(() => paymentEvents.id),
  attemptNumber: integer('attempt_number').notNull(),
  /** The receiver's HTTP status; null when no answer came (timeout, network error, refused URL). */
  statusCode: integer('status_code'),
  error: text('error'),
  latencyMs: integer('latency_ms').notNull(),
  attemptedAt: integer('attempted_at').notNull(),
}, (t) => [index('webhook_delivery_attempts_event_idx').on(t.eventId, t.attemptNumber)]);
