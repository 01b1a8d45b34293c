/**
 * The bench's D1 meter (bench/run.ts). The bench's own entry Worker (bench/instrumented.ts) and the
 * baseline Worker wrap their D1 binding with `meteredD1`, which counts statements and round trips and sums
 * D1's own `meta.rows_read` / `meta.rows_written`; the totals leave in the `X-D1-Stats` response header.
 * Nothing of it is in the service's code: the production entry never sees a metered binding.
 *
 * With `delayMs`, every round trip first waits that long: the latency model of a Worker far from the
 * database's primary, where each serial round trip is paid in wall time.
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
/** The statements a request ran (`encodeStatements`). */
export const D1_STATEMENTS_HEADER = 'X-D1-Statements';
/**
 * Sent by the bench's sampled requests only: the service's answer then lists its statements. Under load it does not,
 * since the baseline lists none and encoding them is the bench's work, not the service's.
 */
export const D1_STATEMENTS_REQUEST_HEADER = 'X-Bench-Statements';

export interface MeterOptions {
  /** Waited before every round trip (the latency model); 0 or absent: none. */
  delayMs?: number;
  /** How to wait; tests pass their own. */
  sleep?: (ms: number) => Promise<void>;
  /**
   * Collects every statement run: its SQL and how many parameters it binds (for EXPLAIN QUERY PLAN); a function
   * names the current request's log, as `StatsTarget` does.
   */
  statements?: StatementLog | (() => StatementLog | null);
}

/** SQL text → number of bound parameters. */
export type StatementLog = Map<string, number>;

/** A statement log as one header value (base64url of JSON pairs), and back. */
export function encodeStatements(log: StatementLog): string {
  const bytes = new TextEncoder().encode(JSON.stringify([...log]));
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replaceAll('=', '');
}

export function decodeStatements(header: string | null | undefined, into: StatementLog = new Map()): StatementLog {
  if (!header) return into;
  const binary = atob(header.replaceAll('-', '+').replaceAll('_', '/'));
  const pairs = JSON.parse(new TextDecoder().decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)))) as [
    string,
    number,
  ][];
  for (const [sql, params] of pairs) into.set(sql, params);
  return into;
}

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export const emptyD1Stats = (): D1Stats => ({
  statements: 0,
  roundTrips: 0,
  rowsRead: 0,
  rowsWritten: 0,
  unmetered: 0,
});

/** Adds `from` into `into`; either may be absent (nothing metered). */
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
  const stats = {
    statements: num('statements'),
    roundTrips: num('round_trips'),
    rowsRead: num('rows_read'),
    rowsWritten: num('rows_written'),
    unmetered: num('unmetered'),
  };
  return Object.values(stats).every(Number.isFinite) ? stats : null;
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

/**
 * Where a call is counted: one request's stats, or a function naming the current request's (the bench's Worker entry
 * wraps its bindings once per isolate, as the service's own caches expect, and finds each request's meter by its
 * async context: bench/instrumented.ts).
 */
export type StatsTarget = D1Stats | (() => D1Stats);

/** A D1Database running every call on `db` and adding each call to `stats`. */
export function meteredD1(db: D1Database, stats: StatsTarget, options: MeterOptions = {}): D1Database {
  const delayMs = options.delayMs ?? 0;
  const sleep = options.sleep ?? realSleep;
  const wait = delayMs > 0 ? () => sleep(delayMs) : async () => {};
  const statsNow = typeof stats === 'function' ? stats : () => stats;
  const logs = options.statements;
  const logNow = typeof logs === 'function' ? logs : () => logs ?? null;
  const metered: Pick<D1Database, 'prepare' | 'batch' | 'exec'> = {
    prepare: (query) => new MeteredStatement(db, statsNow(), wait, logNow(), query) as unknown as D1PreparedStatement,
    batch: async <T>(statements: D1PreparedStatement[]) => {
      const counted = statsNow();
      await wait();
      for (const statement of statements) if (statement instanceof MeteredStatement) statement.record();
      const results = await db.batch<T>(statements.map(unwrap));
      counted.roundTrips += 1;
      counted.statements += statements.length;
      for (const result of results) addMeta(counted, result.meta);
      return results;
    },
    exec: async (query) => {
      const counted = statsNow();
      await wait();
      const result = await db.exec(query);
      // exec answers a count and a duration only.
      counted.roundTrips += 1;
      counted.statements += result.count;
      counted.unmetered += result.count;
      return result;
    },
  };
  // A session (the service's reads, deps.ts) is metered like the database it came from; dump is not.
  return wrapD1(db, metered, (constraint) =>
    meteredD1(db.withSession(constraint) as unknown as D1Database, stats, options),
  );
}

