import type { Context } from 'hono';
import { ServiceError } from '../../lib/errors.ts';
import { pageOf, paginationOf, type AppEnv, type AppRouteHandler } from '../../lib/openapi.ts';
import { resolveOwner } from '../../services/owners.ts';
import * as links from '../../services/payment-methods/api-key-links.ts';
import { toAccountPaymentMethod, toLinkResource } from '../../services/payment-methods/resources.ts';
import * as methods from '../../services/payment-methods/store.ts';
import type * as routes from './account-payment-methods.routes.ts';

export const createAccountPaymentMethod: AppRouteHandler<typeof routes.createAccountPaymentMethod> = async (c) => {
  const deps = c.get('deps');
  const { user_id, ...input } = c.req.valid('json');
  const { owner } = await resolveOwner(deps, c.get('auth'), user_id, c.req.method);
  const row = await methods.createPaymentMethod(deps, owner.id, input);
  return c.json({ data: toAccountPaymentMethod(row) }, 201);
};

export const listAccountPaymentMethods: AppRouteHandler<typeof routes.listAccountPaymentMethods> = async (c) => {
  const deps = c.get('deps');
  const query = c.req.valid('query');
  const page = pageOf(query);
  const { owner } = await resolveOwner(deps, c.get('auth'), query.user_id, c.req.method);
  const listed = await methods.listAccountPaymentMethods(deps, owner.id, page);
  return c.json({ data: listed.rows.map(toAccountPaymentMethod), pagination: paginationOf(page, listed) }, 200);
};

export const getAccountPaymentMethod: AppRouteHandler<typeof routes.getAccountPaymentMethod> = async (c) => {
  const row = await visibleMethod(c, c.req.valid('param').payment_method_id);
  return c.json({ data: toAccountPaymentMethod(row) }, 200);
};

export const updateAccountPaymentMethod: AppRouteHandler<typeof routes.updateAccountPaymentMethod> = async (c) => {
  const row = await visibleMethod(c, c.req.valid('param').payment_method_id);
  const updated = await methods.updatePaymentMethod(c.get('deps'), row, c.req.valid('json'));
  return c.json({ data: toAccountPaymentMethod(updated) }, 200);
};

export const deleteAccountPaymentMethod: AppRouteHandler<typeof routes.deleteAccountPaymentMethod> = async (c) => {
  // A deleted method may be deleted again (idempotent); unknown and foreign ones are still 404.
  const row = await visibleMethod(c, c.req.valid('param').payment_method_id, true);
  await methods.deletePaymentMethod(c.get('deps'), row);
  return c.body(null, 204);
};

export const linkApiKey: AppRouteHandler<typeof routes.linkApiKey> = async (c) => {
  const row = await visibleMethod(c, c.req.valid('param').payment_method_id);
  const link = await links.linkApiKey(c.get('deps'), row, c.req.valid('json').api_key_id);
  return c.json({ data: toLinkResource(link) }, 201);
};

export const disableApiKeyLink: AppRouteHandler<typeof routes.disableApiKeyLink> = async (c) => {
  const { payment_method_id, api_key_id } = c.req.valid('param');
  const row = await visibleMethod(c, payment_method_id);
  const link = await links.disableApiKeyLink(c.get('deps'), row, api_key_id);
  return c.json({ data: toLinkResource(link) }, 200);
};

async function visibleMethod(c: Context<AppEnv>, id: string, includeDeleted = false) {
  const auth = c.get('auth');
  const row = await methods.findAccountPaymentMethod(
    c.get('deps'),
    { ownerId: auth.ownerId, isAdmin: auth.role === 'admin' },
    id,
    includeDeleted,
  );
  if (!row) throw new ServiceError('payment_method_not_found');
  return row;
}
