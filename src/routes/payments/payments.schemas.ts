import { z } from '@hono/zod-openapi';
import { IDEMPOTENCY_KEY_PATTERN } from '../../domain/idempotency.ts';
import { PAYMENT_STATUSES } from '../../domain/payment-state.ts';
import { REFUND_STATUSES } from '../../domain/refund-state.ts';
import { CreatedRangeQuery, filteredListQuery, opaqueId, Timestamp } from '../../lib/openapi.ts';

export const AmountSchema = z
  .strictObject({
    value: z
      .string()
      .max(32)
      .regex(/^(0|[1-9]\d{0,11})(\.\d+)?$/, 'Must be a positive decimal string such as "10" or "10.50"')
      .openapi({
        description: 'Decimal string, never a number; at most the currency’s minor digits (2, or 0 for CLP).',
        example: '25.00',
      }),
    currency: z
      .string()
      .max(3)
      .regex(/^[A-Z]{3}$/, 'Must be an ISO 4217 code')
      .openapi({ description: 'ISO 4217 code.', example: 'USD' }),
  })
  .openapi('Amount');

const MetadataSchema = z
  .record(z.string().min(1).max(64), z.union([z.string().max(500), z.number(), z.boolean(), z.null()]))
  .superRefine((value, ctx) => {
    if (Object.keys(value).length > 50) ctx.addIssue({ code: 'custom', message: 'At most 50 keys' });
    if (new TextEncoder().encode(JSON.stringify(value)).length > 16 * 1024)
      ctx.addIssue({ code: 'custom', message: 'At most 16 KiB in all' });
  })
  .openapi({
    description: 'Free, non-sensitive data: at most 50 keys, string values up to 500 characters, 16 KiB in all.',
    example: { order_id: '1042' },
  });

export const ActionSchema = z
  .object({
    type: z.string().openapi({
      description:
        '`none`; `display_qr` (show `qr_data`); or `check_terminal`: the terminal could not settle the payment and the processor will not settle it by itself (Mercado Pago Point `action_required`), so someone must check the terminal’s activity for whether the card was charged. The payment stays `pending` until the processor reports the terminal’s outcome; it cannot be canceled meanwhile (409). Tolerate future values. An action never implies approval.',
      example: 'display_qr',
    }),
    qr_data: z.string().optional().openapi({ description: 'With `display_qr`: show it unaltered as a QR code.' }),
    expires_at: Timestamp.nullable().optional().openapi({
      description:
        'With `display_qr`: the moment the QR stops being payable (the payment method’s `qr_ttl_seconds` after the QR was made); the payment becomes `expired` soon after. Count down to it, and offer a new payment once it has passed. Null when the service sets no expiry (the processor’s own applies).',
      example: '2026-11-21T10:30:30.123Z',
    }),
  })
  .openapi('PaymentAction');

export const PaymentSchema = z
  .object({
    id: z.string().openapi({ example: 'pay_3kqz7w1v0c9m2x8bq4n6' }),
    status: z.enum(PAYMENT_STATUSES).openapi({
      description: 'Always read it: a 2xx is not an approval. A chargeback does not change it: see `charged_back_at`.',
    }),
    amount: AmountSchema,
    external_reference: z.string(),
    payment_method: z.string().uuid(),
    processor_reference: z.string().nullable(),
    action: ActionSchema.optional().openapi({
      description:
        'In the create response; in reads only while a `pending` payment waits on something: a QR to show (so a reloaded checkout can show it again) or a check at the terminal.',
    }),
    description: z.string().nullable(),
    metadata: z
      .record(z.string(), z.unknown())
      .nullable()
      .openapi({ example: { order_id: '1042' } }),
    webhook_url: z.string().nullable(),
    charged_back_at: Timestamp.nullable().openapi({
      description:
        'Set when the processor reported a chargeback: the payer’s bank took the collected money back (event `payment.charged_back`). The status stays as it was (`approved`, `partially_refunded` or `refunded`; an open payment becomes `approved`, as the chargeback proves it was collected); from then on refunds and cancels answer `409 invalid_state_transition`, and any dispute is handled at the processor. Null otherwise.',
      example: null,
    }),
    created_at: Timestamp,
    updated_at: Timestamp.openapi({ description: 'Strictly increases with every change; order updates by it.' }),
  })
  .openapi('Payment');

