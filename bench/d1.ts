// The bench's instruments of a D1 binding, installed by its entry Worker (bench/instrumented.ts) and the baseline;
// the service's production entry never sees them.
// - The meter counts statements and round trips and sums D1's own `meta.rows_read` / `rows_written` (`X-D1-Stats`, as
//   JSON). A call it cannot meter still counts, and in `unmetered`, so the numbers never pretend.
// - The single-writer model (`npm run bench -- --scale`): D1 runs one query at a time per database, but locally it
//   answers in microseconds in the Worker's own process, so a load meets the local CPU, not the database. Under the
//   model each database runs one call (a statement, or a batch: one transaction) at a time, each holding it
//   `serviceMs` first, in arrival order, databases in parallel: the database is the bottleneck, as deployed.

/** Statements (a batch of n is n), round trips (a batch is one), rows; `unmetered`: statements without `meta`. */
const FIELDS = ['statements', 'roundTrips', 'rowsRead', 'rowsWritten', 'unmetered'] as const;
export type D1Stats = Record<(typeof FIELDS)[number], number>;

export const D1_STATS_HEADER = 'X-D1-Stats';

export const emptyD1Stats = () => Object.fromEntries(FIELDS.map((field) => [field, 0])) as D1Stats;

export function addD1Stats(into: D1Stats, from: D1Stats | null): void {
  for (const field of FIELDS) into[field] += from?.[field] ?? 0;
}

export const parseD1Stats = (header: string | null | undefined) => (header ? (JSON.parse(header) as D1Stats) : null);

