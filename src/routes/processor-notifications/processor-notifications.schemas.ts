import { z } from '@hono/zod-openapi';

export const ReceiptSchema = z
  .object({
    received: z.literal(true),
    outcome: z
      .enum(['applied', 'ignored', 'duplicate', 'unknown_resource'])
      .openapi({ description: '`ignored`: a late or out-of-order notification the state machine refused.' }),
  })
  .openapi('NotificationReceipt');
