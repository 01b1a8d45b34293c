import { z } from '@hono/zod-openapi';
import { PAYMENT_STATUSES } from '../../domain/payment-state.ts';
import { CreatedRangeQuery, Timestamp } from '../../lib/openapi.ts';
import { AmountSchema } from '../../services/payments/inputs.ts';

export const PaymentsReportQuery = z.object({
  ...CreatedRangeQuery,
  interval: z.enum(['day', 'hour']).default('day').openapi({
    description: 'One row per day of `tz` (default), or per hour (ranges of at most 48 hours).',
  }),
  group_by: z
    .enum(['payment_method'])
    .optional()
    .openapi({ description: 'Also one row per payment method (`payment_method` on each row).' }),
  tz: z.string().min(1).max(64).default('UTC').openapi({
    description: 'The IANA time zone whose days the rows are (e.g. `America/Sao_Paulo`); default `UTC`.',
    example: 'America/Sao_Paulo',
  }),
});

export const PaymentsReportRowSchema = z
  .object({
    start: Timestamp.openapi({ description: 'The interval’s start (the range’s own start for the first).' }),
    end: Timestamp.openapi({ description: 'The interval’s end, excluded (the range’s own end for the last).' }),
    status: z.enum(PAYMENT_STATUSES).openapi({ description: 'The payments’ status now.' }),
    currency: z.string().max(3).openapi({ example: 'USD' }),
    payment_method: z
      .string()
      .max(64)
      .optional()
      .openapi({ description: 'With `group_by=payment_method`.', example: '7f1c9a0e-2b4d-4e6f-8a1b-3c5d7e9f0a2b' }),
    count: z
      .number()
      .int()
      .min(1)
      .max(2_147_483_647)
      .openapi({ format: 'int32', description: 'Payments created in the interval, in this status.', example: 42 }),
    amount: AmountSchema.openapi({ description: 'Their amounts added up, in their currency.' }),
  })
  .openapi('PaymentsReportRow');