export const CreatePaymentBody = z
  .strictObject({
    amount: AmountSchema,
    external_reference: z.string().min(1).max(128).openapi({
      description:
        'Your own reference; unique per API key (per user for a user token), even when the earlier payment failed.',
      example: 'order-1042',
    }),
    payment_method: z.string().uuid().max(36).openapi({
      description: 'An active method from `GET /v1/payment-methods`.',
      example: '5b0e7c52-3f57-4b8e-9a55-0e4d7c1b2a91',
    }),
    description: z.string().max(1000).optional().openapi({ example: 'Two coffees' }),
    metadata: MetadataSchema.optional(),
    configuration: z
      .record(z.string(), z.unknown())
      .optional()
      .openapi({
        description: 'Validated against the method’s configuration schema and merged over its defaults.',
        example: { qr_ttl_seconds: 600 },
      }),
    webhook_url: z.string().max(2048).optional().openapi({
      description: 'HTTPS URL for this payment’s webhooks (no private, loopback or metadata addresses).',
      example: 'https://merchant.example/webhooks/payments',
    }),
  })
  .openapi('CreatePaymentRequest');

export const RefundSchema = z
  .object({
    id: z.string().openapi({ example: 'ref_8d2k7q1x9m3v5b0c6z4n' }),
    payment_id: z.string(),
    status: z.enum(REFUND_STATUSES),
    amount: AmountSchema,
    reason: z.string().nullable(),
    processor_reference: z.string().nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi('Refund');

export const CreateRefundBody = z
  .strictObject({
    amount: AmountSchema.openapi({
      description: 'In the payment’s currency; at most the refundable balance. A full refund sends the whole balance.',
    }),
    reason: z.string().max(1000).optional().openapi({ example: 'Customer returned the item' }),
  })
  .openapi('CreateRefundRequest');

export const IdempotencyHeaders = z.object({
  'idempotency-key': z
    .string()
    .optional()
    // Checked by requireIdempotencyKey (domain/idempotency.ts); the limits here describe that check.
    .openapi({
      param: { in: 'header', required: true },
      minLength: 1,
      maxLength: 255,
      pattern: IDEMPOTENCY_KEY_PATTERN.source,
      description:
        'Required (`Idempotency-Key`). 1 to 255 printable ASCII characters; one logical attempt; reuse it when retrying.',
      example: '7c1d7f0e-checkout-1042',
    }),
});

export const ListPaymentsQuery = filteredListQuery({
  external_reference: z.string().min(1).max(128).optional().openapi({
    description: 'Exactly this reference (your own, e.g. from a `409 external_reference_conflict`).',
    example: 'order-1042',
  }),
  status: z.enum(PAYMENT_STATUSES).optional().openapi({ description: 'Only payments in this status.' }),
  payment_method: z
    .string()
    .uuid()
    .max(36)
    .optional()
    .openapi({ description: 'Only payments taken with this method.', example: '5b0e7c52-3f57-4b8e-9a55-0e4d7c1b2a91' }),
  ...CreatedRangeQuery,
});

export const PaymentParams = z.object({
  payment_id: opaqueId('payment_id', 'pay_3kqz7w1v0c9m2x8bq4n6', 'The payment (`pay_...`).'),
});
export const RefundParams = PaymentParams.extend({
  refund_id: opaqueId('refund_id', 'ref_8d2k7q1x9m3v5b0c6z4n', 'The refund (`ref_...`).'),
});
