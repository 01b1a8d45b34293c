import { and, asc, eq, sql, type SQL } from 'drizzle-orm';
import type { BatchItem } from 'drizzle-orm/batch';
import type { Db } from '../../db/client.ts';
import { payments, refunds, type PaymentRow, type RefundRow } from '../../db/schema/index.ts';
import type { Environment } from '../../env.ts';

/** Reads and compare-and-set writes of payments; see the `version` column in db/schema/payments.ts. */

export interface PaymentOwnerScope {
  ownerId: string;
  environment: Environment;
}

export function findPayment(db: Db, scope: PaymentOwnerScope, id: string) {
  return db
    .select()
    .from(payments)
    .where(and(eq(payments.id, id), eq(payments.ownerId, scope.ownerId), eq(payments.environment, scope.environment)))
    .get();
}

export function loadPayment(db: Db, id: string) {
  return db.select().from(payments).where(eq(payments.id, id)).get();
}

export async function loadPaymentWithRefunds(db: Db, id: string): Promise<{ payment: PaymentRow; refunds: RefundRow[] } | null> {
  const [paymentRows, refundRows] = await db.batch([
    db.select().from(payments).where(eq(payments.id, id)),
    db.select().from(refunds).where(eq(refunds.paymentId, id)).orderBy(asc(refunds.createdAt)),
  ]);
  const payment = paymentRows[0];
  return payment ? { payment, refunds: refundRows } : null;
}

/** SQL condition true only while the payment is at `version`: ties companion writes to the CAS. */
export const paymentAtVersion = (paymentId: string, version: number): SQL =>
  sql`exists (select 1 from ${payments} where ${payments.id} = ${paymentId} and ${payments.version} = ${version})`;

export type PaymentChange = Partial<Omit<PaymentRow, 'id' | 'version' | 'ownerId' | 'environment' | 'createdAt'>>;

/**
 * Writes `change` if the payment is still at the version read, bumping the version; `companions` run
 * in the same D1 batch (one transaction) and must be conditioned with `paymentAtVersion(id, v + 1)`.
 * Returns the new row, or null when someone else changed the payment first (read again and retry).
 */
export async function commitPaymentChange(
  db: Db,
  current: PaymentRow,
  change: PaymentChange,
  companions: (nextVersion: number) => BatchItem<'sqlite'>[] = () => [],
): Promise<PaymentRow | null> {
  const nextVersion = current.version + 1;
  const [update] = await db.batch([
    db
      .update(payments)
      .set({ ...change, version: nextVersion })
      .where(and(eq(payments.id, current.id), eq(payments.version, current.version))),
    ...companions(nextVersion),
  ]);
  if (update.meta.changes !== 1) return null;
  return { ...current, ...change, version: nextVersion };
}

export interface PaymentDecision<T> {
  change: PaymentChange;
  companions?: (nextVersion: number) => BatchItem<'sqlite'>[];
  /** Returned to the caller once the change is committed. */
  result: T;
}

/**
 * The one way a payment changes: decide from the current row and its refund ledger (through the state
 * machines), then compare-and-set. On a conflict the row is read again and the decision re-made, so
 * contention only delays; it never loses or overwrites a change. `decide` returning null writes nothing.
 */
export async function mutatePayment<T>(
  db: Db,
  paymentId: string,
  decide: (payment: PaymentRow, refunds: RefundRow[]) => PaymentDecision<T> | { none: T },
  maxAttempts = 200,
): Promise<{ payment: PaymentRow; result: T }> {
  for (let attempt = 0; attempt < maxAttempts; attempt++) {
    const loaded = await loadPaymentWithRefunds(db, paymentId);
    if (!loaded) throw new Error('payment vanished');
    const decision = decide(loaded.payment, loaded.refunds);
    if ('none' in decision) return { payment: loaded.payment, result: decision.none };
    const saved = await commitPaymentChange(db, loaded.payment, decision.change, decision.companions);
    if (saved) return { payment: saved, result: decision.result };
    await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 ** Math.min(attempt, 5))));
  }
  throw new Error('payment change kept conflicting');
}
