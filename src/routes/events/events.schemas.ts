import { z } from '@hono/zod-openapi';
import { PAYMENT_EVENT_TYPES } from '../../domain/payment-state.ts';
import { CreatedRangeQuery, filteredListQuery, opaqueId, Timestamp } from '../../lib/openapi.ts';
import { PaymentSchema } from '../payments/payments.schemas.ts';

const AttemptSchema = z.object({
  attempt: z.number().int(),
  status_code: z.number().int().nullable().openapi({ description: 'The receiver’s HTTP status; null when none came.' }),
  error: z.string().nullable().openapi({ description: '`timeout`, `network_error`, `http_<status>`, `url_refused`; never the receiver’s body.' }),
  latency_ms: z.number().int(),
  attempted_at: Timestamp,
});

const eventFields = {
  id: z.string().openapi({ example: 'evt_0d4m8x2k9q7w1v3c5b6n' }),
  type: z.string().openapi({ example: 'payment.approved' }),
  created_at: Timestamp,
};

export const PaymentEventSchema = z
  .object({
    ...eventFields,
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

export const WebhookEventSchema = z
  .object({
    ...eventFields,
    type: z.string().openapi({ description: 'One of `payment.pending`, `.approved`, `.declined`, `.failed`, `.expired`, `.canceled`, `.charged_back`, `.refunded`, and `payment.action_required` (the payment stays `pending` and waits on `action`, e.g. `check_terminal`); tolerate future types.', example: 'payment.approved' }),
    data: z.object({ payment: PaymentSchema }).openapi({ description: 'The payment as it was when the event happened; order by its `updated_at`.' }),
  })
  .openapi({ description: 'An event exactly as its webhook delivers it (`webhook-id` is its `id`).' })
  .openapi('WebhookEvent');

export const PaymentEventParams = z.object({ payment_id: opaqueId('payment_id', 'pay_3kqz7w1v0c9m2x8bq4n6') });
export const EventParams = PaymentEventParams.extend({ event_id: opaqueId('event_id', 'evt_0d4m8x2k9q7w1v3c5b6n') });

export const ListEventsQuery = filteredListQuery({
  type: z.enum(PAYMENT_EVENT_TYPES).optional().openapi({ description: 'Only events of this type.' }),
  payment_id: z.string().min(1).max(128).optional().openapi({ description: 'Only the events of this payment.', example: 'pay_3kqz7w1v0c9m2x8bq4n6' }),
  ...CreatedRangeQuery,
});
