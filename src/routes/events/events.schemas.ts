import { z } from '@hono/zod-openapi';
import { PAYMENT_EVENT_TYPES } from '../../domain/payment-state.ts';
import { CreatedRangeQuery, filteredListQuery, opaqueId, Timestamp } from '../../lib/openapi.ts';
import { PaymentSchema, RefundSchema } from '../payments/payments.schemas.ts';

const AttemptSchema = z.object({
  attempt: z.number().int(),
  status_code: z.number().int().nullable().openapi({ description: 'The receiver’s HTTP status; null when none came.' }),
  error: z
    .string()
    .nullable()
    .openapi({ description: '`timeout`, `network_error`, `http_<status>`, `url_refused`; never the receiver’s body.' }),
  latency_ms: z.number().int(),
  attempted_at: Timestamp,
});

const eventFields = {
  id: z.string().openapi({ example: 'evt_0d4m8x2k9q7w1v3c5b6n' }),
  type: z.string().openapi({ example: 'payment.approved' }),
  created_at: Timestamp,
};

const deliveryFields = {
  url: z.string().openapi({ description: 'Where the last attempt went (an endpoint’s URL as it was then).' }),
  status: z.enum(['pending', 'succeeded', 'dead']),
  attempts: z.number().int(),
  last_status_code: z.number().int().nullable(),
  last_error: z.string().nullable().openapi({
    description:
      'As `attempt_log[].error`, or `endpoint_disabled` / `endpoint_deleted` when the endpoint stopped receiving before this delivery succeeded.',
  }),
  next_attempt_at: Timestamp.nullable(),
  attempt_log: z.array(AttemptSchema),
};

export const DestinationSchema = z
  .object({
    type: z.enum(['payment_url', 'endpoint']).openapi({
      description: '`payment_url`: the payment’s `webhook_url`; `endpoint`: one of your webhook endpoints.',
    }),
    endpoint_id: z.string().nullable().openapi({
      description: 'The endpoint (`we_...`) when `type` is `endpoint`; null otherwise.',
      example: 'we_5c1v8m2x0k7q3w9n4b6z',
    }),
  })
  .openapi('WebhookDestination');

export const PaymentEventSchema = z
  .object({
    ...eventFields,
    data: z
      .object({
        refund: z
          .record(z.string(), z.unknown())
          .optional()
          .openapi({ description: 'With `refund.failed`: the refund as the event left it.' }),
        payment: z.record(z.string(), z.unknown()),
      })
      .openapi({ description: 'The payment as it was when the event happened (the delivered body’s `data`).' }),
    delivery: z.object(deliveryFields).nullable().openapi({
      description:
        'The delivery to the payment’s `webhook_url`; null when the payment has none. The same delivery is in `deliveries`.',
    }),
    deliveries: z
      .array(z.object({ destination: DestinationSchema, ...deliveryFields }))
      .max(17)
      .optional()
      .openapi({
        description:
          'One delivery per destination, each with its own attempts, backoff and dead letter, all with the event’s `id`: the payment’s `webhook_url` (if any) first, then each endpoint that was enabled and subscribed to the type when the event happened. Always present in answers of this version; declared optional because `PaymentEvent` shipped without it (1.0.0), so a client built then still matches.',
      }),
  })
  .openapi('PaymentEvent');

export const WebhookEventSchema = z
  .object({
    ...eventFields,
    type: z.string().openapi({
      description:
        'One of `payment.pending`, `.approved`, `.declined`, `.failed`, `.expired`, `.canceled`, `.charged_back`, `.refunded`, `payment.action_required` (the payment stays `pending` and waits on `action`, e.g. `check_terminal`), and `refund.failed` (an approved refund failed later: `data.refund` is `failed` with its `failure_reason`, its amount is refundable again, and `data.payment` carries the status its approved refunds now call for; no `payment.*` event is sent for that change); tolerate future types.',
      example: 'payment.approved',
    }),
    data: z
      .object({
        refund: RefundSchema.optional().openapi({
          description: 'With `refund.failed`: the refund as the event left it.',
        }),
        payment: PaymentSchema,
      })
      .openapi({ description: 'The payment as it was when the event happened; order by its `updated_at`.' }),
  })
  .openapi({ description: 'An event exactly as its webhook delivers it (`webhook-id` is its `id`).' })
  .openapi('WebhookEvent');

export const PaymentEventParams = z.object({ payment_id: opaqueId('payment_id', 'pay_3kqz7w1v0c9m2x8bq4n6') });
export const EventParams = PaymentEventParams.extend({ event_id: opaqueId('event_id', 'evt_0d4m8x2k9q7w1v3c5b6n') });

export const RedeliverQuery = z.object({
  destination: z.string().min(1).max(128).optional().openapi({
    description:
      '`payment_url`, or an endpoint id (`we_...`): redeliver to that destination only. Default: every destination of the event.',
    example: 'payment_url',
  }),
});

export const ListEventsQuery = filteredListQuery({
  type: z.enum(PAYMENT_EVENT_TYPES).optional().openapi({ description: 'Only events of this type.' }),
  payment_id: z
    .string()
    .min(1)
    .max(128)
    .optional()
    .openapi({ description: 'Only the events of this payment.', example: 'pay_3kqz7w1v0c9m2x8bq4n6' }),
  ...CreatedRangeQuery,
});
