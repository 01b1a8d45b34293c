/**
 * The one place that walks a whole list (CSV export): page after page by cursor, each page asked for the items
 * after the last one of the page before (`starting_after`) while `pagination.has_more`. Each page costs the service
 * the same however deep the walk (an offset page reads every row it skips), and items created meanwhile come first
 * in a newest-first list, so the walk meets every item that existed when it began exactly once.
 * No DOM here: the Node tests import this module.
 */

export interface ListPage<T> {
  data: T[];
  pagination: { total: number; has_more: boolean };
}

export type Walked<T, P> = { items: T[]; problem?: undefined } | { items?: undefined; problem: P };

export const WALK_PAGE_SIZE = 100;

export async function walkList<T extends { id: string }, P>(
  fetchPage: (window: { limit: number; starting_after?: string }) => Promise<{ data?: ListPage<T>; problem?: P }>,
  onProgress?: (walked: number, total: number) => void,
): Promise<Walked<T, P>> {
  const items: T[] = [];
  let startingAfter: string | undefined;
  for (;;) {
    const window = startingAfter === undefined ? {} : { starting_after: startingAfter };
    const answer = await fetchPage({ limit: WALK_PAGE_SIZE, ...window });
    if (answer.problem !== undefined || !answer.data) return { problem: answer.problem as P };
    const { data, pagination } = answer.data;
    items.push(...data);
    onProgress?.(items.length, pagination.total);
    const last = data.at(-1);
    if (!pagination.has_more || last === undefined) return { items };
    startingAfter = last.id;
  }
}
