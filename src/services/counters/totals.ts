import { and, count, eq, gte, lt, type SQL, sql } from 'drizzle-orm';
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core';
import type { Db } from '../../db/client.ts';
import type { TotalQuery } from '../../db/paging.ts';
import { disputeCounters, eventCounters, paymentCounters, paymentEvents, payments } from '../../db/schema/index.ts';
import { type BucketSpan, DAY_MS, decompose } from '../../domain/buckets.ts';
import type { OwnerScope } from '../../domain/caller.ts';

/*
 * A list's exact `total`, read from the owner's counters (db/schema/counters.ts) instead of counting its history: the
 * whole history's counter, or, for a created range, the counters of the days, hours and quarter hours it covers and
 * the rows of its edges (less than a quarter hour each: domain/buckets.ts). A filter the counters do not keep (an
 * external reference, one payment's events) is counted on its own index range, which is small whatever the history.
 */

export interface CountedRange {
  createdFrom?: number;
  createdBefore?: number;
}

/** A statement of a total: batched, and explained by the tests. */
type Statement = TotalQuery['statements'][number];

type Sum = { n: number | null }[];
const sumOf = (result: unknown) => Number((result as Sum)[0]?.n ?? 0);

/**
 * Counters over a created range, and the rows of its edges. A range ends at the latest a day after now (nothing is
 * created later); one with no start is the whole history less what lies after its end.
 */
function rangeTotal(
  range: CountedRange,
  all: () => Statement,
  buckets: (span: BucketSpan, list: number[]) => Statement,
  rows: (from: number, to: number) => Statement,
): TotalQuery {
  const horizon = Math.floor(Date.now() / DAY_MS) * DAY_MS + 2 * DAY_MS;
  if (range.createdFrom === undefined && range.createdBefore === undefined)
    return { statements: [all()], total: (results) => sumOf(results[0]) };
  const statements: Statement[] = [];
  const signs: number[] = [];
  // Nothing was created before 1970 or after the horizon: a range reaching past either costs no more for it.
  let from = range.createdFrom === undefined ? undefined : Math.max(range.createdFrom, 0);
  let to = Math.min(range.createdBefore ?? horizon, horizon);
  let sign = 1;
  if (from === undefined) {
    // (-inf, to) is the whole history less [to, horizon).
    statements.push(all());
    signs.push(1);
    from = to;
    to = Math.max(horizon, from);
    sign = -1;
  }
  const parts = decompose(from, to);
  const bySpan = new Map<string, number[]>();
  for (const b of parts.buckets) {
    const key = `${b.span}:${b.sign}`;
    bySpan.set(key, [...(bySpan.get(key) ?? []), b.bucket]);
  }
  for (const [key, list] of bySpan) {
    const [span, bucketSign] = key.split(':') as [BucketSpan, string];
    statements.push(buckets(span, list));
    signs.push(sign * Number(bucketSign));
  }
  for (const r of parts.rows) {
    statements.push(rows(r.from, r.to));
    signs.push(sign * r.sign);
  }
  return {
    statements,
    total: (results) => signs.reduce((total, s, i) => total + s * sumOf(results[i]), 0),
  };
}

const inBuckets = (column: SQLiteColumn, list: number[]) =>
  sql`${column} in (select value from json_each(${JSON.stringify(list)}))`;

export interface PaymentTotalFilters extends CountedRange {
  status?: string;
  paymentMethodId?: string;
  externalReference?: string;
}

export function paymentsTotal(db: Db, scope: OwnerScope, filters: PaymentTotalFilters): TotalQuery {
  const owned = (table: typeof paymentCounters | typeof payments): SQL[] => [
    eq(table.ownerId, scope.ownerId),
    eq(table.environment, scope.environment),
    ...(filters.status !== undefined ? [eq(table.status, filters.status as never)] : []),
    ...(filters.paymentMethodId !== undefined ? [eq(table.paymentMethodId, filters.paymentMethodId)] : []),
  ];
  const rows = (from?: number, to?: number) =>
    db
      .select({ n: count() })
      .from(payments)
      .where(
        and(
          ...owned(payments),
          filters.externalReference !== undefined
            ? eq(payments.externalReference, filters.externalReference)
            : undefined,
          from !== undefined ? gte(payments.createdAt, from) : undefined,
          to !== undefined ? lt(payments.createdAt, to) : undefined,
        ),
      );
  // One reference's payments: its own index range (payments_owner_reference_idx), a handful of rows.
  if (filters.externalReference !== undefined) {
    const statement = rows(filters.createdFrom, filters.createdBefore);
    return { statements: [statement], total: (results) => sumOf(results[0]) };
  }
  const counters = (span: string, list?: number[]) =>
    db
      .select({ n: sql<number>`sum(${paymentCounters.count})` })
      .from(paymentCounters)
      .where(
        and(
          ...owned(paymentCounters),
          eq(paymentCounters.span, span as never),
          list === undefined ? eq(paymentCounters.bucket, 0) : inBuckets(paymentCounters.bucket, list),
        ),
      );
  return rangeTotal(filters, () => counters('all'), counters, rows);
}

export interface EventTotalFilters extends CountedRange {
  type?: string;
  paymentId?: string;
}

export function eventsTotal(db: Db, scope: OwnerScope, filters: EventTotalFilters): TotalQuery {
  const rows = (from?: number, to?: number) =>
    db
      .select({ n: count() })
      .from(paymentEvents)
      .where(
        and(
          eq(paymentEvents.ownerId, scope.ownerId),
          eq(paymentEvents.environment, scope.environment),
          filters.type !== undefined ? eq(paymentEvents.type, filters.type) : undefined,
          filters.paymentId !== undefined ? eq(paymentEvents.paymentId, filters.paymentId) : undefined,
          from !== undefined ? gte(paymentEvents.createdAt, from) : undefined,
          to !== undefined ? lt(paymentEvents.createdAt, to) : undefined,
        ),
      );
  // One payment's events: its own index range (payment_events_payment_idx).
  if (filters.paymentId !== undefined) {
    const statement = rows(filters.createdFrom, filters.createdBefore);
    return { statements: [statement], total: (results) => sumOf(results[0]) };
  }
  const counters = (span: string, list?: number[]) =>
    db
      .select({ n: sql<number>`sum(${eventCounters.count})` })
      .from(eventCounters)
      .where(
        and(
          eq(eventCounters.ownerId, scope.ownerId),
          eq(eventCounters.environment, scope.environment),
          filters.type !== undefined ? eq(eventCounters.type, filters.type) : undefined,
          eq(eventCounters.span, span as never),
          list === undefined ? eq(eventCounters.bucket, 0) : inBuckets(eventCounters.bucket, list),
        ),
      );
  return rangeTotal(filters, () => counters('all'), counters, rows);
}

export function disputesTotal(db: Db, scope: OwnerScope, filters: { status?: string }): TotalQuery {
  const statement = db
    .select({ n: sql<number>`sum(${disputeCounters.count})` })
    .from(disputeCounters)
    .where(
      and(
        eq(disputeCounters.ownerId, scope.ownerId),
        eq(disputeCounters.environment, scope.environment),
        filters.status !== undefined ? eq(disputeCounters.status, filters.status as never) : undefined,
      ),
    );
  return { statements: [statement], total: (results) => sumOf(results[0]) };
}
