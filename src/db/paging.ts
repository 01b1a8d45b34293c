import { and, asc, count, desc, eq, gte, lt, sql, type SQL } from 'drizzle-orm';
import type { BatchItem } from 'drizzle-orm/batch';
import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core';
import type { OwnerScope } from '../domain/caller.ts';
import { invalidRequest } from '../lib/errors.ts';
import type { Db } from './client.ts';

/**
 * Lists are newest first by (created_at, id): the order each list's index holds, so a page stops after
 * `limit` rows and its total is a range of the same index (see the indexes in db/schema).
 *
 * A page is placed by an offset (the API bounds it: lib/openapi.ts `MAX_OFFSET`) or by a cursor, as Stripe's lists are:
 * `startingAfter` (the page after that item) or `endingBefore` (the page just before it). A cursor page seeks
 * the list's index to the cursor's (created_at, id), read from the item itself within the list's scope, so its
 * cost is the page's rows whatever the depth. `limit + 1` rows are read to tell whether more lie beyond.
 *
 * A list's `total` is a `TotalQuery`: `COUNT(*)` of its rows where they are few whatever the owner's history (a
 * payment's refunds, an owner's keys), its counters where they are not (services/counters/totals.ts).
 */

export interface Page {
  limit: number;
  /** Items skipped before the page: 0 with a cursor. */
  offset: number;
  /** The id of the item this page comes after, in the list's order. */
  startingAfter?: string;
  /** The id of the item this page comes just before, in the list's order. */
  endingBefore?: string;
}

/** A page as a list answers it: the rows in the list's order, and whether more lie beyond in the walk's direction. */
export interface ListPage<Row> {
  rows: Row[];
  total: number;
  /** More items after the last row (offset, `startingAfter`) or before the first (`endingBefore`). */
  hasMore: boolean;
}

/** The SQL a statement runs, as Drizzle builds it (tests explain its query plan). */
interface Explainable {
  toSQL(): { sql: string; params: unknown[] };
}

/** The statements of a list's exact `total`, in its page's batch, and the total from their results, in order. */
export interface TotalQuery {
  statements: Array<BatchItem<'sqlite'> & Explainable>;
  total(results: readonly unknown[]): number;
}

/** A page of a list and its total, asked in one D1 round trip (`pageBatch`, then `readPage`). */
export interface PageStatements<Row> {
  page: Page;
  /** With a cursor: the cursor's item, looked up within the list's scope (unknown and foreign ids alike find none). */
  cursor?: BatchItem<'sqlite'> & PromiseLike<unknown[]> & Explainable;
  /** Up to `limit + 1` rows: newest first, or oldest first from an `endingBefore` cursor. */
  rows: BatchItem<'sqlite'> & PromiseLike<Row[]> & Explainable;
  total: TotalQuery;
}

/** `COUNT(*)` of a list's rows: for the lists whose rows stay few whatever the owner's history. */
export function countedTotal(db: Db, table: SQLiteTable, where: SQL | undefined): TotalQuery {
  return {
    statements: [db.select({ n: count() }).from(table).where(where)],
    total: (results) => Number((results[0] as Array<{ n: number }>)[0]?.n ?? 0),
  };
}

type ListedTable = SQLiteTable & { createdAt: SQLiteColumn; id: SQLiteColumn };

/**
 * A page of `table`'s rows within `scope` (what the list holds: the owner's, the payment's) and `filters` (what
 * the query narrows it to). A cursor must be an item of the scope, filters aside, so a walk survives a change of
 * filter; its sort key is read by a subquery of the page itself, so the page seeks the index from it.
 */
export function newestFirstPage<T extends ListedTable>(
  db: Db,
  table: T,
  scope: SQL | undefined,
  filters: SQL | undefined,
  page: Page,
  total: TotalQuery = countedTotal(db, table, and(scope, filters)),
): PageStatements<T['$inferSelect']> {
  const cursorId = page.startingAfter ?? page.endingBefore;
  const backwards = page.startingAfter === undefined && page.endingBefore !== undefined;
  // Within the subquery the table's name is the subquery's own table, so `scope` there is the cursor's scope.
  const cursor =
    cursorId === undefined
      ? undefined
      : db
          .select({ createdAt: table.createdAt, id: table.id })
          .from(table as SQLiteTable)
          .where(and(eq(table.id, cursorId), scope));
  const key = sql`(${table.createdAt}, ${table.id})`;
  const fromCursor = cursor === undefined ? undefined : backwards ? sql`${key} > ${cursor}` : sql`${key} < ${cursor}`;
  const order = backwards ? asc : desc;
  return {
    page,
    cursor,
    rows: db
      .select()
      .from(table as SQLiteTable)
      .where(and(scope, filters, fromCursor))
      .orderBy(order(table.createdAt), order(table.id))
      .limit(page.limit + 1)
      .offset(page.offset) as never,
    total,
  };
}

