import { getTableColumns, sql, type SQL } from 'drizzle-orm';
import type { SQLiteTable } from 'drizzle-orm/sqlite-core';
import type { Db } from './client.ts';

/**
 * `INSERT ... SELECT <row> WHERE <condition>`: a row written only if the condition holds inside the batch.
 * Values are laid out from the table's own column list (encoded as Drizzle would), so adding a column
 * cannot shift them.
 */
export function insertRowIf<T extends SQLiteTable>(db: Db, table: T, row: T['$inferInsert'], condition: SQL) {
  const values = Object.entries(getTableColumns(table)).map(([key, column]) => {
    const value = (row as Record<string, unknown>)[key];
    return value === undefined || value === null ? sql`null` : sql`${column.mapToDriverValue(value)}`;
  });
  return db.insert(table).select(sql`select ${sql.join(values, sql`, `)} where ${condition}`);
}