/** One database under the single-writer model: calls served one at a time, in arrival order, each after `serviceMs`. */
export class SingleWriter {
  /** Calls run (a batch is one), and the time the database was held by them, in ms. */
  readonly stats = { calls: 0, busyMs: 0 };
  private tail: Promise<unknown> = Promise.resolve();
  private readonly serviceMs: number;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(options: { serviceMs: number; sleep?: (ms: number) => Promise<void> }) {
    this.serviceMs = options.serviceMs;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  run<T>(call: () => Promise<T>): Promise<T> {
    const previous = this.tail;
    // The database is held for exactly the service time, the call itself then runs outside the queue: else this
    // machine's CPU (busier as more shards serve) would lengthen every service time. workerd cancels a request with
    // nothing of its own pending: a call waiting for another request's keeps a timer of its own until its turn.
    const held = (async () => {
      const keepAlive = setInterval(() => {}, 1_000);
      try {
        await previous;
      } finally {
        clearInterval(keepAlive);
      }
      const started = Date.now();
      try {
        if (this.serviceMs > 0) await this.sleep(this.serviceMs);
      } finally {
        this.stats.calls += 1;
        this.stats.busyMs += Date.now() - started;
      }
    })();
    this.tail = held.catch(() => undefined);
    return held.then(call);
  }
}

/** The D1 database bindings of `env`: the control database and the shards (wrangler.toml). */
export const d1BindingNames = (env: object) => Object.keys(env).filter((name) => /^(DB|SHARD_\d+)$/.test(name));

/** `stats`: where a call is counted, or a function naming the current request's stats (bench/instrumented.ts). */
type Instruments = { stats?: D1Stats | (() => D1Stats); writer?: SingleWriter };

/** `db` (or a session of it) with every call through `writer` when given, and counted into `stats` when given. */
export function instrumentedD1(db: D1Database, instruments: Instruments): D1Database {
  const calls: Pick<D1Database, 'prepare' | 'batch' | 'withSession'> = {
    prepare: (sql) => new Statement(db, instruments, sql) as unknown as D1PreparedStatement,
    batch: async <T>(statements: D1PreparedStatement[]) => {
      const inner = statements.map((s) => (s instanceof Statement ? s.inner : s));
      const results = await through(instruments, () => db.batch<T>(inner));
      count(instruments, results.length, ...results.map((r) => r.meta));
      return results;
    },
    // A session (the service's reads and last writes) reads and writes the same database.
    withSession: (constraint) =>
      instrumentedD1(db.withSession(constraint) as unknown as D1Database, instruments) as never,
  };
  return new Proxy(db, {
    get(target, property) {
      if (property in calls) return calls[property as keyof typeof calls];
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

const through = <T>({ writer }: Instruments, call: () => Promise<T>) => (writer ? writer.run(call) : call());

type Meta = Partial<Pick<D1Meta, 'rows_read' | 'rows_written'>> | undefined;

/** One round trip of `statements` statements, with the `meta` of each (none: unmetered). */
function count({ stats }: Instruments, statements: number, ...metas: Meta[]) {
  if (!stats) return;
  const counted = typeof stats === 'function' ? stats() : stats;
  counted.roundTrips += 1;
  counted.statements += statements;
  for (const meta of metas.length > 0 ? metas : [undefined]) {
    if (typeof meta?.rows_read === 'number' && typeof meta.rows_written === 'number') {
      counted.rowsRead += meta.rows_read;
      counted.rowsWritten += meta.rows_written;
    } else counted.unmetered += 1;
  }
}

// Plain fields (no parameter properties): bench/run.ts imports this module under Node's type stripping.
class Statement {
  readonly inner: D1PreparedStatement;
  private readonly db: D1Database;
  private readonly instruments: Instruments;
  private readonly sql: string;
  private readonly params: unknown[];

  constructor(db: D1Database, instruments: Instruments, sql: string, params: unknown[] = [], inner = db.prepare(sql)) {
    this.db = db;
    this.instruments = instruments;
    this.sql = sql;
    this.params = params;
    this.inner = inner;
  }

  bind(...values: unknown[]): Statement {
    return new Statement(this.db, this.instruments, this.sql, values, this.inner.bind(...values));
  }

  async run<T = Record<string, unknown>>(): Promise<D1Result<T>> {
    const result = await through(this.instruments, () => this.inner.run<T>());
    count(this.instruments, 1, result.meta);
    return result;
  }

  async all<T = Record<string, unknown>>(): Promise<D1Result<T>> {
    const result = await through(this.instruments, () => this.inner.all<T>());
    count(this.instruments, 1, result.meta);
    return result;
  }

  /** D1's `first()` is `all()` keeping the first row (no LIMIT is added); `meta` comes with `all()`. */
  async first<T = unknown>(column?: string): Promise<T | null> {
    const [row] = (await this.all<Record<string, unknown>>()).results;
    if (!row || column === undefined) return (row ?? null) as T | null;
    if (row[column] === undefined) throw new Error(`D1_COLUMN_NOTFOUND: Column not found (${column})`);
    return row[column] as T;
  }

  /**
   * D1's `raw()` (Drizzle's typed reads) drops `meta`, and `all()` loses one of two columns of one name (a join's). So
   * a SELECT runs as `all()` of `SELECT * FROM (<statement>)`: SQLite names the outer columns uniquely, in order, and
   * flattens the subquery into the same plan, so `meta` is the statement's. Anything else runs as `raw()`, unmetered.
   */
  async raw<T = unknown[]>(options?: { columnNames?: boolean }): Promise<T[]> {
    const plain = () => this.inner.raw(options as { columnNames?: false }) as Promise<T[]>;
    if (!/^\s*(select|with)\b/i.test(this.sql) || /;\s*$/.test(this.sql)) {
      const rows = await through(this.instruments, plain);
      count(this.instruments, 1);
      return rows;
    }
    const wrapped = new Statement(this.db, this.instruments, `SELECT * FROM (${this.sql})`).bind(...this.params);
    const { results } = await wrapped.all<Record<string, unknown>>();
    const columns = results[0] ? Object.keys(results[0]) : [];
    // Objects put integer-like keys first: such rows are fetched again (none of the service's; the meter's call).
    if (columns.some((name) => /^(0|[1-9]\d*)$/.test(name))) return plain();
    const rows = results.map((row) => Object.values(row)) as T[];
    return options?.columnNames ? ([columns, ...rows] as T[]) : rows;
  }
}

/** This isolate's writers, one per D1 binding name (the Worker and its Durable Objects share them). */
const writers = new Map<string, SingleWriter>();

/** `env` (a copy) with every D1 binding metered into `stats`, and under the single-writer model when `serviceMs` > 0. */
export function instrumentedEnv<E extends object>(env: E, stats: Instruments['stats'], serviceMs: number): E {
  const instrumented = { ...env } as Record<string, unknown>;
  for (const name of d1BindingNames(env)) {
    if (serviceMs > 0 && !writers.has(name)) writers.set(name, new SingleWriter({ serviceMs }));
    const writer = serviceMs > 0 ? writers.get(name) : undefined;
    instrumented[name] = instrumentedD1(instrumented[name] as D1Database, {
      ...(stats ? { stats } : {}),
      ...(writer ? { writer } : {}),
    });
  }
  return instrumented as E;
}

/** What each database's writer has done in this isolate so far, by binding name. */
export const singleWriterStats = (): Record<string, SingleWriter['stats']> =>
  Object.fromEntries([...writers].map(([name, writer]) => [name, { ...writer.stats }]));
