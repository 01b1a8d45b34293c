import { sqliteTable, text, integer, index, primaryKey } from 'drizzle-orm/sqlite-core';
import { paymentEvents } from './payment-events.ts';

export type DeliveryStatus = 'pending' | 'succeeded' | 'dead';

/**
 * One delivery per event and destination: `payment_url` (the payment's `webhook_url`) or an endpoint id
 * (webhook_endpoints). Each has its own attempts, backoff and dead letter; retried until 2xx or three
 * days pass. `url` is where the last attempt went (an endpoint's URL may change between attempts).
 */
export const webhookDeliveries = sqliteTable(
  'webhook_deliveries',
  {
    eventId: text('event_id')
      .notNull()
      .references(() => paymentEvents.id),
    destination: text('destination').notNull().default('payment_url'),
    paymentId: text('payment_id').notNull(),
    ownerId: text('owner_id').notNull(),
    url: text('url').notNull(),
    status: text('status').$type<DeliveryStatus>().notNull(),
    attempts: integer('attempts').notNull(),
    nextAttemptAt: integer('next_attempt_at'),
    /**
     * Until when an attempt holds the delivery (epoch ms): the consumer's claim, taken before it sends and released
     * when it records the attempt, so that neither a duplicate message nor the relay (jobs/relay-webhooks.ts) starts
     * another meanwhile. Null while no attempt runs.
     */
    leasedUntil: integer('leased_until'),
    lastAttemptAt: integer('last_attempt_at'),
    lastStatusCode: integer('last_status_code'),
    lastError: text('last_error'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.eventId, t.destination] }),
    index('webhook_deliveries_due_idx').on(t.status, t.nextAttemptAt),
    // An endpoint disabled or deleted: its pending deliveries are closed at once.
    index('webhook_deliveries_destination_idx').on(t.destination, t.status),
  ],
);

export const webhookDeliveryAttempts = sqliteTable(
  'webhook_delivery_attempts',
  {
    id: text('id').primaryKey(),
    eventId: text('event_id')
      .notNull()
      .references(() => paymentEvents.id),
    destination: text('destination').notNull().default('payment_url'),
    attemptNumber: integer('attempt_number').notNull(),
    /** The receiver's HTTP status; null when no answer came (timeout, network error, refused URL). */
    statusCode: integer('status_code'),
    error: text('error'),
    latencyMs: integer('latency_ms').notNull(),
    attemptedAt: integer('attempted_at').notNull(),
  },
  (t) => [index('webhook_delivery_attempts_event_idx').on(t.eventId, t.destination, t.attemptNumber)],
);

export type WebhookDeliveryRow = typeof webhookDeliveries.$inferSelect;
