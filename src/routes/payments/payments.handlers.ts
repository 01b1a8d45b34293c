import type { Context } from 'hono';
import { createDb } from '../../db/client.ts';
import type { AppEnv } from '../../env.ts';
import { ApiError } from '../../lib/errors.ts';
import type { AppRouteHandler } from '../../lib/openapi.ts';
import { runIdempotent } from '../../middleware/idempotency.ts';
import { fromIso } from '../../lib/time.ts';
import { findRefund, listPayments as listOwnPayments, listRefunds as listPaymentRefunds } from '../../services/payments/reads.ts';
import { toPaymentResource, toRefundResource } from '../../services/payments/resources.ts';
import { findPayment, type PaymentOwnerScope } from '../../services/payments/store.ts';
import type * as routes from './payments.routes.ts';

// Idempotent operations answer with the stored response text itself, so their handlers return a raw
// Response; its shape is the one declared on the route (checked by the contract tests).

export const createPayment: AppRouteHandler<typeof routes.createPayment> = async (c) => {
  const body = c.req.valid('json');
  return runIdempotent(c, 'create_payment', { operation: 'create_payment', body }, body) as never;
};

/** Reads see the payments of the caller's owner in this deployment's environment. */
const readScope = (c: Context<AppEnv>): PaymentOwnerScope => ({ ownerId: c.get('auth').ownerId, environment: c.env.ENVIRONMENT });

export const listPayments: AppRouteHandler<typeof routes.listPayments> = async (c) => {
  const { limit, offset, external_reference, status, payment_method, created_gte, created_lt } = c.req.valid('query');
  const filters = {
    externalReference: external_reference,
    status,
    paymentMethodId: payment_method,
    createdFrom: created_gte === undefined ? undefined : fromIso(created_gte),
    createdBefore: created_lt === undefined ? undefined : fromIso(created_lt),
  };
  const { rows, total } = await listOwnPayments(createDb(c.env), readScope(c), filters, { limit, offset });
  return c.json({ data: rows.map((row) => toPaymentResource(row)), pagination: { limit, offset, total } }, 200);
};

export const getPayment: AppRouteHandler<typeof routes.getPayment> = async (c) => {
  const payment = await findPayment(createDb(c.env), readScope(c), c.req.valid('param').payment_id);
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

export const listRefunds: AppRouteHandler<typeof routes.listRefunds> = async (c) => {
  const { limit, offset } = c.req.valid('query');
  const page = await listPaymentRefunds(createDb(c.env), readScope(c), c.req.valid('param').payment_id, { limit, offset });
  if (!page) throw new ApiError('payment_not_found');
  return c.json({ data: page.rows.map(toRefundResource), pagination: { limit, offset, total: page.total } }, 200);
};

export const getRefund: AppRouteHandler<typeof routes.getRefund> = async (c) => {
  const { payment_id, refund_id } = c.req.valid('param');
  const { paymentFound, refund } = await findRefund(createDb(c.env), readScope(c), payment_id, refund_id);
  if (!paymentFound) throw new ApiError('payment_not_found');
  if (!refund) throw new ApiError('refund_not_found');
  return c.json({ data: toRefundResource(refund) }, 200);
};
