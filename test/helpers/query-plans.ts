import { env } from 'cloudflare:workers';
import { expect } from 'vitest';
import type { Page, PageStatements } from '../../src/db/paging.ts';

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

const isCounter = (statement: { toSQL(): { sql: string } }) => /"\w+_counters"/.test(statement.toSQL().sql);

/** The three ways a page is placed: by an offset, after a cursor, before a cursor (limit 50). */
export const PAGE_KINDS: readonly Page[] = [
  { limit: 50, offset: 100 },
  { limit: 50, offset: 0, startingAfter: 'pay_cursor' },
  { limit: 50, offset: 0, endingBefore: 'pay_cursor' },
];

/**
 * The steps a cursor adds to a page's plan, and nothing more: its (created_at, id) read once by primary key, as
 * a subquery of the page. The page's own steps must still be a range of the list's index.
 */
const CURSOR_STEP =
  /^(SCALAR SUBQUERY \d+|REUSE SUBQUERY \d+|SEARCH \w+ USING (COVERING )?INDEX sqlite_autoindex_\w+_1 \(id=\?\))$/;

/**
 * The steps of a total read from counters (services/counters/totals.ts): a range of the counters' key from the owner,
 * and a bucket list walked from its JSON (the buckets of a created range, a few dozen at most).
 */
const COUNTER_STEP =
  /^(SEARCH (payment|event|dispute)_counters USING INDEX sqlite_autoindex_(payment|event|dispute)_counters_1 \(owner_id=\? AND environment=\?.*|LIST SUBQUERY \d+|SCAN json_each VIRTUAL TABLE INDEX \d+:)$/;

/**
 * Explains every statement of a page (the page, its total, its cursor's lookup) and asserts each step matches
 * `accepted` (or is the cursor's lookup by id) and is neither a SCAN (of a table or a whole index) nor a temporary
 * B-tree for the order, unless `allowed` says which (a list whose index lacks its tie-breaker). Returns the
 * plans explained.
 */
export async function expectPageIndexed(
  statements: PageStatements<unknown>,
  accepted: RegExp,
  label: string,
  allowed?: RegExp,
): Promise<number> {
  let explained = 0;
  for (const [part, statement] of [
    ['page', statements.rows],
    ...statements.total.statements.map((total) => ['total', total] as const),
    ['cursor', statements.cursor],
  ] as const) {
    if (statement === undefined) continue;
    const plan = await queryPlan(statement);
    const what = `${part} ${label}: ${JSON.stringify(plan)}`;
    expect(plan.length, what).toBeGreaterThan(0);
    // The cursor's own lookup is by id; the page and the total are ranges of the list's index (or what `allowed` says),
    // a total's counters ranges of the counters' key.
    const own = part === 'cursor' ? CURSOR_STEP : part === 'total' && isCounter(statement) ? COUNTER_STEP : accepted;
    expect(
      plan.some((step) => own.test(step) || (part !== 'cursor' && allowed?.test(step))),
      what,
    ).toBe(true);
    for (const step of plan) {
      if (allowed?.test(step) || (own === COUNTER_STEP && COUNTER_STEP.test(step))) continue;
      expect(CURSOR_STEP.test(step) || accepted.test(step), `${what}: ${step}`).toBe(true);
      expect(step, what).not.toMatch(/\bSCAN\b|TEMP B-TREE/);
    }
    explained++;
  }
  return explained;
}

/**
 * Explains the statements of a list for every combination of its filters (each present with the value given,
 * or absent) and every kind of page (`PAGE_KINDS`), as `expectPageIndexed` does. Returns the plans explained.
 */
export async function expectEveryFilterCombinationIndexed<F extends object>(
  values: Required<F>,
  build: (filters: F, page: Page) => PageStatements<unknown>,
  accepted: RegExp,
): Promise<number> {
  const names = Object.keys(values) as Array<keyof F>;
  let explained = 0;
  for (let mask = 0; mask < 2 ** names.length; mask++) {
    const filters = {} as F;
    names.forEach((name, bit) => {
      if (mask & (1 << bit)) filters[name] = values[name];
    });
    for (const page of PAGE_KINDS) {
      explained += await expectPageIndexed(build(filters, page), accepted, JSON.stringify({ filters, page }));
    }
  }
  return explained;
}
