import { BUCKET_SPANS } from '../../src/domain/buckets.ts';
import { shardDbOfPayment } from './shards.ts';

/**
 * Moves a payment (or a payment's events) to another creation time, as if made then, together with the owner's
 * counters that count it there (db/schema/counters.ts): lists' totals and the report read those counters, so a row
 * moved alone would still be counted at its real creation time.
 */

const spans = BUCKET_SPANS.map(({ span, size }) => ({ span, size }));

/** Sets a payment's `created_at` to `at`, moving it from its buckets of every span to those of `at`. */
export async function backdatePayment(paymentId: string, at: number): Promise<void> {
  const db = await shardDbOfPayment(paymentId);
  const row = await db
    .prepare(
      'SELECT owner_id, environment, status, payment_method_id, currency, amount_minor, created_at FROM payments WHERE id = ?',
    )
    .bind(paymentId)
    .first<{
      owner_id: string;
      environment: string;
      status: string;
      payment_method_id: string;
      currency: string;
      amount_minor: number;
      created_at: number;
    }>();
  if (!row) throw new Error(`no payment ${paymentId}`);
  const key = [row.owner_id, row.environment];
  const rest = [row.status, row.payment_method_id, row.currency];
  const statements = [db.prepare('UPDATE payments SET created_at = ? WHERE id = ?').bind(at, paymentId)];
  for (const { span, size } of spans) {
    const from = Math.floor(row.created_at / size) * size;
    const to = Math.floor(at / size) * size;
    statements.push(
      db
        .prepare(
          `UPDATE payment_counters SET count = count - 1, amount_minor = amount_minor - ?
           WHERE owner_id = ? AND environment = ? AND span = ? AND bucket = ? AND status = ? AND payment_method_id = ? AND currency = ?`,
        )
        .bind(row.amount_minor, ...key, span, from, ...rest),
      db
        .prepare(
          `INSERT INTO payment_counters (owner_id, environment, span, bucket, status, payment_method_id, currency, count, amount_minor)
           VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?)
           ON CONFLICT DO UPDATE SET count = count + 1, amount_minor = amount_minor + excluded.amount_minor`,
        )
        .bind(...key, span, to, ...rest, row.amount_minor),
    );
  }
  await db.batch(statements);
}

/** Sets the `created_at` of every event of a payment to `at`, moving each from its buckets to those of `at`. */
export async function backdateEvents(paymentId: string, at: number): Promise<void> {
  const db = await shardDbOfPayment(paymentId);
  const { results } = await db
    .prepare('SELECT owner_id, environment, type, created_at FROM payment_events WHERE payment_id = ?')
    .bind(paymentId)
    .all<{ owner_id: string; environment: string; type: string; created_at: number }>();
  const statements = [db.prepare('UPDATE payment_events SET created_at = ? WHERE payment_id = ?').bind(at, paymentId)];
  for (const event of results) {
    for (const { span, size } of spans) {
      const key = [event.owner_id, event.environment, span];
      statements.push(
        db
          .prepare(
            'UPDATE event_counters SET count = count - 1 WHERE owner_id = ? AND environment = ? AND span = ? AND bucket = ? AND type = ?',
          )
          .bind(...key, Math.floor(event.created_at / size) * size, event.type),
        db
          .prepare(
            `INSERT INTO event_counters (owner_id, environment, span, bucket, type, count) VALUES (?, ?, ?, ?, ?, 1)
             ON CONFLICT DO UPDATE SET count = count + 1`,
          )
          .bind(...key, Math.floor(at / size) * size, event.type),
      );
    }
  }
  await db.batch(statements);
}
