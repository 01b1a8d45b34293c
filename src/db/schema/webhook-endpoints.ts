import { sqliteTable, text, integer, index } from 'drizzle-orm/sqlite-core';
import type { Environment } from '../../domain/environment.ts';

/** Why an endpoint stopped receiving events: its owner said so, or three days of failed attempts. */
export type EndpointDisabledReason = 'requested' | 'failing';

/**
 * Account webhook endpoints: each receives, besides any payment's own `webhook_url`, every
 * event of its owner and environment whose type it subscribes to. Its signing secret lives only in the
 * ciphertexts (AES-256-GCM bound to the endpoint id and environment), shown once when made or rotated.
 */
export const webhookEndpoints = sqliteTable(
  'webhook_endpoints',
  {
    id: text('id').primaryKey(),
    /** Control plane `users.id` (no foreign key: another database). */
    ownerId: text('owner_id').notNull(),
    environment: text('environment').$type<Environment>().notNull(),
    url: text('url').notNull(),
    /** Event types, or `["*"]` (domain/webhook-endpoints.ts). */
    enabledEvents: text('enabled_events', { mode: 'json' }).$type<string[]>().notNull(),
    description: text('description'),
    disabledAt: integer('disabled_at'),
    disabledReason: text('disabled_reason').$type<EndpointDisabledReason>(),
    /** Start of the current run of failed attempts; null once one succeeds (the auto-disable clock). */
    failingSince: integer('failing_since'),
    secretCiphertext: text('secret_ciphertext').notNull(),
    previousSecretCiphertext: text('previous_secret_ciphertext'),
    /** Until then the previous secret signs too (24 hours after a rotation). */
    previousSecretExpiresAt: integer('previous_secret_expires_at'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [index('webhook_endpoints_owner_idx').on(t.ownerId, t.environment, t.createdAt, t.id)],
);

export type WebhookEndpointRow = typeof webhookEndpoints.$inferSelect;
