import type { Context } from 'hono';
import { ownerScopeOf, type OwnerScope } from '../../domain/caller.ts';
import { ServiceError } from '../../lib/errors.ts';
import { pageOf, paginationOf, type AppEnv, type AppRouteHandler } from '../../lib/openapi.ts';
import { findDispute } from '../../services/disputes/find-dispute.ts';
import { listDisputes as listOwnDisputes } from '../../services/disputes/list-disputes.ts';
import { listPaymentDisputes as listDisputesOfPayment } from '../../services/disputes/list-payment-disputes.ts';
import { toDisputeResource } from '../../services/payments/resources.ts';
import type * as routes from './disputes.routes.ts';

const readScope = (c: Context<AppEnv>): OwnerScope => ownerScopeOf(c.get('auth'), c.get('deps').environment);

export const listDisputes: AppRouteHandler<typeof routes.listDisputes> = async (c) => {
  const query = c.req.valid('query');
  const page = pageOf(query);
  const listed = await listOwnDisputes(c.get('deps'), readScope(c), { status: query.status }, page);
  return c.json({ data: listed.rows.map(toDisputeResource), pagination: paginationOf(page, listed) }, 200);
};

export const getDispute: AppRouteHandler<typeof routes.getDispute> = async (c) => {
  const dispute = await findDispute(c.get('deps'), readScope(c), c.req.valid('param').dispute_id);
  if (!dispute) throw new ServiceError('dispute_not_found');
  return c.json({ data: toDisputeResource(dispute) }, 200);
};

export const listPaymentDisputes: AppRouteHandler<typeof routes.listPaymentDisputes> = async (c) => {
  const page = pageOf(c.req.valid('query'));
  const listed = await listDisputesOfPayment(c.get('deps'), readScope(c), c.req.valid('param').payment_id, page);
  if (!listed) throw new ServiceError('payment_not_found');
  return c.json({ data: listed.rows.map(toDisputeResource), pagination: paginationOf(page, listed) }, 200);
};
