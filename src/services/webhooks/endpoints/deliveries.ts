import { and, eq, isNull, type SQL, sql } from 'drizzle-orm';
import { insertRowsFrom } from '../../../db/conditional-insert.ts';
import { type D1Handle, preparedWrite, statementBuilder } from '../../../db/prepared.ts';
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
 * The deliveries of a new event to every enabled endpoint of its owner that takes its type, written by the
 * event's own batch (no read before it: the subscription rule of domain/webhook-endpoints.ts `subscribes`,
 * a type listed or `*`, is evaluated by SQLite over `enabled_events`), each returning its destination for
 * the queue. Built once per isolate for `written`, the condition that ties the rows to the payment change
 * (store.ts `atVersion`, whose placeholders `bind` fills from `at`).
 */
export function endpointDeliveriesStatement(written: SQL) {
  const value = (name: string) => sql`${sql.placeholder(name)}`;
  const subscribed = sql`exists (select 1 from json_each(${webhookEndpoints.enabledEvents}) where json_each.value in (${sql.placeholder('type')}, ${sql.placeholder('anyType')}))`;
  const statement = preparedWrite(
    insertRowsFrom(
      statementBuilder,
      webhookDeliveries,
      {},
      {
        eventId: value('eventId'),
        destination: sql`${webhookEndpoints.id}`,
        paymentId: value('paymentId'),
        ownerId: value('ownerId'),
        url: sql`${webhookEndpoints.url}`,
        status: value('status'),
        attempts: value('attempts'),
        nextAttemptAt: value('createdAt'),
        createdAt: value('createdAt'),
        updatedAt: value('createdAt'),
      },
      sql`${webhookEndpoints}`,
      and(
        eq(webhookEndpoints.ownerId, sql.placeholder('ownerId')),
        eq(webhookEndpoints.environment, sql.placeholder('environment')),
        isNull(webhookEndpoints.disabledAt),
        subscribed,
        written,
      )!,
    ).returning({ destination: webhookDeliveries.destination }),
  );
  return (
    d1: D1Handle,
    scope: OwnerScope,
    event: { id: string; type: string; createdAt: number },
    paymentId: string,
    at: Record<string, unknown>,
  ) =>
    statement.bind(d1, {
      ...at,
      eventId: event.id,
      paymentId,
      ownerId: scope.ownerId,
      environment: scope.environment,
      status: 'pending',
      attempts: 0,
      createdAt: event.createdAt,
      type: event.type,
      anyType: ALL_EVENTS,
    });
}
