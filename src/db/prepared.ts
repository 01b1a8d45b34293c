import { type Column, getTableColumns, is, Param, Placeholder, type SQL, sql } from 'drizzle-orm';
import type { BatchItem } from 'drizzle-orm/batch';
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

/** Drizzle's query builder for statements built once per isolate: it only builds SQL text, never runs a query. */
export const statementBuilder = drizzle({} as D1Database);

/** `select <every column> from <table> where <where> [order by ...]`, built once. */
export function preparedSelect<T extends SQLiteTable>(
  table: T,
  where: SQL,
  orderBy: SQL[] = [],
): PreparedSelect<T['$inferSelect']> {
  const query = statementBuilder
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

/**
 * A statement of a batch: a Drizzle query, or a write built once per isolate and bound per request (below).
 * `runBatch` runs a mix of both as one D1 batch (one transaction).
 */
export type BatchStatement = BatchItem<'sqlite'> | D1PreparedStatement;

export function runBatch(d1: D1Handle, statements: readonly BatchStatement[]): Promise<D1Result[]> {
  return d1.batch(statements.map((s) => (isDrizzleQuery(s) ? drizzleToD1(d1, s) : s)));
}

/** What every Drizzle query answers (its types do not all say so), and a D1 statement lacks. */
const answersToSQL = (s: object): s is { toSQL(): { sql: string; params: unknown[] } } => 'toSQL' in s;

const isDrizzleQuery = (s: BatchStatement): s is BatchItem<'sqlite'> => answersToSQL(s);

function drizzleToD1(d1: D1Handle, query: BatchItem<'sqlite'>): D1PreparedStatement {
  if (!answersToSQL(query)) throw new Error('A Drizzle query without toSQL.');
  const { sql: text, params } = query.toSQL();
  return d1.prepare(text).bind(...params);
}

type Columns = [key: string, column: Column][];

/** A value as Drizzle's own insert binds it: null for an absent value, else the column's encoding. */
export const driverValue = (column: Column, value: unknown) =>
  value === undefined || value === null ? null : column.mapToDriverValue(value);

/**
 * The parameters of a statement built by `withPlaceholders`, in order: a name `<prefix><column key>` takes that
 * field of `fields` encoded by its column; any other name takes `others[name]` as it is.
 */
function parameters(
  names: readonly string[],
  prefix: string,
  columns: ReadonlyMap<string, Column>,
  fields: Record<string, unknown>,
  others: Record<string, unknown> = {},
): unknown[] {
  return names.map((name) => {
    if (!name.startsWith(prefix)) return others[name];
    const key = name.slice(prefix.length);
    return driverValue(columns.get(key)!, fields[key]);
  });
}

/** SQL built with named placeholders, and for each parameter position the placeholder's name. */
function withPlaceholders(query: { sql: string; params: unknown[] }): { sql: string; names: string[] } {
  const names = query.params.map((p) => {
    // A `set` value comes wrapped in a Param with its column's encoder, which `bind` below applies itself.
    const value = is(p, Param) ? p.value : p;
    if (!is(value, Placeholder)) throw new Error('A prepared write takes every value as a placeholder.');
    return value.name;
  });
  return { sql: query.sql, names };
}

/**
 * Any write Drizzle builds whose every value is a named placeholder, built once per isolate; `bind` takes the
 * values by name, already as the database stores them.
 */
export function preparedWrite(query: { toSQL(): { sql: string; params: unknown[] } }) {
  const { sql: text, names } = withPlaceholders(query.toSQL());
  return {
    sql: text,
    bind: (d1: D1Handle, values: Record<string, unknown>): D1PreparedStatement =>
      d1.prepare(text).bind(...names.map((name) => values[name])),
  };
}

/** `insert into <table> (<every column>) values (?, ...)`, built once per isolate, bound per request. */
export function preparedInsert<T extends SQLiteTable>(table: T) {
  const columns: Columns = Object.entries(getTableColumns(table));
  const placeholders = Object.fromEntries(columns.map(([key]) => [key, sql.placeholder(key)]));
  const { sql: text, names } = withPlaceholders(
    statementBuilder
      .insert(table as SQLiteTable)
      .values(placeholders as T['$inferInsert'])
      .toSQL(),
  );
  const byKey = new Map(columns);
  return {
    sql: text,
    bind: (d1: D1Handle, values: T['$inferInsert']): D1PreparedStatement =>
      d1.prepare(text).bind(...parameters(names, '', byKey, values as Record<string, unknown>)),
  };
}

/**
 * `insert into <table> (<every column>) select ?, ... where <condition>`: a row written only if the condition
 * holds inside the batch (`insertRowIf` in conditional-insert.ts, built once per isolate instead of per request).
 * The condition's values are named placeholders (`sql.placeholder`), bound from `conditionValues`.
 */
export function preparedInsertIf<T extends SQLiteTable>(table: T, condition: SQL) {
  const columns: Columns = Object.entries(getTableColumns(table));
  const row = sql.join(
    columns.map(([key]) => sql.placeholder(`row.${key}`)),
    sql`, `,
  );
  const { sql: text, names } = withPlaceholders(
    statementBuilder
      .insert(table as SQLiteTable)
      .select(sql`select ${row} where ${condition}`)
      .toSQL(),
  );
  const byKey = new Map(columns);
  return {
    sql: text,
    bind: (d1: D1Handle, values: T['$inferInsert'], conditionValues: Record<string, unknown>): D1PreparedStatement =>
      d1.prepare(text).bind(...parameters(names, 'row.', byKey, values as Record<string, unknown>, conditionValues)),
  };
}

/**
 * `update <table> set <the given columns> where <where>`, built once per isolate for each set of columns a
 * request changes (a payment's changes come in a few dozen shapes), bound per request. `where` takes named
 * placeholders, bound from `whereValues`; undefined fields are left out, as Drizzle's `set` leaves them.
 */
export function preparedUpdates<T extends SQLiteTable>(table: T, where: SQL) {
  const columns = new Map<string, Column>(Object.entries(getTableColumns(table)));
  const shapes = new Map<string, { sql: string; names: string[] }>();
  return (d1: D1Handle, change: Record<string, unknown>, whereValues: Record<string, unknown>) => {
    const keys = Object.keys(change).filter((key) => change[key] !== undefined);
    const shapeKey = keys.join(',');
    let shape = shapes.get(shapeKey);
    if (!shape) {
      for (const key of keys) if (!columns.has(key)) throw new Error(`No column ${key}.`);
      const set = Object.fromEntries(keys.map((key) => [key, sql.placeholder(`set.${key}`)]));
      shape = withPlaceholders(
        statementBuilder
          .update(table as SQLiteTable)
          .set(set)
          .where(where)
          .toSQL(),
      );
      shapes.set(shapeKey, shape);
    }
    return d1.prepare(shape.sql).bind(...parameters(shape.names, 'set.', columns, change, whereValues));
  };
}
