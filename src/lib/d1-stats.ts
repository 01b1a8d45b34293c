/**
 * Opt-in D1 accounting for the benchmark (bench/run.ts). Only when the var `BENCH_D1_STATS` is "true"
 * (set by the bench alone, with `wrangler dev --var BENCH_D1_STATS:true`) is a request's `env.DB`
 * replaced by a metered wrapper that counts statements and round trips and sums D1's own
 * `meta.rows_read` / `meta.rows_written`; the totals leave in the `X-D1-Stats` response header.
 * Disabled (every deployment), the cost is one string comparison per request and `env.DB` is the
 * binding itself.
 *
 * D1's `raw()` (which Drizzle uses for every typed `get()`/`all()`) drops `meta`; see
 * `MeteredStatement.raw` for how a SELECT is metered anyway. A call that cannot be metered still counts
 * as a statement and a round trip, and in `unmetered`, so the numbers never pretend.
 */

export interface D1Stats {
  /** SQL statements sent (a batch of n is n). */
  statements: number;
  /** Calls that went to D1 (a batch is one). */
  roundTrips: number;
  rowsRead: number;
  rowsWritten: number;
  /** Statements whose rows could not be read from `meta` (counted in `statements` all the same). */
  unmetered: number;
}

export const D1_STATS_HEADER = 'X-D1-Stats';
/** The idempotency object's share of `X-D1-Stats` (the operation itself, without the request's auth). */
export const D1_OPERATION_STATS_HEADER = 'X-D1-Stats-Operation';

export const d1StatsEnabled = (env: { BENCH_D1_STATS?: string }): boolean => env.BENCH_D1_STATS === 'true';

export const emptyD1Stats = (): D1Stats => ({ statements: 0, roundTrips: 0, rowsRead: 0, rowsWritten: 0, unmetered: 0 });

/** Adds `from` into `into`; either may be absent (stats off). */
export function addD1Stats(into: D1Stats | null | undefined, from: D1Stats | null | undefined): void {
  if (!into || !from) return;
  into.statements += from.statements;
  into.roundTrips += from.roundTrips;
  into.rowsRead += from.rowsRead;
  into.rowsWritten += from.rowsWritten;
  into.unmetered += from.unmetered;
}

/** `statements=3;round_trips=2;rows_read=2;rows_written=1` (`;unmetered=n` only when some were). */
export function formatD1Stats(stats: D1Stats): string {
  const text = `statements=${stats.statements};round_trips=${stats.roundTrips};rows_read=${stats.rowsRead};rows_written=${stats.rowsWritten}`;
  return stats.unmetered > 0 ? `${text};unmetered=${stats.unmetered}` : text;
}

export function parseD1Stats(header: string | null | undefined): D1Stats | null {
  if (!header) return null;
  const fields = new Map(header.split(';').map((part) => part.split('=', 2) as [string, string]));
  const num = (name: string) => Number(fields.get(name) ?? 0);
  const stats = { statements: num('statements'), roundTrips: num('round_trips'), rowsRead: num('rows_read'), rowsWritten: num('rows_written'), unmetered: num('unmetered') };
  return Object.values(stats).every(Number.isFinite) ? stats : null;
}

/**
 * `env` itself when stats are off; otherwise a copy whose `DB` meters into the returned `stats`.
 * Everything downstream builds its Drizzle client from the env it is given, so passing the copy on is
 * all it takes.
 */
export function withD1Stats<E extends { DB: D1Database; BENCH_D1_STATS?: string }>(env: E): { env: E; stats: D1Stats | null } {
  if (!d1StatsEnabled(env)) return { env, stats: null };
  const stats = emptyD1Stats();
  return { env: { ...env, DB: meteredD1(env.DB, stats) }, stats };
}

type Meta = Partial<Pick<D1Meta, 'rows_read' | 'rows_written'>> | undefined;

function addMeta(stats: D1Stats, meta: Meta) {
  if (typeof meta?.rows_read === 'number' && typeof meta.rows_written === 'number') {
    stats.rowsRead += meta.rows_read;
    stats.rowsWritten += meta.rows_written;
  } else {
    stats.unmetered += 1;
  }
}

