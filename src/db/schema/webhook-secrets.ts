import { sqliteTable, text, integer, primaryKey } from 'drizzle-orm/sqlite-core';
import type { Environment } from '../../domain/environment.ts';

/** Signing secrets per owner and environment, encrypted like processor credentials. */
export const webhookSecrets = sqliteTable(
  'webhook_secrets',
  {
    ownerId: text('owner_id').notNull(),
    environment: text('environment').$type<Environment>().notNull(),
    currentCiphertext: text('current_ciphertext').notNull(),
    previousCiphertext: text('previous_ciphertext'),
    /** Until then the previous secret signs too (24 hours after a rotation). */
    previousExpiresAt: integer('previous_expires_at'),
    createdAt: integer('created_at').notNull(),
    rotatedAt: integer('rotated_at'),
  },
  (t) => [primaryKey({ columns: [t.ownerId, t.environment] })],
);
