import type { Context } from 'hono';
import { ownerScopeOf, type OwnerScope } from '../../domain/caller.ts';
import { ServiceError } from '../../lib/errors.ts';
import type { AppEnv, AppRouteHandler } from '../../lib/openapi.ts';
import { findDispute } from '../../services/disputes/find-dispute.ts';
import { listDisputes as listOwnDisputes } from '../../services/disputes/list-disputes.ts';
import { listPaymentDisputes as listDisputesOfPayment } from '../../services/disputes/list-payment-disputes.ts';
import { toDisputeResource } from '../../services/payments/resources.ts';
import type * as routes from './disputes.routes.ts';

const readScope = (c: Context<AppEnv>): OwnerScope => ownerScopeOf(c.get('auth'), c.get('deps').environment);

export const listDisputes: AppRouteHandler<typeof routes.listDisputes> = async (c) => {
  const { limit, offset, status } = c.req.valid('query');
  const { rows, total } = await listOwnDisputes(c.get('deps'), readScope(c), { status }, { limit, offset });
  return c.json({ data: rows.map(toDisputeResource), pagination: { limit, offset, total } }, 200);
};

export const getDispute: AppRouteHandler<typeof routes.getDispute> = async (c) => {
  const dispute = await findDispute(c.get('deps'), readScope(c), c.req.valid('param').dispute_id);
  if (!dispute) throw new ServiceError('dispute_not_found');
  return c.json({ data: toDisputeResource(dispute) }, 200);
};

export const listPaymentDisputes: AppRouteHandler<typeof routes.listPaymentDisputes> = async (c) => {
  const { limit, offset } = c.req.valid('query');
  const page = await listDisputesOfPayment(c.get('deps'), readScope(c), c.req.valid('param').payment_id, {
    limit,
    offset,
  });
  if (!page) throw new ServiceError('payment_not_found');
  return c.json({ data: page.rows.map(toDisputeResource), pagination: { limit, offset, total: page.total } }, 200);
};
