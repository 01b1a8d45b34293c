import { and, count, desc, eq, gte, lt, type SQL } from 'drizzle-orm';
import type { BatchItem } from 'drizzle-orm/batch';
import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core';
import type { OwnerScope } from '../domain/caller.ts';
import type { Db } from './client.ts';

/**
 * Lists are newest first by (created_at, id): the order each list's index holds, so a page stops after
 * `limit` rows and its total is a range of the same index (see the indexes in db/schema).
 */

export interface Page {
  limit: number;
  offset: number;
}

/** The SQL a statement runs, as Drizzle builds it (tests explain its query plan). */
interface Explainable {
  toSQL(): { sql: string; params: unknown[] };
}

/** A page of a list and its total, asked in one D1 round trip. */
export interface PageStatements<Row> {
  rows: BatchItem<'sqlite'> & PromiseLike<Row[]> & Explainable;
  total: BatchItem<'sqlite'> & PromiseLike<Array<{ total: number }>> & Explainable;
}

type ListedTable = SQLiteTable & { createdAt: SQLiteColumn; id: SQLiteColumn };

export function newestFirstPage<T extends ListedTable>(
  db: Db,
  table: T,
  where: SQL | undefined,
  page: Page,
): PageStatements<T['$inferSelect']> {
  return {
    rows: db
      .select()
      .from(table as SQLiteTable)
      .where(where)
      .orderBy(desc(table.createdAt), desc(table.id))
      .limit(page.limit)
      .offset(page.offset) as never,
    total: db
      .select({ total: count() })
      .from(table as SQLiteTable)
      .where(where),
  };
}

export async function fetchPage<Row>(db: Db, statements: PageStatements<Row>): Promise<{ rows: Row[]; total: number }> {
  const [rows, counted] = (await db.batch([statements.rows, statements.total])) as [Row[], Array<{ total: number }>];
  return { rows, total: counted[0]?.total ?? 0 };
}

/** `created_gte` / `created_lt` of a filtered list, in the stored format (epoch milliseconds). */
export interface CreatedRange {
  /** created_at >= createdFrom */
  createdFrom?: number;
  /** created_at < createdBefore */
  createdBefore?: number;
}

export const inCreatedRange = (column: SQLiteColumn, range: CreatedRange) => [
  range.createdFrom !== undefined ? gte(column, range.createdFrom) : undefined,
  range.createdBefore !== undefined ? lt(column, range.createdBefore) : undefined,
];

type OwnedListTable = ListedTable & { ownerId: SQLiteColumn; environment: SQLiteColumn };

/**
 * The filtered lists of an owner (payments, events): its rows of `table` in its environment, each filter
 * given as `[column, value]` applied when the value is set, within the created range, newest first. Every
 * combination is served by an index that starts with the owner and environment (db/schema).
 */
export function ownedListStatements<T extends OwnedListTable>(
  db: Db,
  table: T,
  scope: OwnerScope,
  filters: readonly (readonly [SQLiteColumn, string | undefined])[],
  range: CreatedRange,
  page: Page,
): PageStatements<T['$inferSelect']> {
  const where = and(
    eq(table.ownerId, scope.ownerId),
    eq(table.environment, scope.environment),
    ...filters.map(([column, value]) => (value === undefined ? undefined : eq(column, value))),
    ...inCreatedRange(table.createdAt, range),
  );
  return newestFirstPage(db, table, where, page);
}
