import { z } from '@hono/zod-openapi';

export const ReceiptSchema = z
  .object({
    received: z.literal(true),
    outcome: z.enum(['applied', 'ignored', 'duplicate', 'unknown_resource']).openapi({
      description:
        '`ignored`: a late or out-of-order notification the state machine refused. `duplicate`: the same event again, or unverifiable news about a resource read from the processor less than 10 seconds before. `unknown_resource`: about nothing of this payment method.',
    }),
  })
  .openapi('NotificationReceipt');

/** Whatever the processor sends; only its connector reads it (after verifying it, where the processor signs). */
export const ProcessorNotificationBody = z.record(z.string(), z.unknown()).openapi('ProcessorNotification', {
  description:
    'The processor’s own notification, exactly as it sends it: any JSON object, in the processor’s format (Stripe: an Event; Mercado Pago: a notification naming the order or payment). Not part of this API’s contract: the method’s connector reads it.',
  example: {
    id: 'evt_1QxYz2AbCdEfGhIj',
    type: 'payment_intent.succeeded',
    data: { object: { id: 'pi_3QxYz2AbCdEfGhIj' } },
  },
});

/**
 * The processor writes this URL's query string (Mercado Pago adds `data.id` and `type`, or `id` and
 * `topic`; a merchant may add its own when configuring the URL), so every parameter is accepted
 * (`looseObject`, which the input gate reads as such) and handed to the connector with the URL. The
 * description says so with a free-form parameter (`style: form`, `explode: true`).
 */
export const NotificationQuery = z.looseObject({
  'data.id': z.string().max(256).optional().openapi({ description: 'Mercado Pago: the order the news is about.' }),
  type: z.string().max(64).optional().openapi({ description: 'Mercado Pago: the kind of resource (`order`).' }),
  id: z.string().max(256).optional().openapi({ description: 'Mercado Pago (IPN): the resource the news is about.' }),
  topic: z.string().max(64).optional().openapi({ description: 'Mercado Pago (IPN): the kind of resource.' }),
  processor_parameters: z
    .record(z.string().max(256), z.string().max(2048))
    .optional()
    .openapi({
      param: { style: 'form', explode: true },
      example: { source_news: 'webhooks' },
      description:
        'Any other parameter the processor or the merchant put in the URL: accepted, and read by the connector only.',
    }),
});
