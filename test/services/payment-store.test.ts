import { dataPlane, depsOfOwner } from '../helpers/shards.ts';
import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { payments } from '../../src/db/schema/index.ts';
import { ServiceError } from '../../src/lib/errors.ts';
import { mutatePayment, MUTATE_MAX_ATTEMPTS } from '../../src/services/payments/store.ts';
import { paymentBody, paymentRow, setupMerchant } from '../helpers/merchant.ts';
import { statusOf } from '../../src/http/errors.ts';

describe('mutatePayment', () => {
  it('gives up after MUTATE_MAX_ATTEMPTS lost compare-and-sets with a retryable concurrent_update, writing nothing of its change', async () => {
    const m = await setupMerchant();
    const created = await m.pay(paymentBody(m.pos.id, '10.00'));
    expect(created.status).toBe(201);
    const id: string = created.body.data.id;
    const before = (await paymentRow(id))!;
    const deps = await depsOfOwner(m.session.user.id);
    const { db } = deps;
    let decisions = 0;
    // A rival writer that always wins: each try's batch first bumps the version, so its own update misses.
    const failure = await mutatePayment(deps, id, () => {
      decisions++;
      return {
        change: { processorStatus: 'never-written' },
        companions: () => [
          db
            .update(payments)
            .set({ version: sql`${payments.version} + 1` })
            .where(eq(payments.id, id)),
        ],
        result: null,
      };
    }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ServiceError);
    expect(failure).toMatchObject({ code: 'concurrent_update', retryable: true });
    expect(statusOf(failure as ServiceError)).toBe(409);
    expect(decisions).toBe(MUTATE_MAX_ATTEMPTS);
    const after = (await paymentRow(id))!;
    expect(after.version).toBe(before.version + MUTATE_MAX_ATTEMPTS);
    expect(after.status).toBe(before.status);
    const raw = await dataPlane
      .prepare('SELECT processor_status FROM payments WHERE id = ?')
      .bind(id)
      .first<{ processor_status: string | null }>();
    expect(raw?.processor_status).not.toBe('never-written');
  });
});
