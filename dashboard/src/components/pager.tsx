import type { Schemas } from '../client.ts';

/** Where a page of a list starts: the first page, after an item, or before one (the API's cursors). */
export interface Cursor {
  starting_after?: string;
  ending_before?: string;
}

/** The cursor a page's address carries (`?starting_after=` or `?ending_before=`), one at most. */
export function cursorOf(query: Record<string, string | undefined>): Cursor {
  if (query.starting_after) return { starting_after: query.starting_after };
  if (query.ending_before) return { ending_before: query.ending_before };
  return {};
}

/** The cursor as address parameters, to keep a page bookmarkable. */
export function setCursor(params: URLSearchParams, cursor: Cursor) {
  if (cursor.starting_after) params.set('starting_after', cursor.starting_after);
  if (cursor.ending_before) params.set('ending_before', cursor.ending_before);
}

/**
 * Previous and next pages of a list, walked by cursor: next is the page after this page's last item, previous the
 * page before its first. `has_more` tells whether the walk's own direction goes on; the other way goes on whenever the
 * page was reached by a cursor (the cursor's item lies there).
 */
export function Pager({
  page,
  cursor,
  go,
}: {
  page: { data: { id: string }[]; pagination: Schemas['Pagination'] };
  cursor: Cursor;
  go: (cursor: Cursor) => void;
}) {
  const { data, pagination } = page;
  const first = data[0]?.id;
  const last = data.at(-1)?.id;
  const backwards = cursor.ending_before !== undefined;
  const hasPrevious = backwards ? pagination.has_more : cursor.starting_after !== undefined;
  const hasNext = backwards || pagination.has_more;
  return (
    <nav class="pager" aria-label="Pages">
      <button
        type="button"
        disabled={!hasPrevious}
        onClick={() => go(first === undefined ? {} : { ending_before: first })}
      >
        Previous page
      </button>
      <span>{pagination.total === 0 ? 'None' : `Showing ${data.length} of ${pagination.total}`}</span>
      <button type="button" disabled={!hasNext || last === undefined} onClick={() => go({ starting_after: last })}>
        Next page
      </button>
    </nav>
  );
}
