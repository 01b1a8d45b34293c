/**
 * The bench's single-writer model of D1 (bench/run.ts, "Single-writer model"). A D1 database executes one query at
 * a time: its throughput is one over the time a query takes, whatever the Workers in front of it do. Locally, D1 runs
 * in the same workerd process as the Worker and answers in microseconds, so the local CPU, not the database, is what
 * a load meets. Under this model every D1 database binding the bench's entry Worker has (bench/instrumented.ts) runs
 * one call at a time (a statement, or a batch: one call, as D1 runs a batch as one transaction), each holding its
 * database for a fixed service time before it runs, in arrival order; different databases run in parallel. So the
 * database is the bottleneck, and what a second database buys can be measured (issue 19: payments sharded across
 * databases).
 *
 * Bindings are found by what they are, not by name: every value of `env` that is a D1 database (`isD1Database`) is
 * wrapped, `DB` today and `SHARD_0`, `SHARD_1`, ... when the Worker has them. A database's writer is kept per
 * isolate by binding name, so the Worker and its Durable Objects (one isolate locally) queue on the same one.
 * Nothing of it is in the service's code: the production entry never sees a modelled binding.
 */

import { wrapD1 } from './d1-meter.ts';

export interface WriterStats {
  /** Calls run (a batch is one). */
  calls: number;
  /** Time the database was held, service time and the call itself, in ms (the Worker's clock). */
  busyMs: number;
  /** Time calls waited for the database before their turn, summed, in ms. */
  waitedMs: number;
  /** The most calls waiting at once (the one running excluded). */
  maxQueued: number;
}

export interface SingleWriterOptions {
  /** How long each call holds its database before it runs. */
  serviceMs: number;
  /** How to wait; tests pass their own. */
  sleep?: (ms: number) => Promise<void>;
  /** The clock; tests pass their own. */
  now?: () => number;
}

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** One database: calls are served one at a time, in arrival order, each holding the database `serviceMs`. */
export class SingleWriter {
  readonly stats: WriterStats = { calls: 0, busyMs: 0, waitedMs: 0, maxQueued: 0 };
  private tail: Promise<unknown> = Promise.resolve();
  private queued = 0;
  private readonly serviceMs: number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly now: () => number;

  constructor(options: SingleWriterOptions) {
    this.serviceMs = options.serviceMs;
    this.sleep = options.sleep ?? realSleep;
    this.now = options.now ?? Date.now;
  }

  run<T>(call: () => Promise<T>): Promise<T> {
    const arrived = this.now();
    this.queued += 1;
    this.stats.maxQueued = Math.max(this.stats.maxQueued, this.queued - 1);
    const previous = this.tail;
    // The database is held for exactly the service time; the local database then answers the call outside the queue.
    // Were the call inside it, this machine's CPU (busier as more shards serve) would lengthen every service time,
    // and the model would measure the machine instead of the database it stands for.
    const held = (async () => {
      // workerd cancels a request whose own work has nothing pending ("your Worker's code had hung"): waiting for
      // another request's call to end is such a wait, so a waiting call keeps a timer of its own until its turn.
      const keepAlive = setInterval(() => {}, 1_000);
      try {
        await previous;
      } finally {
        clearInterval(keepAlive);
      }
      this.queued -= 1;
      const started = this.now();
      this.stats.waitedMs += started - arrived;
      try {
        if (this.serviceMs > 0) await this.sleep(this.serviceMs);
      } finally {
        this.stats.calls += 1;
        this.stats.busyMs += this.now() - started;
      }
    })();
    // The next call waits for this one's service time to end.
    this.tail = held.catch(() => undefined);
    return held.then(call);
  }
}

/**
 * A D1 database binding: an instance of the runtime's `D1Database` class. Its methods alone do not tell it: a service
 * binding or the assets binding (a `Fetcher`) answers every property name with a function (an RPC call).
 */
export function isD1Database(value: unknown): value is D1Database {
  if (value === null || typeof value !== 'object') return false;
  const prototype = Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null;
  const candidate = value as Record<string, unknown>;
  return (
    prototype?.constructor?.name === 'D1Database' &&
    typeof candidate.prepare === 'function' &&
    typeof candidate.batch === 'function' &&
    typeof candidate.exec === 'function' &&
    typeof candidate.withSession === 'function'
  );
}

/** The names of the bindings of `env` that are D1 databases, in `env`'s order. */
export function d1BindingNames(env: object): string[] {
  return Object.keys(env).filter((name) => isD1Database((env as Record<string, unknown>)[name]));
}

/** A D1Database (or session) whose every call goes through `writer`. */
export function singleWriterD1(db: D1Database, writer: SingleWriter): D1Database {
  const modelled: Pick<D1Database, 'prepare' | 'batch' | 'exec'> = {
    prepare: (query) => new ModelledStatement(writer, db.prepare(query)) as unknown as D1PreparedStatement,
    batch: <T>(statements: D1PreparedStatement[]) => writer.run(() => db.batch<T>(statements.map(unwrap))),
    exec: (query) => writer.run(() => db.exec(query)),
  };
  // A session (read replication) reads and writes the same database: the same writer.
  return wrapD1(db, modelled, (constraint) =>
    singleWriterD1(db.withSession(constraint) as unknown as D1Database, writer),
  );
}

const unwrap = (statement: D1PreparedStatement): D1PreparedStatement =>
  statement instanceof ModelledStatement ? statement.inner : statement;

// Plain fields (no parameter properties): bench/run.ts imports this module under Node's type stripping.
class ModelledStatement {
  readonly inner: D1PreparedStatement;
  private readonly writer: SingleWriter;

  constructor(writer: SingleWriter, inner: D1PreparedStatement) {
    this.writer = writer;
    this.inner = inner;
  }

  bind(...values: unknown[]): ModelledStatement {
    return new ModelledStatement(this.writer, this.inner.bind(...values));
  }

  run<T = Record<string, unknown>>(): Promise<D1Result<T>> {
    return this.writer.run(() => this.inner.run<T>());
  }

  all<T = Record<string, unknown>>(): Promise<D1Result<T>> {
    return this.writer.run(() => this.inner.all<T>());
  }

  first<T = unknown>(column?: string): Promise<T | null> {
    return this.writer.run(() => (column === undefined ? this.inner.first<T>() : this.inner.first<T>(column)));
  }

  raw<T = unknown[]>(options?: { columnNames?: boolean }): Promise<T[]> {
    return this.writer.run(() => this.inner.raw(options as { columnNames?: false }) as Promise<T[]>);
  }
}

/** This isolate's writers, one per D1 binding name (the Worker and its Durable Objects share them). */
const writers = new Map<string, SingleWriter>();

/**
 * `env` with every D1 database binding run under the single-writer model with `serviceMs` per call; `env` itself
 * when `serviceMs` is 0 (the model is off). A binding's writer is made on first use, with the service time then
 * asked for; a bench run asks for one service time per server.
 */
export function withSingleWriters<E extends object>(env: E, serviceMs: number): E {
  if (!(serviceMs > 0)) return env;
  const modelled = { ...env } as Record<string, unknown>;
  for (const name of d1BindingNames(env)) {
    let writer = writers.get(name);
    if (!writer) {
      writer = new SingleWriter({ serviceMs });
      writers.set(name, writer);
    }
    modelled[name] = singleWriterD1(modelled[name] as D1Database, writer);
  }
  return modelled as E;
}

/** What each database's writer has done in this isolate so far, by binding name. */
export function singleWriterStats(): Record<string, WriterStats> {
  return Object.fromEntries([...writers].map(([name, writer]) => [name, { ...writer.stats }]));
}
