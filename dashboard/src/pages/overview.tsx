import { ask, client, useLoad } from '../api.ts';
import { LoadState } from '../components/load-state.tsx';
import { PageTitle } from '../components/page-title.tsx';
import { viewerTimeZone } from '../components/time.tsx';
import { formatMoney, fromMinor } from '../money.ts';
import type { Answer } from '../problem.ts';
import {
  APPROVED_STATUSES,
  type CurrencyReport,
  calendarDays,
  dayIn,
  lastDays,
  type ReportSummary,
  summarize,
} from '../report.ts';

const DAYS = 30;

interface Overview extends ReportSummary {
  range: { created_gte: string; created_lt: string };
  days: string[];
}

/**
 * The last 30 days of the viewer's calendar, today included, in one payments report (GET /v1/reports/payments):
 * a row per day of the viewer's time zone, status and currency, each with its count and amount, read from the
 * service's counters (its cost does not grow with the number of payments).
 */
async function loadOverview(): Promise<Answer<Overview>> {
  const range = lastDays(new Date(), DAYS);
  const answer = await ask(
    client.GET('/v1/reports/payments', { params: { query: { ...range, interval: 'day', tz: viewerTimeZone } } }),
  );
  if (answer.problem) return { problem: answer.problem };
  const dayOf = dayIn(viewerTimeZone);
  const days = calendarDays(dayOf(range.created_gte), DAYS);
  return { data: { range, days, ...summarize(answer.data.data, days, dayOf) }, status: answer.status };
}

const WAITING = ['needs_response', 'warning_needs_response'] as const;
type Waiting = { status: (typeof WAITING)[number]; count: number };

/**
 * Disputes waiting for the merchant's evidence: the list's total of each status that needs a response (a dispute
 * and an inquiry, which the disputes page filters one at a time).
 */
async function loadNeedsResponse(): Promise<Answer<Waiting[]>> {
  const totals = await Promise.all(
    WAITING.map((status) => ask(client.GET('/v1/disputes', { params: { query: { status, limit: 1 } } }))),
  );
  const waiting: Waiting[] = [];
  for (const [i, answer] of totals.entries()) {
    if (answer.problem) return { problem: answer.problem };
    waiting.push({ status: WAITING[i]!, count: answer.data.pagination.total });
  }
  return { data: waiting, status: 200 };
}

const money = (minor: bigint, report: Pick<CurrencyReport, 'currency' | 'digits'>) =>
  formatMoney({ value: fromMinor(minor, report.digits), currency: report.currency });
/** A day key (`YYYY-MM-DD`) as a person reads it; the key is a calendar day, so it is formatted as one (in UTC). */
const DAY_TEXT = new Intl.DateTimeFormat(undefined, {
  timeZone: 'UTC',
  weekday: 'short',
  month: 'short',
  day: 'numeric',
});
const AXIS_TEXT = new Intl.DateTimeFormat(undefined, { timeZone: 'UTC', month: 'short', day: 'numeric' });
const dayDate = (day: string) => new Date(`${day}T12:00:00Z`);
const plural = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;

const WIDTH = 720;
const AMOUNT_TOP = 22;
const AMOUNT_HEIGHT = 110;
const COUNT_TOP = AMOUNT_TOP + AMOUNT_HEIGHT + 30;
const COUNT_HEIGHT = 60;
const AXIS_Y = COUNT_TOP + COUNT_HEIGHT + 16;

/**
 * One currency's days: the amount of each day's payments above, their count below, the approved part of each bar
 * dark. Each bar names its numbers on hover; the table after the chart holds them all for every reader.
 */
