import { and, eq } from 'drizzle-orm';
import { paymentEvents, webhookDeliveries, webhookDeliveryAttempts } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import { nextAttemptAt } from '../../domain/webhook-schedule.ts';
import { signWebhook } from '../../domain/webhook-signature.ts';
import { validateWebhookUrl } from '../../domain/webhook-url.ts';
import { newId } from '../../lib/ids.ts';
import { signingSecrets } from './secrets.ts';

export const DELIVERY_TIMEOUT_MS = 10_000;

/** Clock skew between the queue and the Worker tolerated when judging whether an attempt is due. */
export const DUE_TOLERANCE_MS = 5_000;

export type DeliveryOutcome =
  | { kind: 'done' }
  | { kind: 'retry'; delaySeconds: number };

/**
 * One delivery attempt of one event: sign (Standard Webhooks), POST with a 10 s timeout and no
 * redirects, record the attempt, and decide what follows. The receiver's body is never read or kept.
 */
export async function deliverEvent(deps: Deps, eventId: string, now = Date.now()): Promise<DeliveryOutcome> {
  const { db } = deps;
  const found = await db
    .select({ delivery: webhookDeliveries, event: paymentEvents })
    .from(webhookDeliveries)
    .innerJoin(paymentEvents, eq(paymentEvents.id, webhookDeliveries.eventId))
    .where(eq(webhookDeliveries.eventId, eventId))
    .get();
  if (!found || found.delivery.status !== 'pending') return { kind: 'done' };
  const { delivery, event } = found;
  // A message arriving before the delivery is due is a duplicate (a redelivery or a relay while a retry
  // was already queued): attempting would hit the receiver again now and start a second retry chain, and
  // every further duplicate another. The message queued for the due time carries the delivery on.
  if (delivery.nextAttemptAt !== null && delivery.nextAttemptAt > now + DUE_TOLERANCE_MS) return { kind: 'done' };
  const attemptNumber = delivery.attempts + 1;

  let statusCode: number | null = null;
  let error: string | null = null;
  const started = Date.now();
  // Checked again before every attempt: rules may have tightened since the payment was created.
  const url = validateWebhookUrl(delivery.url, { allowInsecureLocal: deps.allowInsecureWebhooks });
  if (!url.ok) {
    error = 'url_refused';
  } else {
    const timestamp = Math.floor(now / 1000);
    try {
      const response = await fetch(url.url, {
        method: 'POST',
        redirect: 'manual',
        signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
        headers: {
          'Content-Type': 'application/json',
          'User-Agent': 'payment-service-webhooks/1',
          'webhook-id': event.id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': await signWebhook(await signingSecrets(deps, delivery.ownerId, now), event.id, timestamp, event.payload),
        },
        body: event.payload,
      });
      statusCode = response.status;
      await response.body?.cancel();
    } catch (cause) {
      error = (cause as Error)?.name === 'TimeoutError' ? 'timeout' : 'network_error';
    }
  }
  const latencyMs = Date.now() - started;
  const succeeded = statusCode !== null && statusCode >= 200 && statusCode < 300;
  if (!succeeded && error === null) error = `http_${statusCode}`;
  // A refused URL will be refused again: no point retrying it.
  const next = succeeded || error === 'url_refused' ? null : nextAttemptAt(event.createdAt, attemptNumber, now);
  const status = succeeded ? 'succeeded' : next === null ? 'dead' : 'pending';

  await db.batch([
    db.insert(webhookDeliveryAttempts).values({ id: newId('wha'), eventId, attemptNumber, statusCode, error, latencyMs, attemptedAt: now }),
    db
      .update(webhookDeliveries)
      .set({ status, attempts: attemptNumber, nextAttemptAt: next, lastAttemptAt: now, lastStatusCode: statusCode, lastError: error, updatedAt: now })
      .where(and(eq(webhookDeliveries.eventId, eventId), eq(webhookDeliveries.attempts, delivery.attempts))),
  ]);
  return next === null ? { kind: 'done' } : { kind: 'retry', delaySeconds: Math.max(1, Math.ceil((next - now) / 1000)) };
}