/**
 * `db` with its `prepare`, `batch` and `exec` answered by `calls`, and `withSession` by `withSession`; anything
 * else goes to `db` itself. The bench's wrappers of a D1 binding (this meter, bench/d1-single-writer.ts) are built on it.
 */
export function wrapD1(
  db: D1Database,
  calls: Pick<D1Database, 'prepare' | 'batch' | 'exec'>,
  withSession: (constraint?: string) => D1Database,
): D1Database {
  return new Proxy(db, {
    get(target, property) {
      if (property === 'prepare' || property === 'batch' || property === 'exec') return calls[property];
      if (property === 'withSession') return withSession;
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

const unwrap = (statement: D1PreparedStatement): D1PreparedStatement =>
  statement instanceof MeteredStatement ? statement.inner : statement;

// Plain fields (no parameter properties): bench/run.ts imports this module under Node's type stripping.
class MeteredStatement {
  readonly inner: D1PreparedStatement;
  private readonly database: D1Database;
  private readonly stats: D1Stats;
  private readonly wait: () => Promise<void>;
  private readonly log: StatementLog | null;
  private readonly sql: string;
  private readonly params: unknown[];

  constructor(
    database: D1Database,
    stats: D1Stats,
    wait: () => Promise<void>,
    log: StatementLog | null,
    sql: string,
    params: unknown[] = [],
    inner: D1PreparedStatement = database.prepare(sql),
  ) {
    this.inner = inner;
    this.database = database;
    this.stats = stats;
    this.wait = wait;
    this.log = log;
    this.sql = sql;
    this.params = params;
  }

  bind(...values: unknown[]): MeteredStatement {
    return new MeteredStatement(
      this.database,
      this.stats,
      this.wait,
      this.log,
      this.sql,
      values,
      this.inner.bind(...values),
    );
  }

  record() {
    this.log?.set(this.sql, this.params.length);
  }

  private count(meta: Meta) {
    this.record();
    this.stats.roundTrips += 1;
    this.stats.statements += 1;
    addMeta(this.stats, meta);
  }

  async run<T = Record<string, unknown>>(): Promise<D1Result<T>> {
    await this.wait();
    const result = await this.inner.run<T>();
    this.count(result.meta);
    return result;
  }

  async all<T = Record<string, unknown>>(): Promise<D1Result<T>> {
    await this.wait();
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
    await this.wait();
    if (/^\s*(select|with)\b/i.test(this.sql) && !/;\s*$/.test(this.sql)) {
      const wrapped = await this.database
        .prepare(`SELECT * FROM (${this.sql})`)
        .bind(...this.params)
        .all<Record<string, unknown>>();
      this.count(wrapped.meta);
      const columns = wrapped.results[0] ? Object.keys(wrapped.results[0]) : [];
      // JavaScript objects put integer-like keys first: then the plain rows are fetched again (never the
      // case for the service's queries; the extra call is the meter's, so it is not counted).
      if (columns.some((name) => /^(0|[1-9]\d*)$/.test(name)))
        return (await this.inner.raw(options as { columnNames?: false })) as T[];
      const rows = wrapped.results.map((row) => Object.values(row)) as T[];
      return options?.columnNames ? ([columns, ...rows] as T[]) : rows;
    }
    const rows = (await this.inner.raw(options as { columnNames?: false })) as T[];
    this.count(undefined);
    return rows;
  }
}
