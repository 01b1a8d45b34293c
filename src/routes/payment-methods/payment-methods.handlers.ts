import { callerOf } from '../../domain/caller.ts';
import { ServiceError } from '../../lib/errors.ts';
import { pageOf, paginationOf, type AppRouteHandler } from '../../lib/openapi.ts';
import { toPublicPaymentMethod } from '../../services/payment-methods/resources.ts';
import * as methods from '../../services/payment-methods/store.ts';
import { readTerminal } from '../../services/terminals.ts';
import type * as routes from './payment-methods.routes.ts';

export const listPaymentMethods: AppRouteHandler<typeof routes.listPaymentMethods> = async (c) => {
  const page = pageOf(c.req.valid('query'));
  const listed = await methods.listPublicPaymentMethods(c.get('deps'), callerOf(c.get('auth')), page);
  return c.json({ data: listed.rows.map(toPublicPaymentMethod), pagination: paginationOf(page, listed) }, 200);
};

export const getPaymentMethod: AppRouteHandler<typeof routes.getPaymentMethod> = async (c) => {
  const row = await methods.findUsablePaymentMethod(
    c.get('deps'),
    callerOf(c.get('auth')),
    c.req.valid('param').payment_method_id,
  );
  if (!row) throw new ServiceError('payment_method_not_found');
  return c.json({ data: toPublicPaymentMethod(row) }, 200);
};

export const getPaymentMethodTerminal: AppRouteHandler<typeof routes.getPaymentMethodTerminal> = async (c) => {
  const terminal = await readTerminal(c.get('deps'), callerOf(c.get('auth')), c.req.valid('param').payment_method_id);
  return c.json({ data: terminal }, 200);
};
