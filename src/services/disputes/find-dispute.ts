import { and, eq } from 'drizzle-orm';
import { disputes, type DisputeRow } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import type { OwnerScope } from '../../domain/caller.ts';

/** `GET /v1/disputes/{id}`: the caller's dispute, or undefined (missing and another owner's alike). */
export function findDispute({ db }: Deps, scope: OwnerScope, disputeId: string): Promise<DisputeRow | undefined> {
  return db
    .select()
    .from(disputes)
    .where(
      and(eq(disputes.id, disputeId), eq(disputes.ownerId, scope.ownerId), eq(disputes.environment, scope.environment)),
    )
    .get();
}
