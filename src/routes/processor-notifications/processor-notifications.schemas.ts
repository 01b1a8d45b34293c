import { z } from '@hono/zod-openapi';

export const ReceiptSchema = z
  .object({
    received: z.literal(true),
    outcome: z
      .enum(['applied', 'ignored', 'duplicate', 'unknown_resource'])
      .openapi({ description: '`ignored`: a late or out-of-order notification the state machine refused.' }),
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
