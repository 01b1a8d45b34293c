import type { Context } from 'hono';
import { ownerScopeOf, type OwnerScope } from '../../domain/caller.ts';
import { answerOperation } from '../../http/operations.ts';
import { ServiceError } from '../../lib/errors.ts';
import { pageOf, paginationOf, type AppEnv, type AppRouteHandler } from '../../lib/openapi.ts';
import { fromIso } from '../../lib/time.ts';
import { OPERATIONS } from '../../services/operations/registry.ts';
import {
  findRefund,
  listPayments as listOwnPayments,
  listRefunds as listPaymentRefunds,
} from '../../services/payments/reads.ts';
import { toPaymentResource, toRefundResource } from '../../services/payments/resources.ts';
import { findPayment } from '../../services/payments/store.ts';
import type * as routes from './payments.routes.ts';

export const createPayment: AppRouteHandler<typeof routes.createPayment> = async (c) =>
  answerOperation(c, OPERATIONS.create_payment, { body: c.req.valid('json') }) as never;

/** Reads see the payments of the caller's owner in this deployment's environment. */
const readScope = (c: Context<AppEnv>): OwnerScope => ownerScopeOf(c.get('auth'), c.get('deps').environment);

export const listPayments: AppRouteHandler<typeof routes.listPayments> = async (c) => {
  const query = c.req.valid('query');
  const { external_reference, status, payment_method, created_gte, created_lt } = query;
  const page = pageOf(query);
  const filters = {
    externalReference: external_reference,
    status,
    paymentMethodId: payment_method,
    createdFrom: created_gte === undefined ? undefined : fromIso(created_gte),
    createdBefore: created_lt === undefined ? undefined : fromIso(created_lt),
  };
  const listed = await listOwnPayments(c.get('deps'), readScope(c), filters, page);
  return c.json(
    { data: listed.rows.map((row) => toPaymentResource(row)), pagination: paginationOf(page, listed) },
    200,
  );
};

export const getPayment: AppRouteHandler<typeof routes.getPayment> = async (c) => {
  const payment = await findPayment(c.get('deps'), readScope(c), c.req.valid('param').payment_id);
  if (!payment) throw new ServiceError('payment_not_found');
  return c.json({ data: toPaymentResource(payment) }, 200);
};

export const cancelPayment: AppRouteHandler<typeof routes.cancelPayment> = async (c) =>
  answerOperation(c, OPERATIONS.cancel_payment, { paymentId: c.req.valid('param').payment_id }) as never;

export const createRefund: AppRouteHandler<typeof routes.createRefund> = async (c) =>
  answerOperation(c, OPERATIONS.create_refund, {
    paymentId: c.req.valid('param').payment_id,
    body: c.req.valid('json'),
  }) as never;

export const listRefunds: AppRouteHandler<typeof routes.listRefunds> = async (c) => {
  const page = pageOf(c.req.valid('query'));
  const listed = await listPaymentRefunds(c.get('deps'), readScope(c), c.req.valid('param').payment_id, page);
  if (!listed) throw new ServiceError('payment_not_found');
  return c.json({ data: listed.rows.map(toRefundResource), pagination: paginationOf(page, listed) }, 200);
};

export const getRefund: AppRouteHandler<typeof routes.getRefund> = async (c) => {
  const { payment_id, refund_id } = c.req.valid('param');
  const { paymentFound, refund } = await findRefund(c.get('deps'), readScope(c), payment_id, refund_id);
  if (!paymentFound) throw new ServiceError('payment_not_found');
  if (!refund) throw new ServiceError('refund_not_found');
  return c.json({ data: toRefundResource(refund) }, 200);
};
