import { env } from 'cloudflare:workers';
import { and, eq, getTableColumns, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createDb } from '../../src/db/client.ts';
import { preparedInsert, preparedInsertIf, preparedUpdates, runBatch } from '../../src/db/prepared.ts';
import { payments, refunds, type PaymentRow } from '../../src/db/schema/index.ts';

/**
 * The writes built once per isolate (db/prepared.ts) write what Drizzle's own queries wrote: every column, each
 * encoded by its column (booleans, JSON), absent values as NULL, and only while their condition holds.
 */

const d1 = env.SHARD_0;
const db = createDb(d1);

/** A payment with every column given: NULL where nullable, a value of its column's kind elsewhere. */
function paymentRow(id: string): PaymentRow {
  const now = Date.now();
  const nulls = Object.fromEntries(Object.keys(getTableColumns(payments)).map((key) => [key, null])) as Record<
    keyof PaymentRow,
    null
  >;
  return {
    ...nulls,
    id,
    ownerId: 'usr_prepared',
    environment: 'test',
    paymentMethodId: 'pm_prepared',
    apiKeyId: 'key_prepared',
    referenceScope: 'key_prepared',
    externalReference: `ref-${id}`,
    amountMinor: 1234,
    currency: 'USD',
    status: 'created',
    version: 1,
    processorIdempotencyKey: id,
    processorAttempts: 0,
    description: 'a description',
    metadata: { order: 'A-1', nested: { n: 1 } },
    atTerminal: true,
    terminalChecks: 0,
    attemptKey: 'attempt',
    attemptFingerprint: 'fingerprint',
    createdAt: now,
    updatedAt: now,
  };
}

const read = (id: string) => db.select().from(payments).where(eq(payments.id, id)).get();
const atVersion = sql`exists (select 1 from ${payments} where ${payments.id} = ${sql.placeholder('paymentId')} and ${payments.version} = ${sql.placeholder('version')})`;
const update = preparedUpdates(
  payments,
  and(eq(payments.id, sql.placeholder('id')), eq(payments.version, sql.placeholder('version')))!,
);

describe('prepared writes', () => {
  it('an insert writes the row as Drizzle reads it back, JSON and booleans encoded by their columns', async () => {
    const row = paymentRow(`pay_prep_${crypto.randomUUID()}`);
    await preparedInsert(payments).bind(d1, row).run();
    expect(await read(row.id)).toEqual(row);
  });

  it('an update sets only the columns given (undefined ones left out), and only at the version read', async () => {
    const row = paymentRow(`pay_prep_${crypto.randomUUID()}`);
    await preparedInsert(payments).bind(d1, row).run();
    const change = { status: 'approved', atTerminal: false, metadata: { order: 'B-2' }, description: null, version: 2 };
    const stale = await update(d1, { ...change, processorStatus: undefined }, { id: row.id, version: 7 }).run();
    expect(stale.meta.changes).toBe(0);
    expect(await read(row.id)).toEqual(row);
    const done = await update(d1, { ...change, processorStatus: undefined }, { id: row.id, version: 1 }).run();
    expect(done.meta.changes).toBe(1);
    expect(await read(row.id)).toEqual({ ...row, ...change });
    // A second shape of change gets its own statement; the first keeps working.
    await update(d1, { qrData: 'qr', version: 3 }, { id: row.id, version: 2 }).run();
    expect(await read(row.id)).toMatchObject({ qrData: 'qr', status: 'approved', version: 3 });
    expect(() => update(d1, { notAColumn: 1 }, { id: row.id, version: 3 })).toThrow(/No column notAColumn/);
  });

  it('a conditional insert writes nothing when its condition fails, and a batch mixing both kinds is one transaction', async () => {
    const row = paymentRow(`pay_prep_${crypto.randomUUID()}`);
    await preparedInsert(payments).bind(d1, row).run();
    const refundIf = preparedInsertIf(refunds, atVersion);
    const refund = {
      id: `ref_prep_${crypto.randomUUID()}`,
      paymentId: row.id,
      ownerId: row.ownerId,
      amountMinor: 100,
      currency: 'USD',
      status: 'created' as const,
      processorIdempotencyKey: 'k',
      processorAttempts: 0,
      createdAt: row.createdAt,
      updatedAt: row.createdAt,
    };
    await refundIf.bind(d1, refund, { paymentId: row.id, version: 9 }).run();
    expect(await db.select().from(refunds).where(eq(refunds.paymentId, row.id)).all()).toEqual([]);

    // The Drizzle update fails (NOT NULL), so the prepared insert before it in the batch is rolled back.
    const failing = db
      .update(payments)
      .set({ currency: null as unknown as string })
      .where(eq(payments.id, row.id));
    await expect(runBatch(d1, [refundIf.bind(d1, refund, { paymentId: row.id, version: 1 }), failing])).rejects.toThrow(
      /NOT NULL/,
    );
    expect(await db.select().from(refunds).where(eq(refunds.paymentId, row.id)).all()).toEqual([]);

    const [inserted] = await runBatch(d1, [refundIf.bind(d1, refund, { paymentId: row.id, version: 1 })]);
    expect(inserted!.meta.changes).toBe(1);
    expect(await db.select().from(refunds).where(eq(refunds.paymentId, row.id)).get()).toMatchObject({
      ...refund,
      reason: null,
      processorReference: null,
    });
  });
});
