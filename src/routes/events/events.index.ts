import { createRoute, z } from '@hono/zod-openapi';
import { and, asc, count, desc, eq, inArray } from 'drizzle-orm';
import { createDb } from '../../db/client.ts';
import { paymentEvents, webhookDeliveries, webhookDeliveryAttempts, type PaymentEventRow } from '../../db/schema/index.ts';
import { ApiError } from '../../lib/errors.ts';
import { bearerSecurity, dataEnvelope, errorResponses, jsonContent, listEnvelope, opaqueId, PaginationQuery, Timestamp, type AppOpenAPI, type AppRouteHandler } from '../../lib/openapi.ts';
import { toIso, toIsoOrNull } from '../../lib/time.ts';
import { requireAuth } from '../../middleware/auth.ts';
import { findPayment } from '../../services/payments/store.ts';
import { enqueueDeliveries } from '../../services/webhooks/enqueue.ts';

const AttemptSchema = z.object({
  attempt: z.number().int(),
  status_code: z.number().int().nullable().openapi({ description: 'The receiver’s HTTP status; null when none came.' }),
  error: z.string().nullable().openapi({ description: '`timeout`, `network_error`, `http_<status>`, `url_refused`; never the receiver’s body.' }),
  latency_ms: z.number().int(),
  attempted_at: Timestamp,
});

const EventSchema = z
  .object({
    id: z.string().openapi({ example: 'evt_0d4m8x2k9q7w1v3c5b6n' }),
    type: z.string().openapi({
      description:
        '`payment.pending`, `.approved`, `.declined`, `.failed`, `.expired`, `.canceled`, `.charged_back`, `.refunded`, and `payment.action_required` (the payment stays `pending` and waits on `action`, e.g. `check_terminal`). Tolerate future values.',
      example: 'payment.approved',
    }),
    created_at: Timestamp,
    data: z.object({ payment: z.record(z.string(), z.unknown()) }).openapi({ description: 'The payment as it was when the event happened (the delivered body’s `data`).' }),
    delivery: z
      .object({
        url: z.string(),
        status: z.enum(['pending', 'succeeded', 'dead']),
        attempts: z.number().int(),
        last_status_code: z.number().int().nullable(),
        last_error: z.string().nullable(),
        next_attempt_at: Timestamp.nullable(),
        attempt_log: z.array(AttemptSchema),
      })
      .nullable()
      .openapi({ description: 'Null when the payment has no `webhook_url`.' }),
  })
  .openapi('PaymentEvent');

const Params = z.object({ payment_id: opaqueId('payment_id', 'pay_3kqz7w1v0c9m2x8bq4n6') });

export const listPaymentEvents = createRoute({
  operationId: 'listPaymentEvents',
  method: 'get',
  path: '/v1/payments/{payment_id}/events',
  tags: ['Webhooks'],
  summary: 'List a payment’s events and their deliveries',
  description: 'Newest first, each with its delivery to the payment’s `webhook_url`: attempts, last status, next retry. Scope `payments:read`.',
  security: bearerSecurity,
  middleware: [requireAuth({ accept: 'any', scope: 'payments:read' })],
  request: { params: Params, query: PaginationQuery },
  responses: { 200: jsonContent(listEnvelope(EventSchema), 'A page of events.'), ...errorResponses('unauthorized', 'insufficient_scope', 'payment_not_found') },
});

export const redeliverPaymentEvent = createRoute({
  operationId: 'redeliverPaymentEvent',
  method: 'post',
  path: '/v1/payments/{payment_id}/events/{event_id}/redeliver',
  tags: ['Webhooks'],
  summary: 'Deliver an event again',
  description: 'Queues the event for delivery again, with the same event id (receivers deduplicate by it). Also revives a dead-lettered delivery. Scope `payments:read`.',
  security: bearerSecurity,
  middleware: [requireAuth({ accept: 'any', scope: 'payments:read' })],
  request: { params: Params.extend({ event_id: opaqueId('event_id', 'evt_0d4m8x2k9q7w1v3c5b6n') }) },
  responses: {
    202: jsonContent(dataEnvelope(EventSchema), 'Queued.'),
    ...errorResponses('unauthorized', 'insufficient_scope', 'payment_not_found', 'invalid_state_transition'),
  },
});

async function eventViews(db: ReturnType<typeof createDb>, events: PaymentEventRow[]) {
  const ids = events.map((e) => e.id);
  const [deliveries, attempts] = ids.length
    ? await db.batch([
        db.select().from(webhookDeliveries).where(inArray(webhookDeliveries.eventId, ids)),
        db.select().from(webhookDeliveryAttempts).where(inArray(webhookDeliveryAttempts.eventId, ids)).orderBy(asc(webhookDeliveryAttempts.attemptNumber)),
      ])
    : [[], []];
  return events.map((event) => {
    const delivery = deliveries.find((d) => d.eventId === event.id);
    const payload = JSON.parse(event.payload) as { data: { payment: Record<string, unknown> } };
    return {
      id: event.id,
      type: event.type,
      created_at: toIso(event.createdAt),
      data: payload.data,
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

const listHandler: AppRouteHandler<typeof listPaymentEvents> = async (c) => {
  const auth = c.get('auth');
  const db = createDb(c.env);
  const payment = await findPayment(db, { ownerId: auth.ownerId, environment: c.env.ENVIRONMENT }, c.req.valid('param').payment_id);
  if (!payment) throw new ApiError('payment_not_found');
  const { limit, offset } = c.req.valid('query');
  const [events, [{ total } = { total: 0 }]] = await db.batch([
    db.select().from(paymentEvents).where(eq(paymentEvents.paymentId, payment.id)).orderBy(desc(paymentEvents.createdAt), desc(paymentEvents.id)).limit(limit).offset(offset),
    db.select({ total: count() }).from(paymentEvents).where(eq(paymentEvents.paymentId, payment.id)),
  ]);
  return c.json({ data: await eventViews(db, events), pagination: { limit, offset, total } }, 200);
};

const redeliverHandler: AppRouteHandler<typeof redeliverPaymentEvent> = async (c) => {
  const auth = c.get('auth');
  const db = createDb(c.env);
  const { payment_id, event_id } = c.req.valid('param');
  const payment = await findPayment(db, { ownerId: auth.ownerId, environment: c.env.ENVIRONMENT }, payment_id);
  if (!payment) throw new ApiError('payment_not_found');
  const event = await db.select().from(paymentEvents).where(and(eq(paymentEvents.id, event_id), eq(paymentEvents.paymentId, payment.id))).get();
  if (!event) throw new ApiError('payment_not_found', 'No such event for this payment.');
  const now = Date.now();
  const revived = await db
    .update(webhookDeliveries)
    .set({ status: 'pending', nextAttemptAt: now, updatedAt: now })
    .where(eq(webhookDeliveries.eventId, event.id))
    .returning()
    .get();
  if (!revived) throw new ApiError('invalid_state_transition', 'The payment has no webhook_url, so its events are not delivered.');
  await enqueueDeliveries(c.env, [{ eventId: event.id }]);
  const [view] = await eventViews(db, [event]);
  return c.json({ data: view! }, 202);
};

export function registerEventRoutes(app: AppOpenAPI) {
  app.openapi(listPaymentEvents, listHandler);
  app.openapi(redeliverPaymentEvent, redeliverHandler);
}
