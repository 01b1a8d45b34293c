import { createDb } from '../../db/client.ts';
import { ApiError } from '../../lib/errors.ts';
import type { AppRouteHandler } from '../../lib/openapi.ts';
import { runIdempotent } from '../../middleware/idempotency.ts';
import { toPaymentResource } from '../../services/payments/resources.ts';
import { findPayment } from '../../services/payments/store.ts';
import type * as routes from './payments.routes.ts';

// Idempotent operations answer with the stored response text itself, so their handlers return a raw
// Response; its shape is the one declared on the route (checked by the contract tests).

export const createPayment: AppRouteHandler<typeof routes.createPayment> = async (c) => {
  const body = c.req.valid('json');
  return runIdempotent(c, 'create_payment', { operation: 'create_payment', body }, body) as never;
};

export const getPayment: AppRouteHandler<typeof routes.getPayment> = async (c) => {
  const auth = c.get('auth');
  const payment = await findPayment(createDb(c.env), { ownerId: auth.ownerId, environment: c.env.ENVIRONMENT }, c.req.valid('param').payment_id);
  if (!payment) throw new ApiError('payment_not_found');
  return c.json({ data: toPaymentResource(payment) }, 200);
};

export const cancelPayment: AppRouteHandler<typeof routes.cancelPayment> = async (c) => {
  const { payment_id } = c.req.valid('param');
  return runIdempotent(c, 'cancel_payment', { operation: 'cancel_payment', paymentId: payment_id }, null) as never;
};

export const createRefund: AppRouteHandler<typeof routes.createRefund> = async (c) => {
  const { payment_id } = c.req.valid('param');
  const body = c.req.valid('json');
  return runIdempotent(c, 'create_refund', { operation: 'create_refund', paymentId: payment_id, body }, body) as never;
};
