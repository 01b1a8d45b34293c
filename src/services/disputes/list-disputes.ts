import { fetchPage, ownedListStatements, type Page, type PageStatements } from '../../db/paging.ts';
import { disputes, type DisputeRow } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import { disputesTotal } from '../counters/totals.ts';
import type { OwnerScope } from '../../domain/caller.ts';
import type { DisputeStatus } from '../../domain/disputes.ts';

/** `GET /v1/disputes`: the owner's disputes in this environment, newest first, whole or of one status. */
export interface DisputeFilters {
  status?: DisputeStatus;
}

/** The statements of a page of the owner's disputes; exported so a test can explain their query plans. */
export function disputeListStatements(
  { db }: Deps,
  scope: OwnerScope,
  filters: DisputeFilters,
  page: Page,
): PageStatements<DisputeRow> {
  const total = disputesTotal(db, scope, filters);
  return ownedListStatements(db, disputes, scope, [[disputes.status, filters.status]], {}, page, total);
}

export function listDisputes(deps: Deps, scope: OwnerScope, filters: DisputeFilters, page: Page) {
  return fetchPage(deps.db, disputeListStatements(deps, scope, filters, page));
}
