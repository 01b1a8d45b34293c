import { env } from 'cloudflare:workers';
import { eq } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/d1';
import { describe, expect, it } from 'vitest';
import * as schema from '../../src/db/schema/index.ts';
import { apiKeys, users } from '../../src/db/schema/index.ts';
import { emptyD1Stats, formatD1Stats, meteredD1, parseD1Stats, withD1Stats } from '../../src/lib/d1-stats.ts';
import { createKey, seedSession } from '../helpers/api.ts';

// The bench's opt-in D1 meter (src/lib/d1-stats.ts): same answers as the binding, every call counted.
describe('D1 stats', () => {
  it('is off unless BENCH_D1_STATS is "true": the env is returned as it is', () => {
    const off = withD1Stats(env);
    expect(off.env).toBe(env);
    expect(off.stats).toBeNull();
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
    await metered.batch([metered.select().from(users).where(eq(users.id, session.user.id)), metered.update(users).set({ name: 'Renamed' }).where(eq(users.id, session.user.id))]);
    expect(stats.statements - before.statements).toBe(2);
    expect(stats.roundTrips - before.roundTrips).toBe(1);
    expect(stats.rowsWritten - before.rowsWritten).toBeGreaterThanOrEqual(1);

    await metered.update(users).set({ name: 'Again' }).where(eq(users.id, session.user.id)).run();
    expect(stats.roundTrips - before.roundTrips).toBe(2);
    expect(stats.unmetered).toBe(0);
    expect(parseD1Stats(formatD1Stats(stats))).toEqual(stats);
  });
});
