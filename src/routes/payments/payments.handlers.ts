import type { Context } from 'hono';
import { callerOf } from '../../domain/caller.ts';
import type { IdempotentOperation } from '../../domain/idempotency.ts';
import type { IdempotentCommand } from '../../durable-objects/idempotency-store.ts';
import { ApiError } from '../../lib/errors.ts';
import type { AppEnv, AppRouteHandler } from '../../lib/openapi.ts';
import { fromIso } from '../../lib/time.ts';
import { runIdempotent } from '../../services/idempotency.ts';
import {
  findRefund,
  listPayments as listOwnPayments,
  listRefunds as listPaymentRefunds,
} from '../../services/payments/reads.ts';
import { toPaymentResource, toRefundResource } from '../../services/payments/resources.ts';
import { findPayment, type PaymentOwnerScope } from '../../services/payments/store.ts';
import type * as routes from './payments.routes.ts';

// Idempotent operations answer with the stored response text itself, so their handlers return a raw
// Response; its shape is the one declared on the route (checked by the contract tests).
async function idempotent(
  c: Context<AppEnv>,
  operation: IdempotentOperation,
  command: IdempotentCommand,
  body: unknown,
): Promise<Response> {
  const answer = await runIdempotent(c.get('deps'), {
    caller: callerOf(c.get('auth')),
    operation,
    key: c.req.header('idempotency-key')!,
    method: c.req.method,
    path: c.req.path,
    body,
    command,
    requestId: c.get('requestId'),
  });
  if (answer.errorCode !== undefined) c.set('errorCode', answer.errorCode);
  return new Response(answer.text, { status: answer.status, headers: answer.headers });
}

export const createPayment: AppRouteHandler<typeof routes.createPayment> = async (c) => {
  const body = c.req.valid('json');
  return idempotent(c, 'create_payment', { operation: 'create_payment', body }, body) as never;
};

/** Reads see the payments of the caller's owner in this deployment's environment. */
const readScope = (c: Context<AppEnv>): PaymentOwnerScope => ({
  ownerId: c.get('auth').ownerId,
  environment: c.get('deps').environment,
});

export const listPayments: AppRouteHandler<typeof routes.listPayments> = async (c) => {
  const { limit, offset, external_reference, status, payment_method, created_gte, created_lt } = c.req.valid('query');
  const filters = {
    externalReference: external_reference,
    status,
    paymentMethodId: payment_method,
    createdFrom: created_gte === undefined ? undefined : fromIso(created_gte),
    createdBefore: created_lt === undefined ? undefined : fromIso(created_lt),
  };
  const { rows, total } = await listOwnPayments(c.get('deps'), readScope(c), filters, { limit, offset });
  return c.json({ data: rows.map((row) => toPaymentResource(row)), pagination: { limit, offset, total } }, 200);
};

export const getPayment: AppRouteHandler<typeof routes.getPayment> = async (c) => {
  const payment = await findPayment(c.get('deps'), readScope(c), c.req.valid('param').payment_id);
  if (!payment) throw new ApiError('payment_not_found');
  return c.json({ data: toPaymentResource(payment) }, 200);
};

export const cancelPayment: AppRouteHandler<typeof routes.cancelPayment> = async (c) => {
  const { payment_id } = c.req.valid('param');
  return idempotent(c, 'cancel_payment', { operation: 'cancel_payment', paymentId: payment_id }, null) as never;
};

export const createRefund: AppRouteHandler<typeof routes.createRefund> = async (c) => {
  const { payment_id } = c.req.valid('param');
  const body = c.req.valid('json');
  return idempotent(c, 'create_refund', { operation: 'create_refund', paymentId: payment_id, body }, body) as never;
};

export const listRefunds: AppRouteHandler<typeof routes.listRefunds> = async (c) => {
  const { limit, offset } = c.req.valid('query');
  const page = await listPaymentRefunds(c.get('deps'), readScope(c), c.req.valid('param').payment_id, {
    limit,
    offset,
  });
  if (!page) throw new ApiError('payment_not_found');
  return c.json({ data: page.rows.map(toRefundResource), pagination: { limit, offset, total: page.total } }, 200);
};

export const getRefund: AppRouteHandler<typeof routes.getRefund> = async (c) => {
  const { payment_id, refund_id } = c.req.valid('param');
  const { paymentFound, refund } = await findRefund(c.get('deps'), readScope(c), payment_id, refund_id);
  if (!paymentFound) throw new ApiError('payment_not_found');
  if (!refund) throw new ApiError('refund_not_found');
  return c.json({ data: toRefundResource(refund) }, 200);
};