function DailyChart({ report }: { report: CurrencyReport }) {
  const slot = WIDTH / report.days.length;
  // Bigints have no Math.max.
  const most = { minor: 1n, count: 1 };
  for (const d of report.days) {
    if (d.all.minor > most.minor) most.minor = d.all.minor;
    if (d.all.count > most.count) most.count = d.all.count;
  }
  const bar = (value: number, max: number, top: number, height: number, x: number, tone: string) => {
    const h = value > 0 ? Math.max(1, (value / max) * height) : 0;
    return <rect class={tone} x={x + slot * 0.15} y={top + height - h} width={slot * 0.7} height={h} />;
  };
  const amountBar = (minor: bigint, x: number, tone: string) =>
    bar(Number(minor), Number(most.minor), AMOUNT_TOP, AMOUNT_HEIGHT, x, tone);
  const countBar = (count: number, x: number, tone: string) => bar(count, most.count, COUNT_TOP, COUNT_HEIGHT, x, tone);
  return (
    <svg
      class="chart"
      viewBox={`0 0 ${WIDTH} ${AXIS_Y + 6}`}
      role="img"
      aria-label={`${report.currency} per day of the last ${DAYS} days: amount and number of payments, approved ones darker (the numbers are in the table "${report.currency} per day")`}
    >
      <text x={0} y={AMOUNT_TOP - 8}>
        Amount (highest day {money(most.minor, report)})
      </text>
      <text x={0} y={COUNT_TOP - 8}>
        Payments (highest day {most.count})
      </text>
      {report.days.map((d, i) => {
        const x = i * slot;
        return (
          <g key={d.day}>
            <title>
              {`${DAY_TEXT.format(dayDate(d.day))}: ${plural(d.all.count, 'payment', 'payments')} (${d.approved.count} approved), ${money(d.all.minor, report)} (${money(d.approved.minor, report)} approved)`}
            </title>
            {amountBar(d.all.minor, x, 'bar-other')}
            {amountBar(d.approved.minor, x, 'bar')}
            {countBar(d.all.count, x, 'bar-other')}
            {countBar(d.approved.count, x, 'bar')}
            {/* Today and every seventh day before it; today's label ends at the chart's edge. */}
            {(report.days.length - 1 - i) % 7 === 0 ? (
              <text
                x={i === report.days.length - 1 ? x + slot : x + slot / 2}
                y={AXIS_Y}
                text-anchor={i === report.days.length - 1 ? 'end' : 'middle'}
              >
                {AXIS_TEXT.format(dayDate(d.day))}
              </text>
            ) : null}
          </g>
        );
      })}
    </svg>
  );
}

