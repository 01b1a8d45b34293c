import { dataPlane, depsOfOwner } from '../helpers/shards.ts';
import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { payments } from '../../src/db/schema/index.ts';
import { ServiceError } from '../../src/lib/errors.ts';
import { mutate, MUTATE_MAX_ATTEMPTS } from '../../src/services/payments/store.ts';
import { paymentBody, paymentRow, setupMerchant } from '../helpers/merchant.ts';
import { statusOf } from '../../src/http/errors.ts';

describe('mutate', () => {
  it('gives up after MUTATE_MAX_ATTEMPTS lost compare-and-sets with a retryable concurrent_update, writing nothing of its change', async () => {
    const m = await setupMerchant();
    const created = await m.pay(paymentBody(m.pos.id, '10.00'));
    expect(created.status).toBe(201);
    const id: string = created.body.data.id;
    const before = (await paymentRow(id))!;
    const deps = await depsOfOwner(m.session.user.id);
    let reads = 0;
    // A rival writer that always wins: right after each try reads the payment, the version moves, so its update misses.
    const db = new Proxy(deps.db, {
      get(target, property) {
        if (property !== 'batch') return Reflect.get(target, property, target);
        return async (statements: Parameters<typeof target.batch>[0]) => {
          const results = await target.batch(statements);
          if (statements.length === 3) {
            reads++;
            await target
              .update(payments)
              .set({ version: sql`${payments.version} + 1` })
              .where(eq(payments.id, id))
              .run();
          }
          return results;
        };
      },
    });
    const rivaled = new Proxy(deps, {
      get: (target, property) => (property === 'db' ? db : Reflect.get(target, property, target)),
    });
    const failure = await mutate(rivaled, id, { type: 'mark_looked', at: 42 }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ServiceError);
    expect(failure).toMatchObject({ code: 'concurrent_update', retryable: true });
    expect(statusOf(failure as ServiceError)).toBe(409);
    expect(reads).toBe(MUTATE_MAX_ATTEMPTS);
    const after = (await paymentRow(id))!;
    expect(after.version).toBe(before.version + MUTATE_MAX_ATTEMPTS);
    expect(after.status).toBe(before.status);
    const raw = await dataPlane
      .prepare('SELECT reconciled_at FROM payments WHERE id = ?')
      .bind(id)
      .first<{ reconciled_at: number | null }>();
    expect(raw?.reconciled_at).not.toBe(42);
  });
});