/** The statements of a page in the order `readPage` takes their results. */
export const pageBatch = (statements: PageStatements<unknown>): BatchItem<'sqlite'>[] => [
  ...(statements.cursor ? [statements.cursor] : []),
  statements.rows,
  ...statements.total.statements,
];

/**
 * The page from the results of `pageBatch`'s statements. A cursor that is not an item of the list (another
 * owner's, another payment's, a random id) is refused as `invalid_request` naming its parameter: all alike, so
 * an answer never tells whose an id is.
 */
export function readPage<Row>(statements: PageStatements<Row>, results: readonly unknown[]): ListPage<Row> {
  const { page } = statements;
  const [found, rows, ...counted] = (statements.cursor ? results : [undefined, ...results]) as [
    unknown[] | undefined,
    Row[],
    ...unknown[],
  ];
  if (found !== undefined && found.length === 0) throw unknownCursor(page);
  const hasMore = rows.length > page.limit;
  const kept = rows.slice(0, page.limit);
  return {
    rows: page.startingAfter === undefined && page.endingBefore !== undefined ? kept.reverse() : kept,
    total: statements.total.total(counted),
    hasMore,
  };
}

export async function fetchPage<Row>(db: Db, statements: PageStatements<Row>): Promise<ListPage<Row>> {
  const batch = pageBatch(statements) as [BatchItem<'sqlite'>, ...BatchItem<'sqlite'>[]];
  return readPage(statements, await db.batch(batch));
}

function unknownCursor(page: Page) {
  const parameter = page.startingAfter !== undefined ? 'starting_after' : 'ending_before';
  return invalidRequest(`${parameter} is not the id of an item of this list.`, [
    { field: `query.${parameter}`, issue: 'No such item in this list' },
  ]);
}

/**
 * A page of a list held in memory (already in the list's order, ids unique), with the same meaning of offset
 * and cursors as the lists the database answers.
 */
export function pageOfItems<Item extends { id: string }>(items: readonly Item[], page: Page): ListPage<Item> {
  const cursorId = page.startingAfter ?? page.endingBefore;
  const at = cursorId === undefined ? -1 : items.findIndex((item) => item.id === cursorId);
  if (cursorId !== undefined && at < 0) throw unknownCursor(page);
  if (page.startingAfter === undefined && page.endingBefore !== undefined) {
    const start = Math.max(0, at - page.limit);
    return { rows: items.slice(start, at), total: items.length, hasMore: start > 0 };
  }
  const start = cursorId === undefined ? page.offset : at + 1;
  return {
    rows: items.slice(start, start + page.limit),
    total: items.length,
    hasMore: start + page.limit < items.length,
  };
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

/** The rows of an owner in its environment: the scope of its lists, and of their cursors. */
export const ownedBy = (table: OwnedListTable, scope: OwnerScope) =>
  and(eq(table.ownerId, scope.ownerId), eq(table.environment, scope.environment));

/**
 * The filtered lists of an owner (payments, events): its rows of `table` in its environment, each filter
 * given as `[column, value]` applied when the value is set, within the created range, newest first. Every
 * combination is served by an index that starts with the owner and environment (db/schema). Their rows grow
 * with the owner's history, so `total` is read from its counters (services/counters/totals.ts).
 */
export function ownedListStatements<T extends OwnedListTable>(
  db: Db,
  table: T,
  scope: OwnerScope,
  filters: readonly (readonly [SQLiteColumn, string | undefined])[],
  range: CreatedRange,
  page: Page,
  total: TotalQuery,
): PageStatements<T['$inferSelect']> {
  const filtered = and(
    ...filters.map(([column, value]) => (value === undefined ? undefined : eq(column, value))),
    ...inCreatedRange(table.createdAt, range),
  );
  return newestFirstPage(db, table, ownedBy(table, scope), filtered, page, total);
}
