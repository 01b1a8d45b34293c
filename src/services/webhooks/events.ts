import { and, asc, eq, inArray } from 'drizzle-orm';
import { fetchPage, inCreatedRange, newestFirstPage, type CreatedRange, type Page, type PageStatements } from '../../db/paging.ts';
import { paymentEvents, webhookDeliveries, webhookDeliveryAttempts, type PaymentEventRow } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import type { PaymentEventType } from '../../domain/payment-state.ts';
import { toIso, toIsoOrNull } from '../../lib/time.ts';
import type { PaymentResource } from '../payments/resources.ts';
import type { PaymentOwnerScope } from '../payments/store.ts';
import { enqueueDeliveries } from './enqueue.ts';

/**
 * The outbox read back: the events a merchant was (or would have been) sent, newest first
 * (db/paging.ts). Every event row carries its owner and environment, so these reads need no join.
 */

/** The delivered body of an event (`payload` is the exact text that was signed and sent). */
export interface WebhookEventBody {
  id: string;
  type: string;
  created_at: string;
  data: { payment: PaymentResource };
}

export const webhookBodyOf = (event: PaymentEventRow) => JSON.parse(event.payload) as WebhookEventBody;

export interface EventFilters extends CreatedRange {
  type?: PaymentEventType;
  paymentId?: string;
}

/** The statements of a page of the owner's events; exported so a test can explain their query plans. */
export function eventListStatements({ db }: Deps, scope: PaymentOwnerScope, filters: EventFilters, page: Page): PageStatements<PaymentEventRow> {
  const where = and(
    eq(paymentEvents.ownerId, scope.ownerId),
    eq(paymentEvents.environment, scope.environment),
    filters.type !== undefined ? eq(paymentEvents.type, filters.type) : undefined,
    filters.paymentId !== undefined ? eq(paymentEvents.paymentId, filters.paymentId) : undefined,
    ...inCreatedRange(paymentEvents.createdAt, filters),
  );
  return newestFirstPage(db, paymentEvents, where, page);
}

export function listEvents(deps: Deps, scope: PaymentOwnerScope, filters: EventFilters, page: Page) {
  return fetchPage(deps.db, eventListStatements(deps, scope, filters, page));
}

/** A page of one payment's events (the caller checked the payment is its own). */
export function listPaymentEvents({ db }: Deps, paymentId: string, page: Page) {
  return fetchPage(db, newestFirstPage(db, paymentEvents, eq(paymentEvents.paymentId, paymentId), page));
}

export function findEventOfPayment({ db }: Deps, paymentId: string, eventId: string) {
  return db.select().from(paymentEvents).where(and(eq(paymentEvents.id, eventId), eq(paymentEvents.paymentId, paymentId))).get();
}

/** Events with their delivery to the payment's `webhook_url` (attempts, last status, next retry). */
export async function withDeliveries({ db }: Deps, events: PaymentEventRow[]) {
  const ids = events.map((e) => e.id);
  const [deliveries, attempts] = ids.length
    ? await db.batch([
        db.select().from(webhookDeliveries).where(inArray(webhookDeliveries.eventId, ids)),
        db.select().from(webhookDeliveryAttempts).where(inArray(webhookDeliveryAttempts.eventId, ids)).orderBy(asc(webhookDeliveryAttempts.attemptNumber)),
      ])
    : [[], []];
  return events.map((event) => {
    const delivery = deliveries.find((d) => d.eventId === event.id);
    return {
      id: event.id,
      type: event.type,
      created_at: toIso(event.createdAt),
      data: webhookBodyOf(event).data,
      delivery: delivery
        ? {
            url: delivery.url,
            status: delivery.status,
            attempts: delivery.attempts,
            last_status_code: delivery.lastStatusCode,
            last_error: delivery.lastError,
            next_attempt_at: delivery.status === 'pending' ? toIsoOrNull(delivery.nextAttemptAt) : null,
            attempt_log: attempts
              .filter((a) => a.eventId === event.id)
              .map((a) => ({ attempt: a.attemptNumber, status_code: a.statusCode, error: a.error, latency_ms: a.latencyMs, attempted_at: toIso(a.attemptedAt) })),
          }
        : null,
    };
  });
}

/** Puts an event's delivery back in the queue (reviving a dead-lettered one); false when it has none. */
export async function redeliverEvent(deps: Deps, event: PaymentEventRow): Promise<boolean> {
  const now = Date.now();
  const revived = await deps.db
    .update(webhookDeliveries)
    .set({ status: 'pending', nextAttemptAt: now, updatedAt: now })
    .where(eq(webhookDeliveries.eventId, event.id))
    .returning()
    .get();
  if (!revived) return false;
  await enqueueDeliveries(deps, [{ eventId: event.id }]);
  return true;
}
