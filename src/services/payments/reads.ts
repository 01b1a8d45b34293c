import { and, eq } from 'drizzle-orm';
import {
  fetchPage,
  ownedListStatements,
  newestFirstPage,
  pageBatch,
  readPage,
  type CreatedRange,
  type ListPage,
  type Page,
  type PageStatements,
} from '../../db/paging.ts';
import { payments, refunds, type PaymentRow, type RefundRow } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import { paymentsTotal } from '../counters/totals.ts';
import type { PaymentStatus } from '../../domain/payment-state.ts';
import type { OwnerScope } from '../../domain/caller.ts';

/**
 * The merchant's read side of payments and refunds: lists and lookups, always within the caller's owner
 * and environment. Lists are newest first (db/paging.ts), served by the indexes of db/schema/payments.ts.
 */

export interface PaymentFilters extends CreatedRange {
  externalReference?: string;
  status?: PaymentStatus;
  paymentMethodId?: string;
}

/** The statements of a page of payments; exported so a test can explain their query plans. */
export function paymentListStatements(
  { db }: Deps,
  scope: OwnerScope,
  filters: PaymentFilters,
  page: Page,
): PageStatements<PaymentRow> {
  const { externalReference, status, paymentMethodId } = filters;
  const columns = [
    [payments.externalReference, externalReference],
    [payments.status, status],
    [payments.paymentMethodId, paymentMethodId],
  ] as const;
  return ownedListStatements(db, payments, scope, columns, filters, page, paymentsTotal(db, scope, filters));
}

export function listPayments(deps: Deps, scope: OwnerScope, filters: PaymentFilters, page: Page) {
  return fetchPage(deps.db, paymentListStatements(deps, scope, filters, page));
}

/** The payment's id when it is the caller's: batched with a read of its children, to tell 404 from empty. */
export const ownedPayment = ({ db }: Deps, scope: OwnerScope, paymentId: string) =>
  db
    .select({ id: payments.id })
    .from(payments)
    .where(
      and(eq(payments.id, paymentId), eq(payments.ownerId, scope.ownerId), eq(payments.environment, scope.environment)),
    );

/** The refunds of the statements' payment, kept to its owner too (refunds carry `owner_id`). */
const refundsOf = (scope: OwnerScope, paymentId: string) =>
  and(eq(refunds.paymentId, paymentId), eq(refunds.ownerId, scope.ownerId));

/** The statements of a page of a payment's refunds; exported so a test can explain their query plans. */
export const refundListStatements = ({ db }: Deps, scope: OwnerScope, paymentId: string, page: Page) =>
  newestFirstPage(db, refunds, refundsOf(scope, paymentId), undefined, page);

/**
 * A page of a payment's refunds, with the payment's existence checked in the same round trip: null when
 * the payment is not the caller's (missing and foreign alike). A cursor is one of this payment's refunds.
 */
export async function listRefunds(
  deps: Deps,
  scope: OwnerScope,
  paymentId: string,
  page: Page,
): Promise<ListPage<RefundRow> | null> {
  const statements = refundListStatements(deps, scope, paymentId, page);
  const [owned, ...results] = await deps.db.batch([ownedPayment(deps, scope, paymentId), ...pageBatch(statements)]);
  if (owned.length === 0) return null;
  return readPage(statements, results);
}

/** One refund of the caller's payment: `paymentFound` false when the payment is not the caller's, `refund` null when it has no such refund. */
export async function findRefund(
  deps: Deps,
  scope: OwnerScope,
  paymentId: string,
  refundId: string,
): Promise<{ paymentFound: boolean; refund: RefundRow | null }> {
  const { db } = deps;
  const [owned, found] = await db.batch([
    ownedPayment(deps, scope, paymentId),
    db
      .select()
      .from(refunds)
      .where(and(eq(refunds.id, refundId), refundsOf(scope, paymentId))),
  ]);
  return { paymentFound: owned.length > 0, refund: owned.length > 0 ? (found[0] ?? null) : null };
}
