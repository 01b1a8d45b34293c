import { eq } from 'drizzle-orm';
import {
  newestFirstPage,
  pageBatch,
  readPage,
  type ListPage,
  type Page,
  type PageStatements,
} from '../../db/paging.ts';
import { disputes, type DisputeRow } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import type { OwnerScope } from '../../domain/caller.ts';
import { ownedPayment } from '../payments/reads.ts';

/**
 * The statements of a page of one payment's disputes; exported so a test can explain their query plans. By the
 * payment alone, so SQLite reads the payment's index, not the owner's (which it preferred when given the owner
 * too): the caller's ownership of the payment is checked in the same round trip, and its disputes are its owner's.
 */
export function paymentDisputeListStatements({ db }: Deps, paymentId: string, page: Page): PageStatements<DisputeRow> {
  return newestFirstPage(db, disputes, eq(disputes.paymentId, paymentId), undefined, page);
}

/**
 * `GET /v1/payments/{id}/disputes`: a page of one payment's disputes, newest first, with the payment's
 * ownership checked in the same round trip: null when the payment is not the caller's (missing and foreign
 * alike), whatever its disputes. A cursor is one of this payment's disputes.
 */
export async function listPaymentDisputes(
  deps: Deps,
  scope: OwnerScope,
  paymentId: string,
  page: Page,
): Promise<ListPage<DisputeRow> | null> {
  const statements = paymentDisputeListStatements(deps, paymentId, page);
  const [owned, ...results] = await deps.db.batch([ownedPayment(deps, scope, paymentId), ...pageBatch(statements)]);
  if (owned.length === 0) return null;
  return readPage(statements, results);
}
