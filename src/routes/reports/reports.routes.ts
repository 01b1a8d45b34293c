import { createRoute, z } from '@hono/zod-openapi';
import { bearerSecurity, errorResponses, jsonContent } from '../../lib/openapi.ts';
import { requireAuth } from '../../middleware/auth.ts';
import { PaymentsReportQuery, PaymentsReportRowSchema } from './reports.schemas.ts';

export const reportPayments = createRoute({
  operationId: 'reportPayments',
  method: 'get',
  path: '/v1/reports/payments',
  tags: ['Payments'],
  summary: 'Your payments counted and summed per day or hour',
  description: [
    'Scope `payments:read` (API key) or a user token, as `GET /v1/payments`. The payments created in `[created_gte, created_lt)` (default: the last 30 days; at most 366 days), counted and summed per interval (the days of `tz`, or hours for ranges of at most 48 hours), status and currency, and payment method with `group_by=payment_method`:',
    'one flat row each, `{ start, end, status, currency, payment_method?, count, amount }`, ordered by `start`, then `status`, `currency` and `payment_method`; rows without payments are left out, so a chart or a CSV takes it as it is.',
    'The first and last rows are clipped to the range; the counts add up to `GET /v1/payments`’s `total` over the same range. Read from counters kept with the payments, so it costs the same whatever your history (docs/limits.md). A range longer than 366 days, an hourly one longer than 48 hours, an empty one or an unknown time zone is `400 invalid_request` naming the parameter.',
  ].join(' '),
  security: bearerSecurity,
  middleware: [requireAuth({ accept: 'any', scope: 'payments:read' })],
  request: { query: PaymentsReportQuery },
  responses: {
    200: jsonContent(z.object({ data: z.array(PaymentsReportRowSchema).max(100_000) }), 'The report.'),
    ...errorResponses('unauthorized', 'insufficient_scope', 'rate_limited'),
  },
});
