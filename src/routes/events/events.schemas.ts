import { z } from '@hono/zod-openapi';
import { PAYMENT_EVENT_TYPES, type PaymentEventType } from '../../domain/payment-state.ts';
import { CreatedRangeQuery, filteredListQuery, opaqueId, Timestamp } from '../../lib/openapi.ts';
import { DisputeSchema } from '../disputes/disputes.schemas.ts';
import { PaymentSchema, RefundSchema } from '../payments/payments.schemas.ts';

const AttemptSchema = z.object({
  attempt: z.number().int().openapi({ description: 'The first attempt is 1.', example: 1 }),
  status_code: z
    .number()
    .int()
    .nullable()
    .openapi({ description: 'The receiver’s HTTP status; null when none came.', example: 200 }),
  error: z
    .string()
    .nullable()
    .openapi({ description: '`timeout`, `network_error`, `http_<status>`, `url_refused`; never the receiver’s body.' }),
  latency_ms: z.number().int().openapi({ example: 184 }),
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
  attempts: z.number().int().openapi({ example: 1 }),
  last_status_code: z.number().int().nullable().openapi({ example: 200 }),
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
        dispute: z
          .record(z.string(), z.unknown())
          .optional()
          .openapi({ description: 'With `dispute.*`: the dispute as the event left it.' }),
        payment: z.record(z.string(), z.unknown()),
      })
      .openapi({
        description: 'The payment as it was when the event happened (the delivered body’s `data`).',
        example: {
          payment: { id: 'pay_3kqz7w1v0c9m2x8bq4n6', status: 'approved', updated_at: '2026-11-21T10:15:30.123Z' },
        },
      }),
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
        'One of `payment.pending`, `.approved`, `.declined`, `.failed`, `.expired`, `.canceled`, `.charged_back`, `.refunded`, `payment.action_required` (the payment stays `pending` and waits on `action`, e.g. `check_terminal`), `refund.failed` (an approved refund failed later: `data.refund` is `failed` with its `failure_reason`, its amount is refundable again, and `data.payment` carries the status its approved refunds now call for; no `payment.*` event is sent for that change), `payment.void_failed` (the refund that carried out a void failed later: the payment is `approved` again, its whole amount refundable; sent instead of `payment.approved`), and `dispute.created`, `dispute.updated`, `dispute.closed` (`data.dispute` with `data.payment`); tolerate future types.',
      example: 'payment.approved',
    }),
    data: z
      .object({
        refund: RefundSchema.optional().openapi({
          description: 'With `refund.failed`: the refund as the event left it.',
        }),
        dispute: DisputeSchema.optional().openapi({
          description:
            'With `dispute.created`, `dispute.updated` and `dispute.closed`: the dispute as the event left it.',
        }),
        payment: PaymentSchema,
      })
      .openapi({ description: 'The payment as it was when the event happened; order by its `updated_at`.' }),
  })
  .openapi({ description: 'An event exactly as its webhook delivers it (`webhook-id` is its `id`).' })
  .openapi('WebhookEvent');

