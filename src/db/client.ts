import { drizzle } from 'drizzle-orm/d1';
import type { Env } from '../env.ts';

/**
 * A Drizzle client over this request's D1 binding; built per request, never cached in module scope.
 * No `schema` option: the service uses the query builder only (never `db.query.*`), and with a schema
 * every client re-derived the relational config of all tables, about a tenth of a read's Worker CPU in
 * the bench's profile (bench/RESULTS.md).
 */
export function createDb(env: Pick<Env, 'DB'>) {
  return drizzle(env.DB);
}

export type Db = ReturnType<typeof createDb>;
