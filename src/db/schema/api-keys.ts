import { sqliteTable, text, integer, index } from 'drizzle-orm/sqlite-core';
import type { Environment } from '../../domain/environment.ts';
import type { Scope } from '../../domain/scopes.ts';
import { users } from './users.ts';

export const apiKeys = sqliteTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    name: text('name').notNull(),
    scopes: text('scopes', { mode: 'json' }).$type<Scope[]>().notNull(),
    environment: text('environment').$type<Environment>().notNull(),
    status: text('status').$type<'active' | 'revoked'>().notNull(),
    /** HMAC-SHA256(API_KEY_PEPPER, secret), hex; the lookup key. The secret itself is never stored. */
    secretHash: text('secret_hash').notNull().unique(),
    /** First characters of the secret (`sk_test_abcd`), shown so owners can tell keys apart. */
    prefix: text('prefix').notNull(),
    createdAt: integer('created_at').notNull(),
    lastUsedAt: integer('last_used_at'),
    revokedAt: integer('revoked_at'),
  },
  (t) => [index('api_keys_user_idx').on(t.userId, t.createdAt)],
);

export type ApiKeyRow = typeof apiKeys.$inferSelect;
