import { useLocation } from 'preact-iso';
import { useState } from 'preact/hooks';
import { ask, client, useLoad } from '../api.ts';
import type { Schemas } from '../client.ts';
import { LoadState } from '../components/load-state.tsx';
import { PageTitle } from '../components/page-title.tsx';
import { cursorOf, Pager, setCursor, type Cursor } from '../components/pager.tsx';
import { ProblemNotice } from '../components/problem-notice.tsx';
import { StatusBadge } from '../components/status-badge.tsx';
import { Time, viewerTimeZone } from '../components/time.tsx';
import { toCsv } from '../csv.ts';
import { download } from '../download.ts';
import { formatMoney } from '../money.ts';
import type { Problem } from '../problem.ts';
import { PAYMENT_STATUSES, type PaymentStatus } from '../vocabulary.ts';
import { walkList } from '../walk-list.ts';

/** The filters of GET /v1/payments, kept in the address so a view can be bookmarked and shared. */
const FILTERS = ['status', 'payment_method', 'external_reference', 'created_gte', 'created_lt'] as const;
type Filters = Partial<Record<(typeof FILTERS)[number], string>>;
const PAGE_SIZE = 50;

function filtersOf(query: Record<string, string>): Filters {
  const filters: Filters = {};
  for (const name of FILTERS) if (query[name]) filters[name] = query[name];
  return filters;
}

const listQuery = (filters: Filters) => ({ ...filters, status: filters.status as PaymentStatus | undefined });

/** An instant (ISO 8601) as a `datetime-local` value in the viewer's time zone, and back. */
function toLocalInput(iso: string | undefined): string {
  const date = iso ? new Date(iso) : null;
  if (!date || Number.isNaN(date.getTime())) return '';
  return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}
const fromLocalInput = (value: string) => (value ? new Date(value).toISOString() : '');
/**
 * A range's edge as the form sends it: the address's own instant while its field still shows it (the field holds
 * minutes, an address may hold milliseconds: applying another filter must not move the range), else the field's.
 */
const rangeEdge = (current: string | undefined, field: string) =>
  current && field === toLocalInput(current) ? current : fromLocalInput(field);

const CSV_HEADER = [
  'id',
  'created_at',
  'status',
  'amount',
  'currency',
  'external_reference',
  'payment_method',
  'processor_reference',
  'description',
  'fee',
  'net',
  'charged_back_at',
];
const csvRow = (p: Schemas['Payment']) => [
  p.id,
  p.created_at,
  p.status,
  p.amount.value,
  p.amount.currency,
  p.external_reference,
  p.payment_method,
  p.processor_reference,
  p.description,
  p.settlement?.fee.value,
  p.settlement?.net.value,
  p.charged_back_at,
];

/** CSV of every payment the filters select, walked page by page (walk-list.ts). */
function ExportCsv({ filters }: { filters: Filters }) {
  const [progress, setProgress] = useState<string>('');
  const [problem, setProblem] = useState<Problem>();
  const [busy, setBusy] = useState(false);
  const run = async () => {
    setBusy(true);
    setProblem(undefined);
    setProgress('Exporting…');
    const walked = await walkList(
      (window) => ask(client.GET('/v1/payments', { params: { query: { ...listQuery(filters), ...window } } })),
      (done, total) => setProgress(`Exported ${done} of ${total}…`),
    );
    setBusy(false);
    if (walked.problem) {
      setProgress('');
      setProblem(walked.problem);
      return;
    }
    download(`payments-${new Date().toISOString().slice(0, 10)}.csv`, toCsv([CSV_HEADER, ...walked.items.map(csvRow)]));
    setProgress(`Exported ${walked.items.length} ${walked.items.length === 1 ? 'payment' : 'payments'}.`);
  };
  return (
    <div class="row">
      <button type="button" onClick={run} disabled={busy}>
        Export CSV
      </button>
      <span role="status" class="hint">
        {progress}
      </span>
      {problem && <ProblemNotice problem={problem} onRetry={run} />}
    </div>
  );
}

