import { and, eq } from 'drizzle-orm';
import { newestFirstPage, type Page } from '../../db/paging.ts';
import { disputes, type DisputeRow } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import type { OwnerScope } from '../../domain/caller.ts';
import { ownedPayment } from '../payments/reads.ts';

/**
 * `GET /v1/payments/{id}/disputes`: a page of one payment's disputes, newest first, with the payment's
 * ownership checked in the same round trip: null when the payment is not the caller's (missing and foreign
 * alike). The disputes are kept to the owner and environment too (every dispute row carries them).
 */
export async function listPaymentDisputes(
  deps: Deps,
  scope: OwnerScope,
  paymentId: string,
  page: Page,
): Promise<{ rows: DisputeRow[]; total: number } | null> {
  const { db } = deps;
  const statements = newestFirstPage(
    db,
    disputes,
    and(
      eq(disputes.paymentId, paymentId),
      eq(disputes.ownerId, scope.ownerId),
      eq(disputes.environment, scope.environment),
    ),
    page,
  );
  const [owned, rows, counted] = await db.batch([
    ownedPayment(deps, scope, paymentId),
    statements.rows,
    statements.total,
  ]);
  if (owned.length === 0) return null;
  return { rows: rows as DisputeRow[], total: (counted as Array<{ total: number }>)[0]?.total ?? 0 };
}
