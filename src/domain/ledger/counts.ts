import { BUCKET_SPANS, type BucketSpan } from '../buckets.ts';
import type { DisputeStatus } from '../disputes.ts';
import type { PaymentStatus } from '../payment-state.ts';
import type { Change } from './change.ts';
import type { DisputeRecord, PaymentRecord } from './records.ts';

/**
 * What a change does to the owner's counters (db/schema/counters.ts): a payment recorded or moved to another status
 * (counted at its creation time, so a list's created range and the report count it where it was created), each
 * event written, a dispute recorded or moved. Pure: the store writes these deltas in the change's own batch.
 */

/** The whole history, and the buckets ranges are made of (domain/buckets.ts). */
export const COUNTER_SPANS = ['all', ...BUCKET_SPANS.map((s) => s.span)] as const;
export type CounterSpan = 'all' | BucketSpan;

/** The first millisecond of the span's bucket that holds `at` (0 for `all`). */
export function bucketOf(span: CounterSpan, at: number): number {
  if (span === 'all') return 0;
  const size = BUCKET_SPANS.find((s) => s.span === span)!.size;
  return Math.floor(at / size) * size;
}

export type CountDelta =
  | {
      kind: 'payment';
      status: PaymentStatus;
      paymentMethodId: string;
      currency: string;
      /** The payment's creation: the bucket it is counted in. */
      at: number;
      count: number;
      amountMinor: number;
    }
  | { kind: 'event'; type: string; at: number; count: number }
  | { kind: 'dispute'; status: DisputeStatus; count: number };

const paymentDelta = (p: PaymentRecord, status: PaymentStatus, sign: 1 | -1): CountDelta => ({
  kind: 'payment',
  status,
  paymentMethodId: p.paymentMethodId,
  currency: p.currency,
  at: p.createdAt,
  count: sign,
  amountMinor: sign * p.amountMinor,
});

/** A payment recorded (before any change). */
export const createdCounts = (payment: PaymentRecord): CountDelta[] => [paymentDelta(payment, payment.status, 1)];

/** What `change` of `current` (whose dispute it updates was `disputeBefore`) counts; events at `eventsAt`. */
export function countsOf(
  current: PaymentRecord,
  change: Change,
  disputeBefore: DisputeRecord | null,
  eventsAt: number,
): CountDelta[] {
  const deltas: CountDelta[] = [];
  const status = change.payment.status;
  if (status !== undefined && status !== current.status)
    deltas.push(paymentDelta(current, current.status, -1), paymentDelta(current, status, 1));
  for (const event of change.events) deltas.push({ kind: 'event', type: event.type, at: eventsAt, count: 1 });
  if (change.dispute) {
    const next = 'insert' in change.dispute ? change.dispute.insert : change.dispute.update;
    if (!('insert' in change.dispute) && disputeBefore && disputeBefore.status !== next.status)
      deltas.push({ kind: 'dispute', status: disputeBefore.status, count: -1 });
    if ('insert' in change.dispute || disputeBefore?.status !== next.status)
      deltas.push({ kind: 'dispute', status: next.status, count: 1 });
  }
  return deltas;
}