/** GET /v1/payments with its filters; CSV export of the whole filtered list. */
export function Payments() {
  const { query, route } = useLocation();
  const filters = filtersOf(query);
  const cursor = cursorOf(query);
  const key = JSON.stringify([filters, cursor]);
  const methods = useLoad(
    () => ask(client.GET('/v1/account/payment-methods', { params: { query: { limit: 100 } } })),
    [],
  );
  const list = useLoad(
    () =>
      ask(client.GET('/v1/payments', { params: { query: { ...listQuery(filters), limit: PAGE_SIZE, ...cursor } } })),
    [key],
  );
  const methodName = (id: string) => methods.data?.data.find((m) => m.id === id)?.name ?? id;
  // The address's method stays a choice while the methods load, or if it is not among them (the first 100).
  const methodOptions = (methods.data?.data ?? []).map((m) => ({ id: m.id, text: `${m.name} (${m.type})` }));
  if (filters.payment_method && !methodOptions.some((m) => m.id === filters.payment_method))
    methodOptions.push({ id: filters.payment_method, text: filters.payment_method });
  const go = (next: Filters, nextCursor: Cursor = {}) => {
    const params = new URLSearchParams(Object.entries(next).filter(([, value]) => value) as [string, string][]);
    setCursor(params, nextCursor);
    const search = params.toString();
    route(`/dashboard/payments${search ? `?${search}` : ''}`);
  };
  const apply = (event: SubmitEvent) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const text = (name: string) => String(form.get(name) ?? '').trim();
    go({
      status: text('status'),
      payment_method: text('payment_method'),
      external_reference: text('external_reference'),
      created_gte: rangeEdge(filters.created_gte, text('created_gte')),
      created_lt: rangeEdge(filters.created_lt, text('created_lt')),
    });
  };
  return (
    <>
      <PageTitle title="Payments" />
      <form class="filters" onSubmit={apply} key={key} aria-label="Filters">
        {/* A select has no default value of its own: the address's choice is its option's `selected`. */}
        <label>
          Status
          <select name="status">
            <option value="">Any</option>
            {PAYMENT_STATUSES.map((status) => (
              <option key={status} value={status} selected={filters.status === status}>
                {status.replaceAll('_', ' ')}
              </option>
            ))}
          </select>
        </label>
        <label>
          Payment method
          <select name="payment_method">
            <option value="">Any</option>
            {methodOptions.map(({ id, text }) => (
              <option key={id} value={id} selected={filters.payment_method === id}>
                {text}
              </option>
            ))}
          </select>
        </label>
        <label>
          External reference
          <input name="external_reference" defaultValue={filters.external_reference ?? ''} />
        </label>
        <label>
          Created from
          <input name="created_gte" type="datetime-local" defaultValue={toLocalInput(filters.created_gte)} />
        </label>
        <label>
          Created before
          <input name="created_lt" type="datetime-local" defaultValue={toLocalInput(filters.created_lt)} />
        </label>
        <button type="submit" class="primary">
          Apply filters
        </button>
        <button type="button" onClick={() => go({})}>
          Clear filters
        </button>
      </form>
      <ExportCsv filters={filters} />
      <p class="hint">Times in {viewerTimeZone} (your time zone); hover a time for UTC.</p>
      <LoadState state={list}>
        {(page) => (
          <>
            <table>
              <caption class="visually-hidden">Payments, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Created</th>
                  <th scope="col" class="num">
                    Amount
                  </th>
                  <th scope="col">Status</th>
                  <th scope="col">External reference</th>
                  <th scope="col">Method</th>
                  <th scope="col">Payment</th>
                </tr>
              </thead>
              <tbody>
                {page.data.map((payment) => (
                  <tr key={payment.id}>
                    <td>
                      <Time iso={payment.created_at} />
                    </td>
                    <td class="num">{formatMoney(payment.amount)}</td>
                    <td>
                      <StatusBadge status={payment.status} />
                    </td>
                    <td>{payment.external_reference}</td>
                    <td>{methodName(payment.payment_method)}</td>
                    <td>
                      <a href={`/dashboard/payments/${payment.id}`} class="mono">
                        {payment.id}
                      </a>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            {page.data.length === 0 && <p>No payment matches these filters.</p>}
            <Pager page={page} cursor={cursor} go={(next) => go(filters, next)} />
          </>
        )}
      </LoadState>
    </>
  );
}
