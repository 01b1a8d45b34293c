import { sqliteTable, text, integer, index } from 'drizzle-orm/sqlite-core';
import type { Role, Scope } from '../../domain/scopes.ts';

export const users = sqliteTable(
  'users',
  {
    id: text('id').primaryKey(),
    /** Stored lower-cased; unique per deployment. */
    email: text('email').notNull().unique(),
    name: text('name').notNull(),
    role: text('role').$type<Role>().notNull(),
    scopes: text('scopes', { mode: 'json' }).$type<Scope[]>().notNull(),
    /** PHC-format hash with its parameters (see domain/passwords.ts). */
    passwordHash: text('password_hash').notNull(),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [index('users_created_at_idx').on(t.createdAt)],
);

export type UserRow = typeof users.$inferSelect;
