import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { appOf } from '../../src/app.ts';
import { type ShardName, shardsOf } from '../../src/db/shards.ts';
import { createDeps, type Deps } from '../../src/deps.ts';

const app = appOf('test');

/** The test deployment's shards (wrangler.toml `test`: two), found as the Worker finds them (db/shards.ts). */
export const SHARDS = shardsOf(env);

/** Where the directory (control database) places an owner now; null when it has not placed it yet. */
export async function shardOf(ownerId: string): Promise<ShardName | null> {
  const row = await env.DB.prepare('SELECT shard FROM owner_placements WHERE owner_id = ?')
    .bind(ownerId)
    .first<{ shard: ShardName }>();
  return row?.shard ?? null;
}

/** The owner's shard database (the owner must be placed: it made a request, or was created through the API). */
export async function shardDbOf(ownerId: string): Promise<D1Database> {
  const shard = await shardOf(ownerId);
  const found = SHARDS.find((s) => s.name === shard);
  if (!found) throw new Error(`owner ${ownerId} is not placed on a test shard`);
  return found.d1;
}

/** An invocation on the owner's shard, as the Worker builds one after authentication. */
export async function depsOfOwner(ownerId: string): Promise<Deps> {
  const shard = await shardOf(ownerId);
  if (!shard) throw new Error(`owner ${ownerId} is not placed`);
  return createDeps(env, { shard });
}

/** The shard that holds the payment. */
async function shardOfPayment(paymentId: string): Promise<(typeof SHARDS)[number]> {
  for (const shard of SHARDS) {
    if (await shard.d1.prepare('SELECT 1 FROM payments WHERE id = ?').bind(paymentId).first()) return shard;
  }
  throw new Error(`payment ${paymentId} is on no shard`);
}

/** The database of the shard that holds the payment. */
export async function shardDbOfPayment(paymentId: string): Promise<D1Database> {
  return (await shardOfPayment(paymentId)).d1;
}

/** An invocation on the shard that holds the payment. */
export async function depsOfPayment(paymentId: string): Promise<Deps> {
  return createDeps(env, { shard: (await shardOfPayment(paymentId)).name });
}

/** Runs a per-shard job (the cron's work) on every shard, as the cron does. */
export function onEveryShard<T>(work: (deps: Deps) => Promise<T>): Promise<T[]> {
  return Promise.all(SHARDS.map(({ name }) => work(createDeps(env, { shard: name }))));
}

/**
 * The data plane as one database, for tests that read or change rows by an id without knowing the owner's shard:
 * a statement runs on every shard; `first` answers the first shard's row, `all` every shard's rows, `run` the
 * changes of all. An owner's rows are on exactly one shard (test/db/shard-routing.test.ts), so this finds them.
 * Never used by the Worker, which reads and writes one shard per request.
 */
export const dataPlane = {
  prepare(sql: string) {
    return statement(sql, []);
  },
};

function statement(sql: string, params: unknown[]) {
  const each = () => SHARDS.map(({ d1 }) => d1.prepare(sql).bind(...params));
  return {
    bind: (...values: unknown[]) => statement(sql, values),
    async first<T = Record<string, unknown>>(column?: string): Promise<T | null> {
      for (const s of each()) {
        const row = column === undefined ? await s.first<T>() : await s.first<T>(column);
        if (row !== null) return row;
      }
      return null;
    },
    async all<T = Record<string, unknown>>(): Promise<{ results: T[] }> {
      const results: T[] = [];
      for (const s of each()) results.push(...(await s.all<T>()).results);
      return { results };
    },
    async run(): Promise<{ meta: { changes: number } }> {
      let changes = 0;
      for (const s of each()) changes += (await s.run()).meta.changes;
      return { meta: { changes } };
    },
  };
}

/** A D1 binding that counts the statements sent to it (sessions included). */
export function metered(d1: D1Database, counter: { statements: number }): D1Database {
  const wrap = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(t, prop) {
        const value = Reflect.get(t, prop, t);
        if (prop === 'prepare' || prop === 'batch' || prop === 'exec') {
          return (...args: unknown[]) => {
            counter.statements++;
            return (value as (...a: unknown[]) => unknown).apply(t, args);
          };
        }
        if (prop === 'withSession')
          return (...args: unknown[]) => wrap((value as (...a: unknown[]) => object).apply(t, args));
        return typeof value === 'function' ? value.bind(t) : value;
      },
    });
  return wrap(d1);
}

/** A request through the Worker's fetch with these bindings (the idempotency objects keep the deployment's). */
export async function fetchWith(bindings: object, method: string, path: string, token: string, body?: unknown) {
  const ctx = createExecutionContext();
  const res = await app.fetch(
    new Request(`http://localhost${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }),
    bindings,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return { status: res.status, body: (await res.json().catch(() => null)) as any };
}
