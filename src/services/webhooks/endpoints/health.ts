import { and, eq, isNull } from 'drizzle-orm';
import type { BatchItem } from 'drizzle-orm/batch';
import { webhookEndpoints, type WebhookEndpointRow } from '../../../db/schema/index.ts';
import type { Deps } from '../../../deps.ts';
import { afterAttempt } from '../../../domain/webhook-endpoints.ts';
import { log } from '../../../lib/log.ts';
import { toIso, toIsoOrNull } from '../../../lib/time.ts';
import type { AttemptResult } from '../send.ts';
import { closePendingDeliveries } from './deliveries.ts';

/**
 * What one delivery attempt does to its endpoint (domain/webhook-endpoints.ts): a success ends the
 * failure streak; a failure starts one, or, three days into it, disables the endpoint and closes its
 * pending deliveries. Statements for the attempt's batch; the disable is a compare-and-set on the streak
 * read, so a success recorded meanwhile keeps the endpoint enabled. `disableAt`: the index of the disabling
 * statement (its `changes` tell whether it took), or null.
 */
export function endpointHealthStatements(
  deps: Deps,
  endpoint: WebhookEndpointRow,
  attempt: AttemptResult,
  now: number,
) {
  const { db } = deps;
  const streak = afterAttempt(endpoint.failingSince, attempt.succeeded, now);
  const statements: BatchItem<'sqlite'>[] = [];
  if (streak.failingSince === null) {
    if (endpoint.failingSince !== null)
      statements.push(
        db.update(webhookEndpoints).set({ failingSince: null }).where(eq(webhookEndpoints.id, endpoint.id)),
      );
    return { statements, disableAt: null };
  }
  if (endpoint.failingSince === null) {
    statements.push(
      db
        .update(webhookEndpoints)
        .set({ failingSince: now })
        .where(and(eq(webhookEndpoints.id, endpoint.id), isNull(webhookEndpoints.failingSince))),
    );
  }
  if (!streak.disable) return { statements, disableAt: null };
  const disableAt = statements.length;
  statements.push(
    db
      .update(webhookEndpoints)
      .set({ disabledAt: now, disabledReason: 'failing', updatedAt: Math.max(now, endpoint.updatedAt + 1) })
      .where(
        and(
          eq(webhookEndpoints.id, endpoint.id),
          isNull(webhookEndpoints.disabledAt),
          eq(webhookEndpoints.failingSince, streak.failingSince),
        ),
      ),
    closePendingDeliveries(deps, endpoint.id, 'endpoint_disabled', now, true),
  );
  return { statements, disableAt };
}

/** The operator's record of an automatic disable (identifiers and times only). */
export function logAutoDisabled(endpoint: WebhookEndpointRow, now: number) {
  log('warn', 'webhook_endpoint_disabled', {
    endpoint_id: endpoint.id,
    owner_id: endpoint.ownerId,
    environment: endpoint.environment,
    reason: 'failing',
    failing_since: toIsoOrNull(endpoint.failingSince ?? now),
    disabled_at: toIso(now),
  });
}
