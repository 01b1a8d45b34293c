import { createRoute } from '@hono/zod-openapi';
import {
  bearerSecurity,
  dataEnvelope,
  errorResponses,
  jsonContent,
  listEnvelope,
  PaginationQuery,
} from '../../lib/openapi.ts';
import { requireAuth } from '../../middleware/auth.ts';
import {
  EventParams,
  ListEventsQuery,
  PaymentEventParams,
  PaymentEventSchema,
  RedeliverQuery,
  WebhookEventSchema,
} from './events.schemas.ts';

export const listEvents = createRoute({
  operationId: 'listEvents',
  method: 'get',
  path: '/v1/events',
  tags: ['Webhooks'],
  summary: 'List your events (catch up after missed webhooks)',
  description: [
    'Scope `payments:read`. Every event of the caller’s owner in this environment (for a user token: the user’s own), whether or not its payment has a `webhook_url`, each with the very body its webhook carries (`id`, `type`, `created_at`, `data.payment`).',
    'Newest first (`created_at`, then `id`, descending). After your receiver was down, list from the last event you processed (`created_gte`), deduplicate by `id` as for webhooks, and apply each `data.payment` by its `updated_at`.',
    'An invalid filter, or an unknown parameter, is `400 invalid_request` naming it.',
  ].join(' '),
  security: bearerSecurity,
  middleware: [requireAuth({ accept: 'any', scope: 'payments:read' })],
  request: { query: ListEventsQuery },
  responses: {
    200: jsonContent(listEnvelope(WebhookEventSchema), 'A page of events.'),
    ...errorResponses('unauthorized', 'insufficient_scope', 'rate_limited'),
  },
});

export const listPaymentEvents = createRoute({
  operationId: 'listPaymentEvents',
  method: 'get',
  path: '/v1/payments/{payment_id}/events',
  tags: ['Webhooks'],
  summary: 'List a payment’s events and their deliveries',
  description:
    'Newest first, each with its deliveries, one per destination (the payment’s `webhook_url`, your webhook endpoints): attempts, last status, next retry. `delivery` is the one to the payment’s `webhook_url`. Scope `payments:read`.',
  security: bearerSecurity,
  middleware: [requireAuth({ accept: 'any', scope: 'payments:read' })],
  request: { params: PaymentEventParams, query: PaginationQuery },
  responses: {
    200: jsonContent(listEnvelope(PaymentEventSchema), 'A page of events.'),
    ...errorResponses('unauthorized', 'insufficient_scope', 'rate_limited', 'payment_not_found'),
  },
});

export const redeliverPaymentEvent = createRoute({
  operationId: 'redeliverPaymentEvent',
  method: 'post',
  path: '/v1/payments/{payment_id}/events/{event_id}/redeliver',
  tags: ['Webhooks'],
  summary: 'Deliver an event again',
  description:
    'Queues the event for delivery again, with the same event id (receivers deduplicate by it), to every destination it has or to the one named by `destination`. Also revives dead-lettered deliveries. A delivery to a disabled or deleted endpoint is not revived; naming one is `409 invalid_state_transition`, as is an event with no delivery to the destination asked for. Scope `payments:read`.',
  security: bearerSecurity,
  middleware: [requireAuth({ accept: 'any', scope: 'payments:read' })],
  request: { params: EventParams, query: RedeliverQuery },
  responses: {
    202: jsonContent(dataEnvelope(PaymentEventSchema), 'Queued.'),
    ...errorResponses(
      'unauthorized',
      'insufficient_scope',
      'rate_limited',
      'payment_not_found',
      'invalid_state_transition',
    ),
  },
});
