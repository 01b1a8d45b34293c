import { env } from 'cloudflare:workers';
import { eq } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/d1';
import { describe, expect, it } from 'vitest';
import * as schema from '../../src/db/schema/index.ts';
import { apiKeys, users } from '../../src/db/schema/index.ts';
import { emptyD1Stats, formatD1Stats, meteredD1, parseD1Stats } from '../../bench/d1-meter.ts';
import { createKey, seedSession } from '../helpers/api.ts';

// The bench's D1 meter (bench/d1-meter.ts), installed by the bench's own entry (bench/instrumented.ts):
// same answers as the binding, every call counted.
describe('D1 meter', () => {
  it("waits the latency model's delay once before every round trip (a batch is one), and none without it", async () => {
    const waits: number[] = [];
    const sleep = async (ms: number) => {
      waits.push(ms);
    };
    const stats = emptyD1Stats();
    const db = drizzle(meteredD1(env.DB, stats, { delayMs: 50, sleep }));
    await db.select().from(users).limit(1).all();
    await db.select().from(users).limit(1).get();
    await db.batch([db.select().from(users).limit(1), db.select().from(apiKeys).limit(1)]);
    await db.update(users).set({ name: 'x' }).where(eq(users.id, 'none')).run();
    expect(waits).toEqual([50, 50, 50, 50]);
    expect(stats.roundTrips).toBe(4);

    const none: number[] = [];
    await drizzle(meteredD1(env.DB, emptyD1Stats(), { sleep: async (ms) => void none.push(ms) }))
      .select()
      .from(users)
      .limit(1)
      .all();
    expect(none).toEqual([]);
  });

  it('counts typed reads (raw), runs and batches with the rows D1 reports, and answers like the binding', async () => {
    const session = await seedSession();
    const key = await createKey(session);
    const stats = emptyD1Stats();
    const metered = drizzle(meteredD1(env.DB, stats), { schema });
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
    expect(parseD1Stats(formatD1Stats(stats))).toEqual(stats);
  });
});
