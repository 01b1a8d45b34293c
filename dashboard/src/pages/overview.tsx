import { ask, client, useLoad } from '../api.ts';
import { LoadState } from '../components/load-state.tsx';
import { PageTitle } from '../components/page-title.tsx';
import type { Answer } from '../problem.ts';
import { PAYMENT_STATUSES, type PaymentStatus } from '../vocabulary.ts';

const DAYS = 30;

interface Counts {
  since: string;
  byStatus: { status: PaymentStatus; count: number }[];
  needsResponse: number;
}

/**
 * How many payments of the last 30 days are in each status: one list call per status, read for its
 * `pagination.total` (a page of one). The amounts per status come with the payments report
 * (GET /v1/reports/payments), which this API version does not have yet.
 */
async function loadCounts(): Promise<Answer<Counts>> {
  const since = new Date(Date.now() - DAYS * 86_400_000).toISOString();
  const totals = await Promise.all([
    ...PAYMENT_STATUSES.map((status) =>
      ask(client.GET('/v1/payments', { params: { query: { status, created_gte: since, limit: 1 } } })),
    ),
    ask(client.GET('/v1/disputes', { params: { query: { status: 'needs_response', limit: 1 } } })),
    ask(client.GET('/v1/disputes', { params: { query: { status: 'warning_needs_response', limit: 1 } } })),
  ]);
  const failed = totals.find((answer) => answer.problem);
  if (failed?.problem) return { problem: failed.problem };
  const count = (i: number) => totals[i]?.data?.pagination.total ?? 0;
  return {
    data: {
      since,
      byStatus: PAYMENT_STATUSES.map((status, i) => ({ status, count: count(i) })),
      needsResponse: count(PAYMENT_STATUSES.length) + count(PAYMENT_STATUSES.length + 1),
    },
    status: 200,
  };
}

const BAR_HEIGHT = 22;
const LABEL_WIDTH = 150;
const CHART_WIDTH = 600;

/** Horizontal bars, one per status; the table beside it holds the same numbers for every reader. */
function StatusChart({ byStatus }: { byStatus: Counts['byStatus'] }) {
  const most = Math.max(1, ...byStatus.map((row) => row.count));
  const scale = (CHART_WIDTH - LABEL_WIDTH - 60) / most;
  return (
    <svg
      class="chart"
      viewBox={`0 0 ${CHART_WIDTH} ${byStatus.length * BAR_HEIGHT + 4}`}
      role="img"
      aria-label="Payments of the last 30 days by status (the numbers are in the table below)"
    >
      {byStatus.map((row, i) => {
        const y = i * BAR_HEIGHT + 2;
        const width = row.count * scale;
        return (
          <g key={row.status}>
            <text x={LABEL_WIDTH - 8} y={y + 15} text-anchor="end">
              {row.status.replaceAll('_', ' ')}
            </text>
            <rect
              class="bar"
              x={LABEL_WIDTH}
              y={y + 3}
              width={Math.max(width, row.count > 0 ? 2 : 0)}
              height={BAR_HEIGHT - 6}
            />
            <text x={LABEL_WIDTH + width + 6} y={y + 15}>
              {row.count}
            </text>
          </g>
        );
      })}
    </svg>
  );
}

export function Overview() {
  const counts = useLoad(loadCounts, []);
  return (
    <>
      <PageTitle title="Overview" />
      <LoadState state={counts}>
        {({ byStatus, since, needsResponse }) => {
          const total = byStatus.reduce((sum, row) => sum + row.count, 0);
          return (
            <>
              <section class="card" aria-labelledby="last-30-title">
                <h2 id="last-30-title">Payments of the last {DAYS} days</h2>
                <p>
                  {total} payments since {new Date(since).toLocaleDateString()}.{' '}
                  <a href={`/dashboard/payments?created_gte=${encodeURIComponent(since)}`}>List them</a>
                </p>
                <StatusChart byStatus={byStatus} />
                <table>
                  <caption class="visually-hidden">Payments of the last {DAYS} days by status</caption>
                  <thead>
                    <tr>
                      <th scope="col">Status</th>
                      <th scope="col" class="num">
                        Payments
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {byStatus.map((row) => (
                      <tr key={row.status}>
                        <td>
                          <a href={`/dashboard/payments?status=${row.status}&created_gte=${encodeURIComponent(since)}`}>
                            {row.status.replaceAll('_', ' ')}
                          </a>
                        </td>
                        <td class="num">{row.count}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
                <p class="hint">Amounts by status arrive with the payments report; these are counts of the list.</p>
              </section>
              <section class="card" aria-labelledby="disputes-title">
                <h2 id="disputes-title">Disputes waiting on you</h2>
                <p>
                  {needsResponse} {needsResponse === 1 ? 'dispute needs' : 'disputes need'} a response.{' '}
                  <a href="/dashboard/disputes?status=needs_response">See them</a>
                </p>
              </section>
            </>
          );
        }}
      </LoadState>
    </>
  );
}
