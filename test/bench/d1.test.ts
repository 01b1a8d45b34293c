import { env } from 'cloudflare:workers';
import { eq } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/d1';
import { describe, expect, it } from 'vitest';
import * as schema from '../../src/db/schema/index.ts';
import { apiKeys, users } from '../../src/db/schema/index.ts';
import {
  d1BindingNames,
  emptyD1Stats,
  instrumentedD1,
  instrumentedEnv,
  parseD1Stats,
  SingleWriter,
  singleWriterStats,
} from '../../bench/d1.ts';
import { createKey, seedSession } from '../helpers/api.ts';

// The bench's instruments of a D1 binding (bench/d1.ts), installed by its own entry (bench/instrumented.ts): the
// meter counts every call, the single-writer model runs one call at a time per database; both answer as the binding.
describe('D1 meter', () => {
  it('counts typed reads (raw), runs and batches with the rows D1 reports, and answers like the binding', async () => {
    const session = await seedSession();
    const key = await createKey(session);
    const stats = emptyD1Stats();
    const metered = drizzle(instrumentedD1(env.DB, { stats }), { schema });
    const plain = drizzle(env.DB, { schema });
    // Two columns named `scopes`: only positional rows (raw) keep both.
    const joined = (db: typeof plain) =>
      db
        .select({ id: apiKeys.id, scopes: apiKeys.scopes, ownerScopes: users.scopes })
        .from(apiKeys)
        .innerJoin(users, eq(users.id, apiKeys.userId))
        .where(eq(apiKeys.id, key.id))
        .get();
    expect(await joined(metered)).toEqual(await joined(plain));
    expect(stats).toMatchObject({ statements: 1, roundTrips: 1, unmetered: 0 });
    expect(stats.rowsRead).toBeGreaterThanOrEqual(2);

    const before = { ...stats };
    await metered.batch([
      metered.select().from(users).where(eq(users.id, session.user.id)),
      metered.update(users).set({ name: 'Renamed' }).where(eq(users.id, session.user.id)),
    ]);
    expect(stats.statements - before.statements).toBe(2);
    expect(stats.roundTrips - before.roundTrips).toBe(1);
    expect(stats.rowsWritten - before.rowsWritten).toBeGreaterThanOrEqual(1);

    await metered.update(users).set({ name: 'Again' }).where(eq(users.id, session.user.id)).run();
    expect(stats.roundTrips - before.roundTrips).toBe(2);
    expect(stats.unmetered).toBe(0);
    expect(parseD1Stats(JSON.stringify(stats))).toEqual(stats);
  });
});

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

  it('instruments the control database and the shards, and no other binding', () => {
    expect(d1BindingNames({ ...env, SHARD_0: env.DB, SHARD_1: env.DB })).toEqual(
      expect.arrayContaining(['DB', 'SHARD_0', 'SHARD_1']),
    );
    expect(d1BindingNames(env)).not.toContain('IDEMPOTENCY');
  });

  it('answers as the binding does: statements, batches (one call) and sessions through the writer', async () => {
    const calls: number[] = [];
    const writer = new SingleWriter({ serviceMs: 5, sleep: async (ms) => void calls.push(ms) });
    const plain = drizzle(env.DB);
    const modelled = drizzle(instrumentedD1(env.DB, { writer }));
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
    const session = instrumentedD1(env.DB, { writer }).withSession('first-primary');
    expect(await session.prepare('SELECT 1 AS one').first('one')).toBe(1);
    expect(writer.stats.calls).toBe(calls.length);
    expect(calls.every((ms) => ms === 5)).toBe(true);
  });

  it('wraps every D1 binding of an environment, one writer per binding name, and nothing else', async () => {
    const plain = { ...env, SHARD_0: env.DB };
    const stats = emptyD1Stats();
    const modelled = instrumentedEnv(plain, stats, 1);
    expect(modelled.IDEMPOTENCY).toBe(env.IDEMPOTENCY);
    expect(modelled.DB).not.toBe(env.DB);
    await modelled.SHARD_0.prepare('SELECT 1').first();
    const again = instrumentedEnv(plain, undefined, 1);
    await again.SHARD_0.prepare('SELECT 1').first();
    expect(singleWriterStats().SHARD_0?.calls).toBe(2);
    expect(stats.roundTrips).toBe(1);
  });
});
