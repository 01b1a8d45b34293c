import { sqliteTable, text, integer, index, primaryKey } from 'drizzle-orm/sqlite-core';
import type { Capability, Channel } from '../../connectors/types.ts';
import type { Environment } from '../../domain/environment.ts';
import { apiKeys } from './api-keys.ts';
import { users } from './users.ts';

/**
 * A merchant's configured processor integration. Its status is derived: deleted when `deleted_at` is
 * set, else active when `enabled`, else inactive. Credentials and configuration live only inside
 * `secrets_ciphertext` (AES-256-GCM, bound to this id and environment); a delete erases it.
 */
export const paymentMethods = sqliteTable(
  'payment_methods',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    environment: text('environment').$type<Environment>().notNull(),
    connectorVersionId: text('connector_version_id').notNull(),
    provider: text('provider').notNull(),
    type: text('type').$type<Channel>().notNull(),
    name: text('name').notNull(),
    enabled: integer('enabled', { mode: 'boolean' }).notNull(),
    capabilities: text('capabilities', { mode: 'json' }).$type<Capability[]>().notNull(),
    displayConfiguration: text('display_configuration', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
    secretsCiphertext: text('secrets_ciphertext'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
    deletedAt: integer('deleted_at'),
  },
  (t) => [index('payment_methods_owner_idx').on(t.userId, t.environment, t.createdAt)],
);

/** Which API keys may use which methods. Enabling a method for a key adds no scope to the key. */
export const apiKeyPaymentMethods = sqliteTable(
  'api_key_payment_methods',
  {
    apiKeyId: text('api_key_id')
      .notNull()
      .references(() => apiKeys.id),
    paymentMethodId: text('payment_method_id')
      .notNull()
      .references(() => paymentMethods.id),
    enabled: integer('enabled', { mode: 'boolean' }).notNull(),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.apiKeyId, t.paymentMethodId] }),
    index('api_key_payment_methods_method_idx').on(t.paymentMethodId),
  ],
);

export type PaymentMethodRow = typeof paymentMethods.$inferSelect;
export type ApiKeyPaymentMethodRow = typeof apiKeyPaymentMethods.$inferSelect;
