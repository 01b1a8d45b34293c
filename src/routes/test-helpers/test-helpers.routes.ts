import { createRoute, z } from '@hono/zod-openapi';
import { bearerSecurity, dataEnvelope, errorResponses, jsonContent, opaqueId } from '../../lib/openapi.ts';
import { requireAuth } from '../../middleware/auth.ts';
import { PaymentSchema } from '../payments/payments.schemas.ts';

// The operation id says "news" because it is part of the published API; in the code it is a processor notification.
export const simulateProcessorNotification = createRoute({
  operationId: 'simulateProcessorNews',
  method: 'post',
  path: '/v1/test-helpers/payments/{payment_id}/{action}',
  tags: ['Test helpers'],
  summary: 'Simulate the processor’s news for a sandbox payment (test only)',
  description:
    'Only in the `test` environment (404 in `live`); same credentials as reading the payment. Sends a signed sandbox notification through the same path as a real processor notification: state machine, `updated_at`, webhook. News the state machine refuses (e.g. `approve` on an expired payment) changes nothing; the payment is returned as it is.',
  security: bearerSecurity,
  middleware: [requireAuth({ accept: 'any', scope: 'payments:read' })],
  request: {
    params: z.object({
      payment_id: opaqueId('payment_id', 'pay_3kqz7w1v0c9m2x8bq4n6', 'The payment (`pay_...`).'),
      action: z.enum(['approve', 'decline', 'expire', 'fail', 'charge_back']).openapi({
        param: { name: 'action', in: 'path' },
        description:
          '`charge_back`: the payer’s bank takes the payment’s money back (`charged_back_at` is set, event `payment.charged_back`).',
      }),
    }),
  },
  responses: {
    200: jsonContent(dataEnvelope(PaymentSchema), 'The payment after the news.'),
    ...errorResponses(
      'unauthorized',
      'insufficient_scope',
      'not_found',
      'payment_not_found',
      'capability_not_supported',
      'invalid_state_transition',
      'concurrent_update',
    ),
  },
});
