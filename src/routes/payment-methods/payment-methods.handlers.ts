import { createDb } from '../../db/client.ts';
import { ApiError } from '../../lib/errors.ts';
import type { AppRouteHandler } from '../../lib/openapi.ts';
import type { AuthContext } from '../../middleware/auth.ts';
import * as methods from '../../services/payment-methods.ts';
import type * as routes from './payment-methods.routes.ts';

export const publicCaller = (auth: AuthContext): methods.PublicCaller =>
  auth.kind === 'api_key' ? { kind: 'api_key', apiKeyId: auth.apiKeyId, ownerId: auth.ownerId } : { kind: 'user', ownerId: auth.ownerId };

export const listPaymentMethods: AppRouteHandler<typeof routes.listPaymentMethods> = async (c) => {
  const { limit, offset } = c.req.valid('query');
  const { rows, total } = await methods.listPublicPaymentMethods(createDb(c.env), publicCaller(c.get('auth')), c.env.ENVIRONMENT, limit, offset);
  return c.json({ data: rows.map(methods.toPublicPaymentMethod), pagination: { limit, offset, total } }, 200);
};

export const getPaymentMethod: AppRouteHandler<typeof routes.getPaymentMethod> = async (c) => {
  const row = await methods.findUsablePaymentMethod(createDb(c.env), publicCaller(c.get('auth')), c.env.ENVIRONMENT, c.req.valid('param').payment_method_id);
  if (!row) throw new ApiError('payment_method_not_found');
  return c.json({ data: methods.toPublicPaymentMethod(row) }, 200);
};
