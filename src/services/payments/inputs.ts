import { z } from '@hono/zod-openapi';

/**
 * The bodies of the payment operations (services/payments/create-payment.ts, create-refund.ts): the
 * schemas the routes validate with and the operations take as `z.infer`, declared once. The `.openapi()`
 * metadata documents them in /openapi.json.
 */

export const AmountSchema = z
  .strictObject({
    value: z
      .string()
      .max(32)
      .regex(/^(0|[1-9]\d{0,11})(\.\d+)?$/, 'Must be a positive decimal string such as "10" or "10.50"')
      .openapi({
        description:
          'Decimal string, never a number. Sent: at most the currency’s minor digits (2, or 0 for CLP). Answered: exactly the currency’s ISO 4217 minor digits; amounts a processor reports (a settlement’s `fee` and `net`, a dispute’s `amount`) may be in any ISO 4217 currency (JPY `"1030"`, BHD `"1.250"`).',
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
        description:
          'Validated against the method’s configuration schema and merged over its defaults. Where the processor addresses a POS payment’s later calls to its terminal (Adyen’s `poiid` and `sale_id`), the terminal it was made at stays its own: its cancel, refunds and reads go there, even after the method’s configuration changes.',
        example: { qr_ttl_seconds: 600 },
      }),
    webhook_url: z.string().max(2048).optional().openapi({
      description: 'HTTPS URL for this payment’s webhooks (no private, loopback or metadata addresses).',
      example: 'https://merchant.example/webhooks/payments',
    }),
  })
  .openapi('CreatePaymentRequest');

export type CreatePaymentBody = z.infer<typeof CreatePaymentBody>;

export const CreateRefundBody = z
  .strictObject({
    amount: AmountSchema.openapi({
      description: 'In the payment’s currency; at most the refundable balance. A full refund sends the whole balance.',
    }),
    reason: z.string().max(1000).optional().openapi({ example: 'Customer returned the item' }),
  })
  .openapi('CreateRefundRequest');

export type CreateRefundBody = z.infer<typeof CreateRefundBody>;
