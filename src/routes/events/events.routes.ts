import { createRoute } from '@hono/zod-openapi';
import { PAYMENT_EVENT_TYPES, type PaymentEventType } from '../../domain/payment-state.ts';
import {
  bearerSecurity,
  dataEnvelope,
  errorResponses,
  jsonContent,
  listEnvelope,
  listErrorResponses,
  PaginationQuery,
} from '../../lib/openapi.ts';
import { requireAuth } from '../../middleware/auth.ts';
import {
  EVENT_DESCRIPTIONS,
  EventParams,
  ListEventsQuery,
  PaymentEventParams,
  PaymentEventSchema,
  RedeliverQuery,
  StandardWebhookHeaders,
  WebhookEventSchema,
  webhookEventOf,
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
    ...listErrorResponses('unauthorized', 'insufficient_scope', 'rate_limited'),
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
    ...listErrorResponses('unauthorized', 'insufficient_scope', 'rate_limited', 'payment_not_found'),
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

/** What a receiver answers: anything but a 2xx (or no answer within 10 s) is a failed attempt, retried. */
export const WEBHOOK_RESPONSES = {
  200: {
    description:
      'Any 2xx acknowledges the delivery (answer it once the event is stored). Another status, a redirect, or no answer within 10 s is a failure: the delivery is retried after about 30 s, 2 min, 10 min, 1 h, then every 6 h for 3 days. The body is never read.',
  },
};

/** `payment.charged_back` → `paymentChargedBack`. */
const webhookName = (type: string) => type.replace(/[._]([a-z])/g, (_, letter: string) => letter.toUpperCase());

/**
 * The description's `webhooks`: one per event type the service sends (domain/payment-state.ts), each the
 * body `listEvents` lists, signed with the Standard Webhooks headers. Sent to a payment's `webhook_url` and
 * to each webhook endpoint subscribed to its type.
 */
export const eventWebhooks = PAYMENT_EVENT_TYPES.map((type: PaymentEventType) =>
  createRoute({
    operationId: webhookName(type),
    method: 'post',
    path: type,
    tags: ['Webhooks'],
    summary: `Event \`${type}\``,
    description: `${EVENT_DESCRIPTIONS[type]} POSTed to the payment’s \`webhook_url\` and to each webhook endpoint subscribed to \`${type}\` (or \`*\`), with the same \`id\` everywhere. Verify the signature over the raw body, deduplicate by \`id\`, and apply \`data.payment\` only when its \`updated_at\` is newer than what you hold: deliveries may arrive late, twice or out of order.`,
    security: [],
    request: {
      headers: StandardWebhookHeaders,
      body: { required: true, content: { 'application/json': { schema: webhookEventOf(type) } } },
    },
    responses: WEBHOOK_RESPONSES,
  }),
);
