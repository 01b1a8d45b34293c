import { env } from 'cloudflare:workers';
import { expect } from 'vitest';
import type { PageStatements } from '../../src/db/paging.ts';

const CONTROL_TABLES =
  /"(users|sessions|refresh_tokens|api_keys|api_key_payment_methods|payment_methods|owner_placements)"/;

/** SQLite's plan of a statement as Drizzle builds it, one `detail` line per step, in the database of its tables. */
export async function queryPlan(statement: { toSQL(): { sql: string; params: unknown[] } }): Promise<string[]> {
  const { sql, params } = statement.toSQL();
  const database = CONTROL_TABLES.test(sql) ? env.DB : env.SHARD_0;
  const { results } = await database
    .prepare(`EXPLAIN QUERY PLAN ${sql}`)
    .bind(...params)
    .all<{ detail: string }>();
  return results.map((r) => r.detail);
}

/**
 * Explains the page and the total of a list for every combination of its filters (each present with
 * the value given, or absent) and asserts every step of every plan matches `accepted` and is neither a
 * SCAN (of a table or a whole index) nor a temporary B-tree for the order. Returns the plans explained.
 */
export async function expectEveryFilterCombinationIndexed<F extends object>(
  values: Required<F>,
  build: (filters: F) => PageStatements<unknown>,
  accepted: RegExp,
): Promise<number> {
  const names = Object.keys(values) as Array<keyof F>;
  let explained = 0;
  for (let mask = 0; mask < 2 ** names.length; mask++) {
    const filters = {} as F;
    names.forEach((name, bit) => {
      if (mask & (1 << bit)) filters[name] = values[name];
    });
    const { rows, total } = build(filters);
    for (const [label, statement] of [
      ['page', rows],
      ['total', total],
    ] as const) {
      const plan = await queryPlan(statement);
      const what = `${label} ${JSON.stringify(filters)}: ${JSON.stringify(plan)}`;
      expect(plan.length, what).toBeGreaterThan(0);
      for (const step of plan) {
        expect(step, what).toMatch(accepted);
        expect(step, what).not.toMatch(/\bSCAN\b|TEMP B-TREE/);
      }
      explained++;
    }
  }
  return explained;
}
