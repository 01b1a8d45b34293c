import { useLocation } from 'preact-iso';
import { ask, client, useLoad } from '../api.ts';
import { DisputeRows } from '../components/dispute-rows.tsx';
import { LoadState } from '../components/load-state.tsx';
import { PageTitle } from '../components/page-title.tsx';
import { cursorOf, Pager, setCursor, type Cursor } from '../components/pager.tsx';
import { viewerTimeZone } from '../components/time.tsx';
import { DISPUTE_STATUSES, type DisputeStatus } from '../vocabulary.ts';

/** GET /v1/disputes, filtered by status (kept in the address), the evidence due date counting down. */
export function Disputes() {
  const { query, route } = useLocation();
  const status = query.status || undefined;
  const cursor = cursorOf(query);
  const list = useLoad(
    () =>
      ask(
        client.GET('/v1/disputes', {
          params: { query: { status: status as DisputeStatus | undefined, limit: 50, ...cursor } },
        }),
      ),
    [status, cursor.starting_after, cursor.ending_before],
  );
  const go = (nextStatus: string | undefined, nextCursor: Cursor = {}) => {
    const params = new URLSearchParams();
    if (nextStatus) params.set('status', nextStatus);
    setCursor(params, nextCursor);
    const search = params.toString();
    route(`/dashboard/disputes${search ? `?${search}` : ''}`);
  };
  return (
    <>
      <PageTitle title="Disputes" />
      <form class="filters" aria-label="Filters" onSubmit={(event) => event.preventDefault()}>
        <label>
          Status
          <select value={status ?? ''} onChange={(event) => go(event.currentTarget.value || undefined)}>
            <option value="">Any</option>
            {DISPUTE_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s.replaceAll('_', ' ')}
              </option>
            ))}
          </select>
        </label>
      </form>
      <p class="hint">
        Evidence is submitted at the processor, before the date shown. Times in {viewerTimeZone}; hover for UTC.
      </p>
      <LoadState state={list}>
        {(page) => (
          <>
            {page.data.length === 0 ? <p>No disputes.</p> : <DisputeRows disputes={page.data} showPayment />}
            <Pager page={page} cursor={cursor} go={(next) => go(status, next)} />
          </>
        )}
      </LoadState>
    </>
  );
}