function CurrencyDays({ report }: { report: CurrencyReport }) {
  const title = `${report.currency} per day`;
  return (
    <section class="card" aria-label={title}>
      <h3>
        {report.currency}: {plural(report.total.count, 'payment', 'payments')}, {money(report.total.minor, report)}
      </h3>
      <DailyChart report={report} />
      <ul class="legend">
        <li>
          <span class="swatch approved" aria-hidden="true" /> Approved (refunded later included)
        </li>
        <li>
          <span class="swatch other" aria-hidden="true" /> Any other status
        </li>
      </ul>
      <details>
        <summary>{title}, as a table</summary>
        <table>
          <caption class="visually-hidden">{title}</caption>
          <thead>
            <tr>
              <th scope="col">Day</th>
              <th scope="col" class="num">
                Payments
              </th>
              <th scope="col" class="num">
                Approved
              </th>
              <th scope="col" class="num">
                Amount
              </th>
              <th scope="col" class="num">
                Approved amount
              </th>
            </tr>
          </thead>
          <tbody>
            {report.days.map((d) => (
              <tr key={d.day}>
                <th scope="row">
                  <time dateTime={d.day}>{DAY_TEXT.format(dayDate(d.day))}</time>
                </th>
                <td class="num">{d.all.count}</td>
                <td class="num">{d.approved.count}</td>
                <td class="num">{money(d.all.minor, report)}</td>
                <td class="num">{money(d.approved.minor, report)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </section>
  );
}

const STATUS_ROW = 24;
const STATUS_LABEL = 150;
const STATUS_COUNT_TEXT = 60;

/**
 * The last 30 days by status: one bar per status, as long as its count, its amounts in every currency on hover
 * (counts add up across currencies, amounts do not). The table beside it holds every number for every reader.
 */
function StatusChart({ overview }: { overview: Overview }) {
  const { byStatus, currencies } = overview;
  const most = Math.max(1, ...byStatus.map((row) => row.count));
  const room = WIDTH - STATUS_LABEL - STATUS_COUNT_TEXT;
  return (
    <svg
      class="chart"
      viewBox={`0 0 ${WIDTH} ${byStatus.length * STATUS_ROW}`}
      role="img"
      aria-label={`Payments of the last ${DAYS} days by status: their number as bars (the numbers and amounts are in the table "Payments of the last ${DAYS} days by status")`}
    >
      {byStatus.map((row, i) => {
        const y = i * STATUS_ROW;
        const length = row.count > 0 ? Math.max(1, (row.count / most) * room) : 0;
        const amounts = currencies.map((c) => money(row.amounts.get(c.currency) ?? 0n, c)).join(', ');
        const label = row.status.replaceAll('_', ' ');
        return (
          <g key={row.status}>
            <title>{`${label}: ${plural(row.count, 'payment', 'payments')}${amounts ? `, ${amounts}` : ''}`}</title>
            <text x={STATUS_LABEL - 8} y={y + STATUS_ROW * 0.68} text-anchor="end">
              {label}
            </text>
            <rect
              class={APPROVED_STATUSES.has(row.status) ? 'bar' : 'bar-other'}
              x={STATUS_LABEL}
              y={y + STATUS_ROW * 0.15}
              width={length}
              height={STATUS_ROW * 0.7}
            />
            <text x={STATUS_LABEL + length + 6} y={y + STATUS_ROW * 0.68}>
              {row.count}
            </text>
          </g>
        );
      })}
    </svg>
  );
}

function ByStatus({ overview, listed }: { overview: Overview; listed: (status?: string) => string }) {
  const { byStatus, currencies } = overview;
  return (
    <table>
      <caption class="visually-hidden">Payments of the last {DAYS} days by status</caption>
      <thead>
        <tr>
          <th scope="col">Status</th>
          <th scope="col" class="num">
            Payments
          </th>
          {currencies.map((c) => (
            <th scope="col" class="num" key={c.currency}>
              Amount ({c.currency})
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {byStatus.map((row) => (
          <tr key={row.status}>
            <th scope="row">
              <a href={listed(row.status)}>{row.status.replaceAll('_', ' ')}</a>
            </th>
            <td class="num">{row.count}</td>
            {currencies.map((c) => (
              <td class="num" key={c.currency}>
                {money(row.amounts.get(c.currency) ?? 0n, c)}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
      <tfoot>
        <tr>
          <th scope="row">All</th>
          <td class="num">{currencies.reduce((sum, c) => sum + c.total.count, 0)}</td>
          {currencies.map((c) => (
            <td class="num" key={c.currency}>
              {money(c.total.minor, c)}
            </td>
          ))}
        </tr>
      </tfoot>
    </table>
  );
}

export function Overview() {
  const overview = useLoad(loadOverview, []);
  const needsResponse = useLoad(loadNeedsResponse, []);
  return (
    <>
      <PageTitle title="Overview" />
      <section class="card" aria-labelledby="last-30-title">
        <h2 id="last-30-title">Payments of the last {DAYS} days</h2>
        <LoadState state={overview}>
          {(data) => {
            const listed = (status?: string) =>
              `/dashboard/payments?${new URLSearchParams({ ...(status ? { status } : {}), ...data.range })}`;
            const total = data.currencies.reduce((sum, c) => sum + c.total.count, 0);
            return (
              <>
                <p>
                  {plural(total, 'payment', 'payments')} from {DAY_TEXT.format(dayDate(data.days[0] ?? ''))} to today,
                  by the days of {viewerTimeZone} (your time zone). <a href={listed()}>List them</a>
                </p>
                <StatusChart overview={data} />
                <ByStatus overview={data} listed={listed} />
                {data.currencies.map((report) => (
                  <CurrencyDays key={report.currency} report={report} />
                ))}
              </>
            );
          }}
        </LoadState>
      </section>
      <section class="card" aria-labelledby="disputes-title">
        <h2 id="disputes-title">Disputes waiting on you</h2>
        <LoadState state={needsResponse}>
          {(waiting) => (
            <ul class="plain">
              {waiting.map(({ status, count }) => (
                <li key={status}>
                  {status === 'needs_response'
                    ? `${plural(count, 'dispute needs', 'disputes need')} a response.`
                    : `${plural(count, 'inquiry needs', 'inquiries need')} a response (an inquiry may become a chargeback).`}{' '}
                  {count > 0 && (
                    <a href={`/dashboard/disputes?status=${status}`}>
                      See {count === 1 ? 'it' : 'them'}
                      <span class="visually-hidden">
                        {status === 'needs_response' ? ' (disputes)' : ' (inquiries)'}
                      </span>
                    </a>
                  )}
                </li>
              ))}
            </ul>
          )}
        </LoadState>
      </section>
    </>
  );
}
