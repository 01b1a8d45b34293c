import { getTableColumns, type SQL } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/d1';
import type { SQLiteTable } from 'drizzle-orm/sqlite-core';

/** The raw binding a request reads through: the database, or this request's session of it (read replication). */
export type D1Handle = D1Database | D1DatabaseSession;

/**
 * The hot reads (a payment by id, a payment with its refunds) as SQL built once per isolate, bound per
 * request, and rows decoded as Drizzle's select decodes them. Drizzle building the same query on every
 * request was the largest share of a read's Worker CPU after the runtime's own (bench/RESULTS.md, profile).
 */
export interface PreparedSelect<Row> {
  sql: string;
  /** The request's statement, with its parameters in the order of the `where` the SQL was built from. */
  bind(d1: D1Handle, ...params: unknown[]): D1PreparedStatement;
  /** A raw D1 row (keyed by column name) as the table's row type. */
  decode(raw: Record<string, unknown>): Row;
}

// Only for building SQL text: it never runs a query, so it needs no real binding.
const builder = drizzle({} as D1Database);

/** `select <every column> from <table> where <where> [order by ...]`, built once. */
export function preparedSelect<T extends SQLiteTable>(
  table: T,
  where: SQL,
  orderBy: SQL[] = [],
): PreparedSelect<T['$inferSelect']> {
  const query = builder
    .select()
    .from(table as SQLiteTable)
    .where(where)
    .orderBy(...orderBy)
    .toSQL();
  const columns = Object.entries(getTableColumns(table)).map(([key, column]) => [key, column.name, column] as const);
  return {
    sql: query.sql,
    bind: (d1, ...params) => d1.prepare(query.sql).bind(...params),
    decode(raw) {
      const row: Record<string, unknown> = {};
      for (const [key, name, column] of columns) {
        const value = raw[name];
        row[key] = value === null || value === undefined ? null : column.mapFromDriverValue(value);
      }
      return row as T['$inferSelect'];
    },
  };
}
