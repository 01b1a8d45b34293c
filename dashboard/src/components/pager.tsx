import type { Schemas } from '../client.ts';

/** Previous and next pages of an offset-paged list, and where this page sits in it. */
export function Pager({ pagination, go }: { pagination: Schemas['Pagination']; go: (offset: number) => void }) {
  const { limit, offset, total } = pagination;
  const last = Math.min(offset + limit, total);
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled={offset === 0} onClick={() => go(Math.max(0, offset - limit))}>
        Previous page
      </button>
      <span>{total === 0 ? 'None' : `${offset + 1} to ${last} of ${total}`}</span>
      <button type="button" disabled={last >= total} onClick={() => go(offset + limit)}>
        Next page
      </button>
    </nav>
  );
}
