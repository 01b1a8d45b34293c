import type { Schemas } from './schemas.ts';
import { digitsOf, toMinor } from './money.ts';
import { PAYMENT_STATUSES, type PaymentStatus } from './vocabulary.ts';

/**
 * The overview's numbers, from one payments report (GET /v1/reports/payments, `interval=day` in the viewer's time
 * zone): per status, the count and the amount in each currency; per currency, one entry per day of the range, the
 * days without payments included (the report leaves them out). Sums are integer minor units (bigint), written
 * back with the currency's digits as the API writes them. No DOM here: the Node tests import this module.
 */
export type ReportRow = Schemas['PaymentsReportRow'];

/** Payments that were approved, whatever refunds did to them since: the money that moved. */
export const APPROVED_STATUSES: ReadonlySet<PaymentStatus> = new Set(['approved', 'partially_refunded', 'refunded']);

export interface Tally {
  count: number;
  minor: bigint;
}

export interface DayTally {
  /** The calendar day, `YYYY-MM-DD`, in the time zone the report was asked in. */
  day: string;
  all: Tally;
  approved: Tally;
}

export interface CurrencyReport {
  currency: string;
  /** The currency's minor digits, as the API writes its amounts. */
  digits: number;
  total: Tally;
  days: DayTally[];
}

export interface StatusTally {
  status: PaymentStatus;
  count: number;
  /** Minor units per currency. */
  amounts: Map<string, bigint>;
}

export interface ReportSummary {
  byStatus: StatusTally[];
  currencies: CurrencyReport[];
}

/** `count` calendar days from `first` (`YYYY-MM-DD`), as keys: calendar arithmetic, whatever the zone's clocks do. */
export function calendarDays(first: string, count: number): string[] {
  const [year, month, day] = first.split('-').map(Number) as [number, number, number];
  return Array.from({ length: count }, (_, i) =>
    new Date(Date.UTC(year, month - 1, day + i)).toISOString().slice(0, 10),
  );
}

/** The calendar day (`YYYY-MM-DD`) of an instant in `timeZone`. */
export function dayIn(timeZone: string): (iso: string) => string {
  const format = new Intl.DateTimeFormat('en-US', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
  return (iso) => {
    const parts = Object.fromEntries(format.formatToParts(new Date(iso)).map((part) => [part.type, part.value]));
    return `${parts.year}-${parts.month}-${parts.day}`;
  };
}

/**
 * The last `days` days of the viewer, today included, as a report's range: from the local midnight `days - 1` days
 * ago to the next local midnight (so the range, and the query, stay the same all day). Local time is the browser's,
 * the zone `Intl.DateTimeFormat().resolvedOptions().timeZone` names.
 */
export function lastDays(now: Date, days: number): { created_gte: string; created_lt: string } {
  const [year, month, day] = [now.getFullYear(), now.getMonth(), now.getDate()];
  return {
    created_gte: new Date(year, month, day - (days - 1)).toISOString(),
    created_lt: new Date(year, month, day + 1).toISOString(),
  };
}

const add = (tally: Tally, count: number, minor: bigint) => {
  tally.count += count;
  tally.minor += minor;
};
const zero = (): Tally => ({ count: 0, minor: 0n });

/** The report's rows added up per status and per currency and day (`days` in order; `dayOf` names a row's day). */
export function summarize(
  rows: readonly ReportRow[],
  days: readonly string[],
  dayOf: (iso: string) => string,
): ReportSummary {
  const byStatus = new Map<PaymentStatus, StatusTally>(
    PAYMENT_STATUSES.map((status) => [status, { status, count: 0, amounts: new Map() }]),
  );
  const currencies = new Map<string, CurrencyReport>();
  const dayIndex = new Map<string, Map<string, DayTally>>();
  for (const row of rows) {
    const { currency } = row.amount;
    let report = currencies.get(currency);
    if (!report) {
      report = {
        currency,
        digits: digitsOf(row.amount.value),
        total: zero(),
        days: days.map((day) => ({ day, all: zero(), approved: zero() })),
      };
      currencies.set(currency, report);
      dayIndex.set(currency, new Map(report.days.map((entry) => [entry.day, entry])));
    }
    const minor = toMinor(row.amount.value, report.digits) ?? 0n;
    const status = byStatus.get(row.status);
    if (status) {
      status.count += row.count;
      status.amounts.set(currency, (status.amounts.get(currency) ?? 0n) + minor);
    }
    add(report.total, row.count, minor);
    const day = dayIndex.get(currency)?.get(dayOf(row.start));
    if (day) {
      add(day.all, row.count, minor);
      if (APPROVED_STATUSES.has(row.status)) add(day.approved, row.count, minor);
    }
  }
  return {
    byStatus: [...byStatus.values()],
    // The currency with the most payments first.
    currencies: [...currencies.values()].sort(
      (a, b) => b.total.count - a.total.count || a.currency.localeCompare(b.currency),
    ),
  };
}
