import { createRoute, z } from '@hono/zod-openapi';
import { SANDBOX_SIGNATURE_HEADER, signSandboxNotification, type SandboxCredentials } from '../../connectors/sandbox/index.ts';
import { createDb } from '../../db/client.ts';
import { ApiError } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { bearerSecurity, dataEnvelope, errorResponses, jsonContent, opaqueId, type AppOpenAPI, type AppRouteHandler } from '../../lib/openapi.ts';
import { requireAuth } from '../../middleware/auth.ts';
import { findPaymentMethodById, openSecrets } from '../../services/payment-methods.ts';
import { receiveProcessorNotification } from '../../services/payments/processor-news.ts';
import { toPaymentResource } from '../../services/payments/resources.ts';
import { findPayment } from '../../services/payments/store.ts';
import { PaymentSchema } from '../payments/payments.schemas.ts';

const ACTIONS = { approve: 'approved', decline: 'declined', expire: 'expired', fail: 'failed', charge_back: 'charged_back' } as const;

export const simulateProcessorNews = createRoute({
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
      payment_id: opaqueId('payment_id', 'pay_3kqz7w1v0c9m2x8bq4n6'),
      action: z
        .enum(['approve', 'decline', 'expire', 'fail', 'charge_back'])
        .openapi({ param: { name: 'action', in: 'path' }, description: '`charge_back`: the payer’s bank takes the payment’s money back (`charged_back_at` is set, event `payment.charged_back`).' }),
    }),
  },
  responses: {
    200: jsonContent(dataEnvelope(PaymentSchema), 'The payment after the news.'),
    ...errorResponses('unauthorized', 'insufficient_scope', 'not_found', 'payment_not_found', 'capability_not_supported', 'invalid_state_transition', 'concurrent_update'),
  },
});

const handler: AppRouteHandler<typeof simulateProcessorNews> = async (c) => {
  if (c.env.ENVIRONMENT !== 'test') throw new ApiError('not_found');
  const { payment_id, action } = c.req.valid('param');
  const auth = c.get('auth');
  const db = createDb(c.env);
  const scope = { ownerId: auth.ownerId, environment: c.env.ENVIRONMENT };
  const payment = await findPayment(db, scope, payment_id);
  if (!payment) throw new ApiError('payment_not_found');
  const method = await findPaymentMethodById(db, payment.paymentMethodId);
  if (!method || method.provider !== 'sandbox') throw new ApiError('capability_not_supported', 'Test helpers drive sandbox payment methods only.');
  if (payment.processorReference === null) throw new ApiError('invalid_state_transition', 'The sandbox never answered for this payment.');
  const rawBody = JSON.stringify({ id: newId('sbxevt'), resource: 'payment', reference: payment.processorReference, status: ACTIONS[action] });
  const { credentials } = await openSecrets(c.env, method);
  const headers = new Headers({ 'Content-Type': 'application/json', [SANDBOX_SIGNATURE_HEADER]: await signSandboxNotification(credentials as SandboxCredentials, rawBody) });
  await receiveProcessorNotification(c.env, method.id, { headers, rawBody, url: c.req.url });
  return c.json({ data: toPaymentResource((await findPayment(db, scope, payment.id))!) }, 200);
};

export function registerTestHelperRoutes(app: AppOpenAPI) {
  app.openapi(simulateProcessorNews, handler);
}
