import { drizzle } from 'drizzle-orm/d1';

/** The raw binding a request reads through: the database, or this request's session of it (read replication). */
export type D1Handle = D1Database | D1DatabaseSession;

const clients = new WeakMap<D1Handle, ReturnType<typeof drizzle>>();

/**
 * A Drizzle client over a D1 binding or session: one per binding object, so the database's own binding gets
 * one client per isolate and a session (read replication, one per request) one per request. A client holds
 * no request state. No `schema` option: the service uses the query builder only (never `db.query.*`), and
 * with a schema every client re-derived the relational config of all tables (bench/RESULTS.md).
 */
export function createDb(d1: D1Handle) {
  let client = clients.get(d1);
  if (!client) {
    // A session answers `prepare` and `batch` as the database does, which is all Drizzle's queries use.
    client = drizzle(d1 as D1Database);
    clients.set(d1, client);
  }
  return client;
}

export type Db = ReturnType<typeof createDb>;
