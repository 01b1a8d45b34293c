import { ownerScopeOf } from '../../domain/caller.ts';
import { and, eq, isNull, lte, or } from 'drizzle-orm';
import { paymentEvents, webhookDeliveries, webhookDeliveryAttempts } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import { PAYMENT_URL_DESTINATION } from '../../domain/webhook-endpoints.ts';
import { nextAttemptAt } from '../../domain/webhook-schedule.ts';
import { newId } from '../../lib/ids.ts';
import { endpointHealthStatements, logAutoDisabled } from './endpoints/health.ts';
import { endpointSecrets } from './endpoints/secrets.ts';
import { findDeliveryEndpoint } from './endpoints/store.ts';
import { signingList, signingSecrets } from './secrets.ts';
import { DELIVERY_TIMEOUT_MS, postSignedWebhook } from './send.ts';

export { DELIVERY_TIMEOUT_MS };

/** Clock skew between the queue and the Worker tolerated when judging whether an attempt is due. */
export const DUE_TOLERANCE_MS = 5_000;

/**
 * How long an attempt's claim holds a delivery: the POST's timeout and the time to record it. An attempt that ends
 * releases it at once; one whose process died lets it lapse, and the delivery's message (which the queue hands out
 * again when an invocation fails) or the relay takes it up then.
 */
export const ATTEMPT_LEASE_MS = DELIVERY_TIMEOUT_MS + 5_000;

export type DeliveryOutcome = { kind: 'done' } | { kind: 'retry'; delaySeconds: number };

/**
 * One delivery attempt of one event to one destination (the payment's `webhook_url`, or the endpoint
 * `endpointId`): sign, POST, record the attempt, and decide what follows. An endpoint delivery goes to
 * the endpoint's URL and secret as they are now; a disabled or deleted endpoint gets no attempt.
 */
export async function deliverEvent(
  deps: Deps,
  eventId: string,
  now = Date.now(),
  endpointId?: string,
): Promise<DeliveryOutcome> {
  const { db } = deps;
  const destination = endpointId ?? PAYMENT_URL_DESTINATION;
  const thisDelivery = and(eq(webhookDeliveries.eventId, eventId), eq(webhookDeliveries.destination, destination));
  const found = await db
    .select({ delivery: webhookDeliveries, event: paymentEvents })
    .from(webhookDeliveries)
    .innerJoin(paymentEvents, eq(paymentEvents.id, webhookDeliveries.eventId))
    .where(thisDelivery)
    .get();
  if (found?.delivery.status !== 'pending') return { kind: 'done' };
  const { delivery, event } = found;
  // A message arriving before the delivery is due is a duplicate (a redelivery or a relay while a retry
  // was already queued): attempting would hit the receiver again now and start a second retry chain, and
  // every further duplicate another. The message queued for the due time carries the delivery on.
  if (delivery.nextAttemptAt !== null && delivery.nextAttemptAt > now + DUE_TOLERANCE_MS) return { kind: 'done' };
  const attemptNumber = delivery.attempts + 1;

  const endpoint =
    endpointId === undefined
      ? null
      : await findDeliveryEndpoint(deps, ownerScopeOf(delivery, event.environment), endpointId);
  if (endpoint === undefined || endpoint?.disabledAt != null) {
    // Closed without an attempt: nothing more goes to a deleted or disabled endpoint.
    await db
      .update(webhookDeliveries)
      .set({
        status: 'dead',
        nextAttemptAt: null,
        lastError: endpoint === undefined ? 'endpoint_deleted' : 'endpoint_disabled',
        updatedAt: now,
      })
      .where(and(thisDelivery, eq(webhookDeliveries.attempts, delivery.attempts)))
      .run();
    return { kind: 'done' };
  }
  // One attempt at a time: claimed before the POST, so that a duplicate message (a redelivery, a relay while this one
  // runs) waits for it instead of sending the same event beside it. Held by another attempt: this message comes back
  // once that claim ends, and then finds the delivery recorded (done, or due later) or the claim lapsed.
  if (delivery.leasedUntil !== null && delivery.leasedUntil > now)
    return { kind: 'retry', delaySeconds: secondsUntil(delivery.leasedUntil, now) };
  const claim = await db
    .update(webhookDeliveries)
    .set({ leasedUntil: now + ATTEMPT_LEASE_MS })
    .where(and(thisDelivery, eq(webhookDeliveries.attempts, delivery.attempts), unclaimed(now)))
    .run();
  if (claim.meta.changes !== 1) return { kind: 'retry', delaySeconds: secondsUntil(now + ATTEMPT_LEASE_MS, now) };
  const url = endpoint ? endpoint.url : delivery.url;
  const secrets = endpoint
    ? signingList(await endpointSecrets(deps, endpoint, now))
    : await signingSecrets(deps, delivery.ownerId, now);
  const attempt = await postSignedWebhook(deps, url, secrets, event.id, event.payload, now);
  // A refused URL will be refused again: no point retrying it.
  const next =
    attempt.succeeded || attempt.error === 'url_refused' ? null : nextAttemptAt(event.createdAt, attemptNumber, now);
  const status = attempt.succeeded ? 'succeeded' : next === null ? 'dead' : 'pending';
  const health = endpoint
    ? endpointHealthStatements(deps, endpoint, attempt, now)
    : { statements: [], disableAt: null };

  const recorded = [
    db.insert(webhookDeliveryAttempts).values({
      id: newId('wha'),
      eventId,
      destination,
      attemptNumber,
      statusCode: attempt.statusCode,
      error: attempt.error,
      latencyMs: attempt.latencyMs,
      attemptedAt: now,
    }),
    db
      .update(webhookDeliveries)
      .set({
        url,
        status,
        attempts: attemptNumber,
        nextAttemptAt: next,
        leasedUntil: null,
        lastAttemptAt: now,
        lastStatusCode: attempt.statusCode,
        lastError: attempt.error,
        updatedAt: now,
      })
      .where(and(thisDelivery, eq(webhookDeliveries.attempts, delivery.attempts))),
  ] as const;
  const results = await db.batch([...recorded, ...health.statements]);
  if (
    endpoint &&
    health.disableAt !== null &&
    (results[recorded.length + health.disableAt] as D1Result).meta.changes === 1
  ) {
    logAutoDisabled(endpoint, now);
    return { kind: 'done' };
  }
  return next === null ? { kind: 'done' } : { kind: 'retry', delaySeconds: secondsUntil(next, now) };
}

/** No attempt holds the delivery: never claimed, released, or its claim lapsed. */
const unclaimed = (now: number) => or(isNull(webhookDeliveries.leasedUntil), lte(webhookDeliveries.leasedUntil, now));

/** A queue delay: whole seconds, at least one, so the message comes back no earlier than `at`. */
const secondsUntil = (at: number, now: number) => Math.max(1, Math.ceil((at - now) / 1000));
