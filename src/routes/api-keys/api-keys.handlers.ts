import { ServiceError } from '../../lib/errors.ts';
import { pageOf, paginationOf, type AppRouteHandler } from '../../lib/openapi.ts';
import { resolveOwner } from '../../services/owners.ts';
import * as apiKeys from '../../services/api-keys.ts';
import type * as routes from './api-keys.routes.ts';

export const createApiKey: AppRouteHandler<typeof routes.createApiKey> = async (c) => {
  const deps = c.get('deps');
  const body = c.req.valid('json');
  const { owner } = await resolveOwner(deps, c.get('auth'), body.user_id, c.req.method);
  const missing = body.scopes.filter((scope) => !owner.scopes.includes(scope));
  if (missing.length > 0) {
    throw new ServiceError('insufficient_scope', 'A key cannot have scopes its owner lacks.', {
      details: { missing_scopes: [...new Set(missing)] },
    });
  }
  const { row, secret } = await apiKeys.createApiKey(deps, { ownerId: owner.id, name: body.name, scopes: body.scopes });
  return c.json({ data: { ...apiKeys.toApiKeyResource(row), secret } }, 201);
};

export const listApiKeys: AppRouteHandler<typeof routes.listApiKeys> = async (c) => {
  const deps = c.get('deps');
  const query = c.req.valid('query');
  const page = pageOf(query);
  const { owner } = await resolveOwner(deps, c.get('auth'), query.user_id, c.req.method);
  const listed = await apiKeys.listApiKeys(deps, owner.id, page);
  return c.json({ data: listed.rows.map(apiKeys.toApiKeyResource), pagination: paginationOf(page, listed) }, 200);
};

export const revokeApiKey: AppRouteHandler<typeof routes.revokeApiKey> = async (c) => {
  const deps = c.get('deps');
  const auth = c.get('auth');
  const row = await apiKeys.findApiKey(
    deps,
    auth.role === 'admin' ? null : auth.ownerId,
    c.req.valid('param').api_key_id,
  );
  if (!row) throw new ServiceError('api_key_not_found');
  return c.json({ data: apiKeys.toApiKeyResource(await apiKeys.revokeApiKey(deps, row)) }, 200);
};
