import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import {
  fetchPage,
  ownedListStatements,
  newestFirstPage,
  type CreatedRange,
  type Page,
  type PageStatements,
} from '../../db/paging.ts';
import {
  paymentEvents,
  webhookDeliveries,
  webhookDeliveryAttempts,
  webhookEndpoints,
  type PaymentEventRow,
  type WebhookDeliveryRow,
} from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import { eventsTotal } from '../counters/totals.ts';
import type { PaymentEventType } from '../../domain/payment-state.ts';
import { PAYMENT_URL_DESTINATION } from '../../domain/webhook-endpoints.ts';
import { toIso, toIsoOrNull } from '../../lib/time.ts';
import type { DisputeResource, PaymentResource, RefundResource } from '../payments/resources.ts';
import type { OwnerScope } from '../../domain/caller.ts';
import { enqueueDeliveries, pendingDeliveryOf } from './enqueue.ts';

/**
 * The outbox read back: the events a merchant was (or would have been) sent, newest first
 * (db/paging.ts). Every event row carries its owner and environment, so these reads need no join.
 */

/** The delivered body of an event (`payload` is the exact text that was signed and sent). */
export interface WebhookEventBody {
  id: string;
  type: string;
  created_at: string;
  /** `refund`: with `refund.failed` only; `dispute`: with `dispute.*` only. */
  data: { refund?: RefundResource; dispute?: DisputeResource; payment: PaymentResource };
}

export const webhookBodyOf = (event: PaymentEventRow) => JSON.parse(event.payload) as WebhookEventBody;

export interface EventFilters extends CreatedRange {
  type?: PaymentEventType;
  paymentId?: string;
}

/** The statements of a page of the owner's events; exported so a test can explain their query plans. */
export function eventListStatements(
  { db }: Deps,
  scope: OwnerScope,
  filters: EventFilters,
  page: Page,
): PageStatements<PaymentEventRow> {
  const columns = [
    [paymentEvents.type, filters.type],
    [paymentEvents.paymentId, filters.paymentId],
  ] as const;
  return ownedListStatements(db, paymentEvents, scope, columns, filters, page, eventsTotal(db, scope, filters));
}

export function listEvents(deps: Deps, scope: OwnerScope, filters: EventFilters, page: Page) {
  return fetchPage(deps.db, eventListStatements(deps, scope, filters, page));
}

/** The statements of a page of one payment's events; exported so a test can explain their query plans. */
export const paymentEventListStatements = ({ db }: Deps, paymentId: string, page: Page) =>
  newestFirstPage(db, paymentEvents, eq(paymentEvents.paymentId, paymentId), undefined, page);

/** A page of one payment's events (the caller checked the payment is its own); a cursor is one of its events. */
export function listPaymentEvents(deps: Deps, paymentId: string, page: Page) {
  return fetchPage(deps.db, paymentEventListStatements(deps, paymentId, page));
}

export function findEventOfPayment({ db }: Deps, paymentId: string, eventId: string) {
  return db
    .select()
    .from(paymentEvents)
    .where(and(eq(paymentEvents.id, eventId), eq(paymentEvents.paymentId, paymentId)))
    .get();
}

/** Where a delivery goes, as the API shows it. */
export const destinationView = (destination: string) =>
  destination === PAYMENT_URL_DESTINATION
    ? { type: 'payment_url' as const, endpoint_id: null }
    : { type: 'endpoint' as const, endpoint_id: destination };

/**
 * Events with their deliveries (attempts, last status, next retry): `deliveries`, one per destination,
 * and `delivery`, the one to the payment's `webhook_url` (the field as it was before endpoints).
 */
export async function withDeliveries({ db }: Deps, events: PaymentEventRow[]) {
  const ids = events.map((e) => e.id);
  const [deliveries, attempts] = ids.length
    ? await db.batch([
        db
          .select()
          .from(webhookDeliveries)
          .where(inArray(webhookDeliveries.eventId, ids))
          .orderBy(asc(webhookDeliveries.createdAt), asc(webhookDeliveries.destination)),
        db
          .select()
          .from(webhookDeliveryAttempts)
          .where(inArray(webhookDeliveryAttempts.eventId, ids))
          .orderBy(asc(webhookDeliveryAttempts.attemptNumber)),
      ])
    : [[], []];
  const view = (delivery: WebhookDeliveryRow) => ({
    url: delivery.url,
    status: delivery.status,
    attempts: delivery.attempts,
    last_status_code: delivery.lastStatusCode,
    last_error: delivery.lastError,
    next_attempt_at: delivery.status === 'pending' ? toIsoOrNull(delivery.nextAttemptAt) : null,
    attempt_log: attempts
      .filter((a) => a.eventId === delivery.eventId && a.destination === delivery.destination)
      .map((a) => ({
        attempt: a.attemptNumber,
        status_code: a.statusCode,
        error: a.error,
        latency_ms: a.latencyMs,
        attempted_at: toIso(a.attemptedAt),
      })),
  });
  return events.map((event) => {
    const own = deliveries.filter((d) => d.eventId === event.id);
    const toPaymentUrl = own.find((d) => d.destination === PAYMENT_URL_DESTINATION);
    return {
      id: event.id,
      type: event.type,
      created_at: toIso(event.createdAt),
      data: webhookBodyOf(event).data,
      delivery: toPaymentUrl ? view(toPaymentUrl) : null,
      deliveries: own.map((d) => ({ destination: destinationView(d.destination), ...view(d) })),
    };
  });
}

export type RedeliverResult = { ok: true } | { ok: false; reason: 'no_delivery' | 'endpoint_disabled' };

/**
 * Puts an event's deliveries back in the queue (reviving dead-lettered ones), each with the same event
 * id: to `destination` only (`payment_url` or an endpoint id), or to every destination it has. A
 * delivery to an endpoint that is disabled (or deleted) is left alone: enabling an endpoint resumes from
 * new events, and naming such a destination is refused.
 */
export async function redeliverEvent(
  deps: Deps,
  event: PaymentEventRow,
  destination?: string,
): Promise<RedeliverResult> {
  const { db } = deps;
  const now = Date.now();
  const live = sql`(${webhookDeliveries.destination} = ${PAYMENT_URL_DESTINATION} or exists (select 1 from ${webhookEndpoints} where ${webhookEndpoints.id} = ${webhookDeliveries.destination} and ${webhookEndpoints.ownerId} = ${event.ownerId} and ${webhookEndpoints.environment} = ${event.environment} and ${webhookEndpoints.disabledAt} is null))`;
  const revived = await db
    .update(webhookDeliveries)
    .set({ status: 'pending', nextAttemptAt: now, updatedAt: now })
    .where(
      and(
        eq(webhookDeliveries.eventId, event.id),
        destination !== undefined ? eq(webhookDeliveries.destination, destination) : undefined,
        live,
      ),
    )
    .returning({ destination: webhookDeliveries.destination });
  if (revived.length === 0) {
    if (destination === undefined) return { ok: false, reason: 'no_delivery' };
    const exists = await db
      .select({ destination: webhookDeliveries.destination })
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.eventId, event.id), eq(webhookDeliveries.destination, destination)))
      .get();
    return { ok: false, reason: exists ? 'endpoint_disabled' : 'no_delivery' };
  }
  await enqueueDeliveries(
    deps,
    revived.map((d) => pendingDeliveryOf(event.id, event.ownerId, d.destination)),
  );
  return { ok: true };
}
