import type { Context } from 'hono';
import { createDb, type Db } from '../../db/client.ts';
import type { AppEnv } from '../../env.ts';
import { ApiError } from '../../lib/errors.ts';
import type { AppRouteHandler } from '../../lib/openapi.ts';
import { resolveOwner } from '../../services/owners.ts';
import * as methods from '../../services/payment-methods.ts';
import type * as routes from './account-payment-methods.routes.ts';

export const createAccountPaymentMethod: AppRouteHandler<typeof routes.createAccountPaymentMethod> = async (c) => {
  const { user_id, ...input } = c.req.valid('json');
  const db = createDb(c.env);
  const owner = await resolveOwner(db, c.get('auth'), user_id);
  const row = await methods.createPaymentMethod(c.env, db, owner.id, input);
  return c.json({ data: methods.toAccountPaymentMethod(row) }, 201);
};

export const listAccountPaymentMethods: AppRouteHandler<typeof routes.listAccountPaymentMethods> = async (c) => {
  const { limit, offset, user_id } = c.req.valid('query');
  const db = createDb(c.env);
  const owner = await resolveOwner(db, c.get('auth'), user_id);
  const { rows, total } = await methods.listAccountPaymentMethods(db, owner.id, c.env.ENVIRONMENT, limit, offset);
  return c.json({ data: rows.map(methods.toAccountPaymentMethod), pagination: { limit, offset, total } }, 200);
};

export const getAccountPaymentMethod: AppRouteHandler<typeof routes.getAccountPaymentMethod> = async (c) => {
  const db = createDb(c.env);
  const row = await visibleMethod(c, db, c.req.valid('param').payment_method_id);
  return c.json({ data: methods.toAccountPaymentMethod(row) }, 200);
};

export const updateAccountPaymentMethod: AppRouteHandler<typeof routes.updateAccountPaymentMethod> = async (c) => {
  const db = createDb(c.env);
  const row = await visibleMethod(c, db, c.req.valid('param').payment_method_id);
  const updated = await methods.updatePaymentMethod(c.env, db, row, c.req.valid('json'));
  return c.json({ data: methods.toAccountPaymentMethod(updated) }, 200);
};

export const deleteAccountPaymentMethod: AppRouteHandler<typeof routes.deleteAccountPaymentMethod> = async (c) => {
  const db = createDb(c.env);
  // A deleted method may be deleted again (idempotent); unknown and foreign ones are still 404.
  const row = await visibleMethod(c, db, c.req.valid('param').payment_method_id, true);
  await methods.deletePaymentMethod(db, row);
  return c.body(null, 204);
};

export const linkApiKey: AppRouteHandler<typeof routes.linkApiKey> = async (c) => {
  const db = createDb(c.env);
  const row = await visibleMethod(c, db, c.req.valid('param').payment_method_id);
  const link = await methods.linkApiKey(db, row, c.req.valid('json').api_key_id);
  return c.json({ data: methods.toLinkResource(link) }, 201);
};

export const disableApiKeyLink: AppRouteHandler<typeof routes.disableApiKeyLink> = async (c) => {
  const db = createDb(c.env);
  const { payment_method_id, api_key_id } = c.req.valid('param');
  const row = await visibleMethod(c, db, payment_method_id);
  const link = await methods.disableApiKeyLink(db, row, api_key_id);
  return c.json({ data: methods.toLinkResource(link) }, 200);
};

async function visibleMethod(c: Context<AppEnv>, db: Db, id: string, includeDeleted = false) {
  const auth = c.get('auth');
  const row = await methods.findAccountPaymentMethod(db, { ownerId: auth.ownerId, isAdmin: auth.role === 'admin' }, c.env.ENVIRONMENT, id, includeDeleted);
  if (!row) throw new ApiError('payment_method_not_found');
  return row;
}
