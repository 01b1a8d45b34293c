/**
 * The one place that walks a whole list (CSV export): page after page with the offset paging every list
 * has (`limit`, `offset`, `pagination.total`). When cursor paging lands (`starting_after`,
 * `pagination.has_more`), only this function changes: it then follows the last id instead of the offset.
 * Offsets shift while new items arrive (newest first), so an item may come twice: it is kept once, by id.
 * No DOM here: the Node tests import this module.
 */

export interface ListPage<T> {
  data: T[];
  pagination: { total: number };
}

export type Walked<T, P> = { items: T[]; problem?: undefined } | { items?: undefined; problem: P };

export const WALK_PAGE_SIZE = 100;

export async function walkList<T extends { id: string }, P>(
  fetchPage: (window: { limit: number; offset: number }) => Promise<{ data?: ListPage<T>; problem?: P }>,
  onProgress?: (walked: number, total: number) => void,
): Promise<Walked<T, P>> {
  const items = new Map<string, T>();
  let offset = 0;
  for (;;) {
    const answer = await fetchPage({ limit: WALK_PAGE_SIZE, offset });
    if (answer.problem !== undefined || !answer.data) return { problem: answer.problem as P };
    const { data, pagination } = answer.data;
    for (const item of data) if (!items.has(item.id)) items.set(item.id, item);
    offset += data.length;
    onProgress?.(items.size, pagination.total);
    if (data.length === 0 || offset >= pagination.total) return { items: [...items.values()] };
  }
}
