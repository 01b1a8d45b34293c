import { and, count, eq, gte, lt, sql } from 'drizzle-orm';
import { paymentCounters, payments } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import { type BucketSpan, DAY_MS, decompose, HOUR_MS, intervals, isTimeZone } from '../../domain/buckets.ts';
import type { OwnerScope } from '../../domain/caller.ts';
import { formatAmount } from '../../domain/money.ts';
import type { PaymentStatus } from '../../domain/payment-state.ts';
import { invalidRequest } from '../../lib/errors.ts';
import { toIso } from '../../lib/time.ts';

/** The longest range a report covers, and the longest one reported by the hour. */
export const REPORT_MAX_RANGE_MS = 366 * DAY_MS;
export const REPORT_MAX_HOURLY_RANGE_MS = 48 * HOUR_MS;
/** The range when none is asked for: the last 30 days. */
const DEFAULT_RANGE_MS = 30 * DAY_MS;

export interface ReportInput {
  createdFrom?: number;
  createdBefore?: number;
  interval: 'day' | 'hour';
  groupBy?: 'payment_method';
  tz: string;
}

export interface ReportRow {
  start: string;
  end: string;
  status: PaymentStatus;
  currency: string;
  payment_method?: string;
  count: number;
  amount: { value: string; currency: string };
}

/**
 * The owner's payments counted and summed per interval (the days of `tz`, or hours), status and currency (and payment
 * method when grouped by it), over `[createdFrom, createdBefore)`: read from the counters (db/schema/counters.ts) of
 * the buckets each interval is made of (domain/buckets.ts), and the rows of the range's own edges (less than a quarter
 * hour each). What it reads grows with the range, never with the owner's history. Rows without payments are left out;
 * the counts add up to the payments list's `total` over the same range.
 */
export async function reportPayments({
  deps,
  scope,
  input,
}: {
  deps: Deps;
  scope: OwnerScope;
  input: ReportInput;
}): Promise<ReportRow[]> {
  const to = input.createdBefore ?? Date.now();
  const from = input.createdFrom ?? to - DEFAULT_RANGE_MS;
  if (!isTimeZone(input.tz)) throw invalidRequest('Unknown time zone.', [{ field: 'tz', issue: 'an IANA time zone' }]);
  if (from >= to) throw invalidRequest('The range is empty.', [{ field: 'created_lt', issue: 'after created_gte' }]);
  if (to - from > REPORT_MAX_RANGE_MS)
    throw invalidRequest('A report covers at most 366 days.', [
      { field: 'created_gte', issue: 'at most 366 days before created_lt' },
    ]);
  if (input.interval === 'hour' && to - from > REPORT_MAX_HOURLY_RANGE_MS)
    throw invalidRequest('An hourly report covers at most 48 hours.', [
      { field: 'interval', issue: '`day` beyond 48 hours' },
    ]);

  const spans = intervals(from, to, input.interval, input.tz);
  // Every bucket any interval needs, with the intervals it counts for (and how).
  const wanted = new Map<string, { span: BucketSpan; bucket: number; uses: { interval: number; sign: number }[] }>();
  const edges: { interval: number; from: number; to: number; sign: number }[] = [];
  spans.forEach(([start, end], interval) => {
    const parts = decompose(start, end);
    for (const b of parts.buckets) {
      const key = `${b.span}:${b.bucket}`;
      const entry = wanted.get(key) ?? { span: b.span, bucket: b.bucket, uses: [] };
      entry.uses.push({ interval, sign: b.sign });
      wanted.set(key, entry);
    }
    for (const r of parts.rows) edges.push({ interval, ...r });
  });

  const { db } = deps;
  const owned = and(eq(paymentCounters.ownerId, scope.ownerId), eq(paymentCounters.environment, scope.environment));
  const bySpan = new Map<BucketSpan, number[]>();
  for (const { span, bucket } of wanted.values()) bySpan.set(span, [...(bySpan.get(span) ?? []), bucket]);
  const counterReads = [...bySpan].map(([span, list]) =>
    db
      .select()
      .from(paymentCounters)
      .where(
        and(
          owned,
          eq(paymentCounters.span, span),
          sql`${paymentCounters.bucket} in (select value from json_each(${JSON.stringify(list)}))`,
        ),
      ),
  );
  const edgeReads = edges.map((edge) =>
    db
      .select({
        status: payments.status,
        paymentMethodId: payments.paymentMethodId,
        currency: payments.currency,
        count: count(),
        amountMinor: sql<number>`sum(${payments.amountMinor})`,
      })
      .from(payments)
      .where(
        and(
          eq(payments.ownerId, scope.ownerId),
          eq(payments.environment, scope.environment),
          gte(payments.createdAt, edge.from),
          lt(payments.createdAt, edge.to),
        ),
      )
      .groupBy(payments.status, payments.paymentMethodId, payments.currency),
  );
  const statements = [...counterReads, ...edgeReads];
  const results: unknown[] = statements.length === 0 ? [] : await db.batch(statements as [never, ...never[]]);

  const cells = new Map<
    string,
    { interval: number; status: PaymentStatus; currency: string; method: string; count: number; amountMinor: number }
  >();
  const add = (
    interval: number,
    row: { status: PaymentStatus; paymentMethodId: string; currency: string; count: number; amountMinor: number },
    sign: number,
  ) => {
    const method = input.groupBy === 'payment_method' ? row.paymentMethodId : '';
    const key = `${interval}|${row.status}|${row.currency}|${method}`;
    const cell = cells.get(key) ?? {
      interval,
      status: row.status,
      currency: row.currency,
      method,
      count: 0,
      amountMinor: 0,
    };
    cell.count += sign * row.count;
    cell.amountMinor += sign * row.amountMinor;
    cells.set(key, cell);
  };
  counterReads.forEach((_, i) => {
    for (const row of results[i] as (typeof paymentCounters.$inferSelect)[]) {
      for (const use of wanted.get(`${row.span}:${row.bucket}`)?.uses ?? []) add(use.interval, row, use.sign);
    }
  });
  edges.forEach((edge, i) => {
    for (const row of results[counterReads.length + i] as {
      status: PaymentStatus;
      paymentMethodId: string;
      currency: string;
      count: number;
      amountMinor: number;
    }[])
      add(edge.interval, row, edge.sign);
  });

  return [...cells.values()]
    .filter((cell) => cell.count !== 0)
    .sort(
      (a, b) =>
        a.interval - b.interval ||
        a.status.localeCompare(b.status) ||
        a.currency.localeCompare(b.currency) ||
        a.method.localeCompare(b.method),
    )
    .map((cell) => ({
      start: toIso(spans[cell.interval]![0]),
      end: toIso(spans[cell.interval]![1]),
      status: cell.status,
      currency: cell.currency,
      ...(input.groupBy === 'payment_method' ? { payment_method: cell.method } : {}),
      count: cell.count,
      amount: { value: formatAmount(cell.amountMinor, cell.currency), currency: cell.currency },
    }));
}
