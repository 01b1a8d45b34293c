import { env } from 'cloudflare:workers';
import { eq } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/d1';
import { describe, expect, it } from 'vitest';
import { apiKeys, users } from '../../src/db/schema/index.ts';
import {
  d1BindingNames,
  isD1Database,
  SingleWriter,
  singleWriterD1,
  singleWriterStats,
  withSingleWriters,
} from '../../bench/d1-single-writer.ts';

/** A sleep that waits until the test lets it go, so the order of calls is the test's, not a clock's. */
function heldSleep() {
  const waiting: (() => void)[] = [];
  return {
    sleep: (_ms: number) => new Promise<void>((resolve) => waiting.push(resolve)),
    waiting,
    release: async () => {
      waiting.shift()?.();
      // Let the released call finish and the next one take its turn.
      for (let i = 0; i < 10; i++) await Promise.resolve();
    },
  };
}

// The bench's single-writer model of D1 (bench/d1-single-writer.ts), installed by the bench's own entry
// (bench/instrumented.ts): one call at a time per database, the same answers as the binding.
describe('single-writer model of D1', () => {
  it('runs one call at a time per database, in arrival order, each after its service time', async () => {
    const held = heldSleep();
    const writer = new SingleWriter({ serviceMs: 5, sleep: held.sleep });
    const order: string[] = [];
    let running = 0;
    let most = 0;
    const call = (name: string) => async () => {
      running += 1;
      most = Math.max(most, running);
      order.push(name);
      running -= 1;
      return name;
    };
    const answers = Promise.all([writer.run(call('a')), writer.run(call('b')), writer.run(call('c'))]);
    await Promise.resolve();
    await Promise.resolve();
    expect(held.waiting).toHaveLength(1);
    expect(order).toEqual([]);
    await held.release();
    expect(order).toEqual(['a']);
    await held.release();
    await held.release();
    expect(await answers).toEqual(['a', 'b', 'c']);
    expect(most).toBe(1);
    expect(writer.stats.calls).toBe(3);
    expect(writer.stats.maxQueued).toBe(2);
  });

  it('keeps serving after a call fails', async () => {
    const writer = new SingleWriter({ serviceMs: 1, sleep: async () => {} });
    await expect(writer.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await writer.run(async () => 'next')).toBe('next');
    expect(writer.stats.calls).toBe(2);
  });

  it('lets two databases run at once', async () => {
    const held = heldSleep();
    const one = new SingleWriter({ serviceMs: 5, sleep: held.sleep });
    const two = new SingleWriter({ serviceMs: 5, sleep: held.sleep });
    const both = Promise.all([one.run(async () => 1), two.run(async () => 2)]);
    await Promise.resolve();
    await Promise.resolve();
    expect(held.waiting).toHaveLength(2);
    await held.release();
    await held.release();
    expect(await both).toEqual([1, 2]);
  });

  it('tells D1 databases from the other bindings, whatever their names', () => {
    expect(isD1Database(env.DB)).toBe(true);
    // A service binding or the assets binding answers any property with a function (an RPC call).
    const rpcLike = new Proxy({}, { get: () => () => undefined });
    for (const other of [
      env.IDEMPOTENCY,
      env.RATE_LIMITER,
      env.WEBHOOKS,
      env.API_KEY_RATE_LIMIT,
      env.ENVIRONMENT,
      rpcLike,
    ]) {
      expect(isD1Database(other)).toBe(false);
    }
    expect(d1BindingNames({ ...env, SHARD_0: env.DB, SHARD_1: env.DB })).toEqual(
      expect.arrayContaining(['DB', 'SHARD_0', 'SHARD_1']),
    );
    expect(d1BindingNames({ ...env, SHARD_0: env.DB })).not.toContain('IDEMPOTENCY');
  });

  it('answers as the binding does: statements, batches (one call) and sessions through the writer', async () => {
    const calls: number[] = [];
    const writer = new SingleWriter({ serviceMs: 5, sleep: async (ms) => void calls.push(ms) });
    const plain = drizzle(env.DB);
    const modelled = drizzle(singleWriterD1(env.DB, writer));
    expect(await modelled.select().from(users).limit(3).all()).toEqual(await plain.select().from(users).limit(3).all());
    const joined = (db: typeof plain) =>
      db
        .select({ key: apiKeys.id, owner: users.id })
        .from(apiKeys)
        .innerJoin(users, eq(users.id, apiKeys.userId))
        .limit(3)
        .all();
    expect(await joined(modelled)).toEqual(await joined(plain));
    await modelled.batch([modelled.select().from(users).limit(1), modelled.select().from(apiKeys).limit(1)]);
    const session = singleWriterD1(env.DB, writer).withSession('first-primary');
    expect(await session.prepare('SELECT 1 AS one').first('one')).toBe(1);
    expect(writer.stats.calls).toBe(calls.length);
    expect(calls.every((ms) => ms === 5)).toBe(true);
  });

  it('wraps every D1 binding of an environment, one writer per binding name, and nothing else', async () => {
    const plain = { ...env, SHARD_0: env.DB };
    expect(withSingleWriters(plain, 0)).toBe(plain);
    const modelled = withSingleWriters(plain, 1);
    expect(modelled.IDEMPOTENCY).toBe(env.IDEMPOTENCY);
    expect(modelled.DB).not.toBe(env.DB);
    await modelled.SHARD_0.prepare('SELECT 1').first();
    const again = withSingleWriters(plain, 1);
    await again.SHARD_0.prepare('SELECT 1').first();
    expect(singleWriterStats().SHARD_0?.calls).toBe(2);
  });
});
