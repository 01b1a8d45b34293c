import { type Column, getTableColumns, sql, type SQL } from 'drizzle-orm';
import type { SQLiteTable } from 'drizzle-orm/sqlite-core';
import type { Db } from './client.ts';

/** A value as Drizzle's own insert binds it: null for an absent value, else the column's encoding. */
const driverValue = (column: Column, value: unknown) =>
  value === undefined || value === null ? null : column.mapToDriverValue(value);

/** A row's value as SQL: `null`, or the value encoded by its column (`driverValue`). */
function sqlValue(column: Column, value: unknown): SQL {
  const encoded = driverValue(column, value);
  return encoded === null ? sql`null` : sql`${encoded}`;
}

/**
 * `INSERT ... SELECT <row> WHERE <condition>`: a row written only if the condition holds inside the batch.
 * Values are laid out from the table's own column list (encoded as Drizzle would), so adding a column
 * cannot shift them.
 */
export function insertRowIf<T extends SQLiteTable>(db: Db, table: T, row: T['$inferInsert'], condition: SQL) {
  const values = Object.entries(getTableColumns(table)).map(([key, column]) =>
    sqlValue(column, (row as Record<string, unknown>)[key]),
  );
  return db.insert(table).select(sql`select ${sql.join(values, sql`, `)} where ${condition}`);
}

/**
 * `INSERT ... SELECT <row, some columns taken from the source> FROM <source> WHERE <condition>
 * RETURNING <returning>`: one row per source row that matches, inside the batch. `from` names the source
 * columns by `columnsFrom` (key: the target column, value: an SQL expression over the source).
 */
export function insertRowsFrom<T extends SQLiteTable>(
  db: Db,
  table: T,
  row: Partial<T['$inferInsert']>,
  columnsFrom: Partial<Record<keyof T['$inferInsert'], SQL>>,
  from: SQL,
  condition: SQL,
) {
  const values = Object.entries(getTableColumns(table)).map(([key, column]) => {
    const source = (columnsFrom as Record<string, SQL | undefined>)[key];
    return source ?? sqlValue(column, (row as Record<string, unknown>)[key]);
  });
  return db.insert(table).select(sql`select ${sql.join(values, sql`, `)} from ${from} where ${condition}`);
}
