import { and, eq, isNull, type SQL, sql } from 'drizzle-orm';
import { insertRowsFrom } from '../../../db/conditional-insert.ts';
import { webhookDeliveries, webhookEndpoints } from '../../../db/schema/index.ts';
import type { Deps } from '../../../deps.ts';
import type { OwnerScope } from '../../../domain/caller.ts';
import { ALL_EVENTS } from '../../../domain/webhook-endpoints.ts';

/** An endpoint's share of the outbox: the deliveries an event fans out to it, and closing those still pending. */

/**
 * Closes an endpoint's pending deliveries (dead, with the reason as `last_error`): once disabled or
 * deleted it receives nothing more, and enabling it again starts from new events. `onlyIfDisabled`
 * makes it a companion of a conditional disable in the same batch.
 */
export function closePendingDeliveries(
  { db }: Deps,
  endpointId: string,
  reason: 'endpoint_disabled' | 'endpoint_deleted',
  now: number,
  onlyIfDisabled = false,
) {
  return db
    .update(webhookDeliveries)
    .set({ status: 'dead', nextAttemptAt: null, lastError: reason, updatedAt: now })
    .where(
      and(
        eq(webhookDeliveries.destination, endpointId),
        eq(webhookDeliveries.status, 'pending'),
        onlyIfDisabled
          ? sql`exists (select 1 from ${webhookEndpoints} where ${webhookEndpoints.id} = ${endpointId} and ${webhookEndpoints.disabledAt} is not null)`
          : undefined,
      ),
    );
}

/**
 * The deliveries of a new event to every enabled endpoint of its owner that takes its type, written by the event's
 * own batch (no read before it: the subscription rule of domain/webhook-endpoints.ts `subscribes`, a type listed or
 * `*`, is evaluated by SQLite over `enabled_events`), each returning its destination for the queue. `written` is the
 * condition that ties the rows to the payment change (services/payments/store.ts `atVersion`).
 */
export function endpointDeliveries(
  { db }: Deps,
  scope: OwnerScope,
  event: { id: string; type: string; createdAt: number },
  paymentId: string,
  written: SQL,
) {
  const subscribed = sql`exists (select 1 from json_each(${webhookEndpoints.enabledEvents}) where json_each.value in (${event.type}, ${ALL_EVENTS}))`;
  return insertRowsFrom(
    db,
    webhookDeliveries,
    {
      eventId: event.id,
      paymentId,
      ownerId: scope.ownerId,
      status: 'pending',
      attempts: 0,
      nextAttemptAt: event.createdAt,
      createdAt: event.createdAt,
      updatedAt: event.createdAt,
    },
    { destination: sql`${webhookEndpoints.id}`, url: sql`${webhookEndpoints.url}` },
    sql`${webhookEndpoints}`,
    and(
      eq(webhookEndpoints.ownerId, scope.ownerId),
      eq(webhookEndpoints.environment, scope.environment),
      isNull(webhookEndpoints.disabledAt),
      subscribed,
      written,
    )!,
  ).returning({ destination: webhookDeliveries.destination });
}
