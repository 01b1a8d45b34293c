import { sqliteTable, text, integer, index, primaryKey } from 'drizzle-orm/sqlite-core';
import type { Environment } from '../../env.ts';
import { payments } from './payments.ts';

/**
 * The outbox: an event is written in the same D1 batch as the payment change it reports, so neither
 * can exist without the other. `payload` is the exact body delivered (and signed), kept as text.
 */
export const paymentEvents = sqliteTable('payment_events', {
  id: text('id').primaryKey(),
  paymentId: text('payment_id').notNull().references(() => payments.id),
  ownerId: text('owner_id').notNull(),
  environment: text('environment').$type<Environment>().notNull(),
  type: text('type').notNull(),
  payload: text('payload').notNull(),
  createdAt: integer('created_at').notNull(),
}, (t) => [
  // Lists are newest first by (created_at, id): a payment's events, and the owner's (GET /v1/events),
  // whole or of one type.
  index('payment_events_payment_idx').on(t.paymentId, t.createdAt, t.id),
  index('payment_events_owner_created_idx').on(t.ownerId, t.environment, t.createdAt, t.id),
  index('payment_events_owner_type_idx').on(t.ownerId, t.environment, t.type, t.createdAt, t.id),
]);

export type DeliveryStatus = 'pending' | 'succeeded' | 'dead';

/**
 * One delivery per event and destination: `payment_url` (the payment's `webhook_url`) or an endpoint id
 * (webhook_endpoints). Each has its own attempts, backoff and dead letter; retried until 2xx or three
 * days pass. `url` is where the last attempt went (an endpoint's URL may change between attempts).
 */
export const webhookDeliveries = sqliteTable('webhook_deliveries', {
  eventId: text('event_id').notNull().references(() => paymentEvents.id),
  destination: text('destination').notNull().default('payment_url'),
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
}, (t) => [
  primaryKey({ columns: [t.eventId, t.destination] }),
  index('webhook_deliveries_due_idx').on(t.status, t.nextAttemptAt),
  // An endpoint disabled or deleted: its pending deliveries are closed at once.
  index('webhook_deliveries_destination_idx').on(t.destination, t.status),
]);

export const webhookDeliveryAttempts = sqliteTable('webhook_delivery_attempts', {
  id: text('id').primaryKey(),
  eventId: text('event_id').notNull().references(() => paymentEvents.id),
  destination: text('destination').notNull().default('payment_url'),
  attemptNumber: integer('attempt_number').notNull(),
  /** The receiver's HTTP status; null when no answer came (timeout, network error, refused URL). */
  statusCode: integer('status_code'),
  error: text('error'),
  latencyMs: integer('latency_ms').notNull(),
  attemptedAt: integer('attempted_at').notNull(),
}, (t) => [index('webhook_delivery_attempts_event_idx').on(t.eventId, t.destination, t.attemptNumber)]);

/** Signing secrets per owner and environment, encrypted like processor credentials. */
export const webhookSecrets = sqliteTable('webhook_secrets', {
  ownerId: text('owner_id').notNull(),
  environment: text('environment').$type<Environment>().notNull(),
  currentCiphertext: text('current_ciphertext').notNull(),
  previousCiphertext: text('previous_ciphertext'),
  /** Until then the previous secret signs too (24 hours after a rotation). */
  previousExpiresAt: integer('previous_expires_at'),
  createdAt: integer('created_at').notNull(),
  rotatedAt: integer('rotated_at'),
}, (t) => [primaryKey({ columns: [t.ownerId, t.environment] })]);

/** Processor notifications already applied, by the processor's event id: duplicates change nothing. */
export const processorNotifications = sqliteTable('processor_notifications', {
  paymentMethodId: text('payment_method_id').notNull(),
  eventId: text('event_id').notNull(),
  resource: text('resource').notNull(),
  processorReference: text('processor_reference').notNull(),
  outcome: text('outcome').notNull(),
  receivedAt: integer('received_at').notNull(),
}, (t) => [primaryKey({ columns: [t.paymentMethodId, t.eventId] })]);

export type PaymentEventRow = typeof paymentEvents.$inferSelect;
export type WebhookDeliveryRow = typeof webhookDeliveries.$inferSelect;
export type WebhookDeliveryAttemptRow = typeof webhookDeliveryAttempts.$inferSelect;