/** What each event type tells a receiver; the description's `webhooks` has one entry per type. */
export const EVENT_DESCRIPTIONS: Record<PaymentEventType, string> = {
  'payment.pending':
    'The processor holds the payment and waits: a QR to show (`action.type: display_qr`, payable until `action.expires_at`), a card at a terminal, or an outcome still unknown after a timeout.',
  'payment.approved': 'The money was collected.',
  'payment.declined':
    'A business refusal (issuer, fraud rules); final. A new attempt needs a new `external_reference`.',
  'payment.failed': 'A technical or configuration failure; final.',
  'payment.expired': 'Nobody paid the QR in time; final, it can no longer be paid.',
  'payment.canceled': 'Canceled before collection, or voided after it (before any refund); final.',
  'payment.refunded':
    'A refund was approved: `data.payment.status` is `partially_refunded` or `refunded`. Sent once per approved refund.',
  'payment.charged_back':
    'The payer’s bank took the collected money back: `data.payment.charged_back_at` is set, the status stays as it was. Refunds and cancels are no longer possible.',
  'payment.action_required':
    'A `pending` payment waits on someone: `data.payment.action.type` says on what (`check_terminal`: check the terminal’s activity for whether the card was charged). It stays `pending` until the processor reports the outcome.',
  'refund.failed':
    'The processor reported an approved refund failed after it had succeeded (e.g. the customer’s card was closed): `data.refund` is `failed` with its `failure_reason`, its amount is refundable again, and `data.payment` has the status its approved refunds now call for (`refunded` becomes `partially_refunded` or `approved`). Sent once per reversal; the payment’s status change sends no `payment.*` event of its own.',
  'payment.void_failed':
    'The refund by which the processor carried out a void of this collected payment failed later (e.g. the customer’s card was closed): the money never reached the customer and is back in your balance. `data.payment.status` is `approved` again, with its whole amount refundable; return the money to the customer another way (a new refund, or outside the processor). Sent once per reversal, instead of `payment.approved`: nothing was collected anew.',
  'dispute.created':
    'The processor reported a new dispute of the payment: an inquiry (`warning_*`) or a chargeback (`needs_response`, the funds withdrawn: `data.dispute.funds_withdrawn_at`). Respond at the processor by `evidence_due_by`. A dispute first heard of already closed sends `dispute.closed` right after.',
  'dispute.updated':
    'A dispute changed without closing: escalated, under review, its amount, deadline or reason changed, or its funds were withdrawn or reinstated (a reinstatement reported after the dispute closed comes as this event).',
  'dispute.closed':
    'A dispute reached a final status: `won` (the funds are reinstated, `data.dispute.funds_reinstated_at`), `lost` (the money stays with the payer: `data.payment.charged_back_at` is set, and `payment.charged_back` is sent too the first time), or `warning_closed` (an inquiry that never escalated).',
};

/** The Standard Webhooks headers every delivery (and the endpoint ping) carries. */
export const StandardWebhookHeaders = z.object({
  'webhook-id': z.string().openapi({
    description: 'The event id, equal to the body’s `id`; the same on every redelivery: deduplicate by it.',
    example: 'evt_0d4m8x2k9q7w1v3c5b6n',
  }),
  'webhook-timestamp': z.string().openapi({
    description: 'Unix seconds of this attempt, as signed: refuse one too far from your clock (replays).',
    example: '1795256130',
  }),
  'webhook-signature': z.string().openapi({
    description:
      'Space-separated `v1,<base64>` signatures: HMAC-SHA256 over `{webhook-id}.{webhook-timestamp}.{raw body}` keyed by the base64-decoded part of the `whsec_` secret (the account’s for a payment’s `webhook_url`, the endpoint’s own for an endpoint). Two while a rotated secret overlaps (24 hours): accept either. Verify with any Standard Webhooks library.',
    example: 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
  }),
});

/**
 * The body of one event type: the fields of `WebhookEvent` with its `type` fixed. Spelt out rather than
 * extended, which the generator would write as an `allOf` whose `type` is optional.
 */
export const webhookEventOf = (type: PaymentEventType) =>
  z
    .object({
      ...WebhookEventSchema.shape,
      type: z.literal(type).openapi({ description: EVENT_DESCRIPTIONS[type] }),
      // The refund is what `refund.failed` is about, the dispute what `dispute.*` is: always there, and in no other event.
      data:
        type === 'refund.failed'
          ? z
              .object({ refund: RefundSchema, payment: PaymentSchema })
              .openapi({ description: 'The refund and its payment as the reversal left them.' })
          : type.startsWith('dispute.')
            ? z
                .object({ dispute: DisputeSchema, payment: PaymentSchema })
                .openapi({ description: 'The dispute and its payment as the news left them.' })
            : z
                .object({ payment: PaymentSchema })
                .openapi({ description: 'The payment as it was when the event happened; order by its `updated_at`.' }),
    })
    .openapi({ description: `The \`${type}\` event, exactly as \`GET /v1/events\` lists it.` });

export const PaymentEventParams = z.object({
  payment_id: opaqueId('payment_id', 'pay_3kqz7w1v0c9m2x8bq4n6', 'The payment (`pay_...`).'),
});
export const EventParams = PaymentEventParams.extend({
  event_id: opaqueId('event_id', 'evt_0d4m8x2k9q7w1v3c5b6n', 'The event (`evt_...`), as in `webhook-id`.'),
});

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