/** A D1Database running every call on `db` and adding each call to `stats`. */
export function meteredD1(db: D1Database, stats: D1Stats): D1Database {
  const metered: Pick<D1Database, 'prepare' | 'batch' | 'exec'> = {
    prepare: (query) => new MeteredStatement(db, stats, query) as unknown as D1PreparedStatement,
    batch: async <T>(statements: D1PreparedStatement[]) => {
      const results = await db.batch<T>(statements.map(unwrap));
      stats.roundTrips += 1;
      stats.statements += statements.length;
      for (const result of results) addMeta(stats, result.meta);
      return results;
    },
    exec: async (query) => {
      const result = await db.exec(query);
      // exec answers a count and a duration only.
      stats.roundTrips += 1;
      stats.statements += result.count;
      stats.unmetered += result.count;
      return result;
    },
  };
  // withSession / dump are not metered; nothing in the service uses them.
  return new Proxy(db, {
    get(target, property) {
      if (property === 'prepare' || property === 'batch' || property === 'exec') return metered[property];
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

const unwrap = (statement: D1PreparedStatement): D1PreparedStatement => (statement instanceof MeteredStatement ? statement.inner : statement);

// Plain fields (no parameter properties): bench/run.ts imports this module under Node's type stripping.
class MeteredStatement {
  readonly inner: D1PreparedStatement;
  private readonly database: D1Database;
  private readonly stats: D1Stats;
  private readonly sql: string;
  private readonly params: unknown[];

  constructor(database: D1Database, stats: D1Stats, sql: string, params: unknown[] = [], inner: D1PreparedStatement = database.prepare(sql)) {
    this.inner = inner;
    this.database = database;
    this.stats = stats;
    this.sql = sql;
    this.params = params;
  }

  bind(...values: unknown[]): MeteredStatement {
    return new MeteredStatement(this.database, this.stats, this.sql, values, this.inner.bind(...values));
  }

  private count(meta: Meta) {
    this.stats.roundTrips += 1;
    this.stats.statements += 1;
    addMeta(this.stats, meta);
  }

  async run<T = Record<string, unknown>>(): Promise<D1Result<T>> {
    const result = await this.inner.run<T>();
    this.count(result.meta);
    return result;
  }

  async all<T = Record<string, unknown>>(): Promise<D1Result<T>> {
    const result = await this.inner.all<T>();
    this.count(result.meta);
    return result;
  }

  /** D1's `first()` is `all()` keeping the first row (no LIMIT is added); `meta` comes with `all()`. */
  async first<T = unknown>(column?: string): Promise<T | null> {
    const { results } = await this.all<Record<string, unknown>>();
    const row = results[0];
    if (!row) return null;
    if (column === undefined) return row as T;
    if (row[column] === undefined) throw new Error(`D1_COLUMN_NOTFOUND: Column not found (${column})`);
    return row[column] as T;
  }

  /**
   * D1's `raw()` drops `meta`, and `all()` keys rows by column name, losing one of two columns with the
   * same name (Drizzle's joins have them, hence its positional `raw()`). A SELECT is therefore run as
   * `all()` on `SELECT * FROM (<statement>)`: SQLite names the outer columns uniquely (`scopes`,
   * `scopes:1`) in the statement's order, so the positional rows are rebuilt exactly, and the subquery is
   * flattened into the same plan, so `meta` reports the statement's own reads. Anything else (a
   * RETURNING statement) runs as the plain `raw()` and is counted in `unmetered`.
   */
  async raw<T = unknown[]>(options?: { columnNames?: boolean }): Promise<T[]> {
    if (/^\s*(select|with)\b/i.test(this.sql) && !/;\s*$/.test(this.sql)) {
      const wrapped = await this.database.prepare(`SELECT * FROM (${this.sql})`).bind(...this.params).all<Record<string, unknown>>();
      this.count(wrapped.meta);
      const columns = wrapped.results[0] ? Object.keys(wrapped.results[0]) : [];
      // JavaScript objects put integer-like keys first: then the plain rows are fetched again (never the
      // case for the service's queries; the extra call is the meter's, so it is not counted).
      if (columns.some((name) => /^(0|[1-9]\d*)$/.test(name))) return (await this.inner.raw(options as { columnNames?: false })) as T[];
      const rows = wrapped.results.map((row) => Object.values(row)) as T[];
      return options?.columnNames ? ([columns, ...rows] as T[]) : rows;
    }
    const rows = (await this.inner.raw(options as { columnNames?: false })) as T[];
    this.count(undefined);
    return rows;
  }
}
