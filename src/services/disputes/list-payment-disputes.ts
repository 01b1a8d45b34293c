import { and, eq } from 'drizzle-orm';
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

/** The statements of a page of one payment's disputes; exported so a test can explain their query plans. */
export function paymentDisputeListStatements(
  { db }: Deps,
  scope: OwnerScope,
  paymentId: string,
  page: Page,
): PageStatements<DisputeRow> {
  const ofPayment = and(
    eq(disputes.paymentId, paymentId),
    eq(disputes.ownerId, scope.ownerId),
    eq(disputes.environment, scope.environment),
  );
  return newestFirstPage(db, disputes, ofPayment, undefined, page);
}

/**
 * `GET /v1/payments/{id}/disputes`: a page of one payment's disputes, newest first, with the payment's
 * ownership checked in the same round trip: null when the payment is not the caller's (missing and foreign
 * alike). The disputes are kept to the owner and environment too (every dispute row carries them); a cursor
 * is one of this payment's disputes.
 */
export async function listPaymentDisputes(
  deps: Deps,
  scope: OwnerScope,
  paymentId: string,
  page: Page,
): Promise<ListPage<DisputeRow> | null> {
  const statements = paymentDisputeListStatements(deps, scope, paymentId, page);
  const [owned, ...results] = await deps.db.batch([ownedPayment(deps, scope, paymentId), ...pageBatch(statements)]);
  if (owned.length === 0) return null;
  return readPage(statements, results);
}
