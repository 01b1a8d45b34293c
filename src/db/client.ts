import { drizzle } from 'drizzle-orm/d1';

/**
 * A Drizzle client over this request's D1 binding; built per request, never cached in module scope.
 * No `schema` option: the service uses the query builder only (never `db.query.*`), and with a schema
 * every client re-derived the relational config of all tables, about a tenth of a read's Worker CPU in
 * the bench's profile (bench/RESULTS.md).
 */
export function createDb(client: D1Database | D1DatabaseSession) {
  // Drizzle's D1 driver is typed for the database alone, but it calls only `prepare` and `batch`, which a
  // session (read replication: deps.ts) answers as the database does.
  return drizzle(client as D1Database);
}

export type Db = ReturnType<typeof createDb>;
