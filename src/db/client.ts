import { drizzle } from 'drizzle-orm/d1';
import type { Env } from '../env.ts';
import * as schema from './schema/index.ts';

/** A Drizzle client over this request's D1 binding; built per request, never cached in module scope. */
export function createDb(env: Pick<Env, 'DB'>) {
  return drizzle(env.DB, { schema });
}

export type Db = ReturnType<typeof createDb>;
