import { z } from '@hono/zod-openapi';
import { connectorDefinitionsIn } from '../../connectors/registry.ts';
import type { ConnectorDefinition } from '../../connectors/types.ts';
import { pageOfItems } from '../../db/paging.ts';
import { pageOf, paginationOf, type AppRouteHandler } from '../../lib/openapi.ts';
import type * as routes from './connectors.routes.ts';

const jsonSchemaOf = (schema: z.ZodType) =>
  z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;

function toConnectorResource(definition: ConnectorDefinition) {
  return {
    id: definition.id,
    provider: definition.provider,
    name: definition.name,
    type: definition.type,
    versions: definition.versions.map((v) => ({
      id: v.id,
      version: v.version,
      status: v.status,
      capabilities: v.capabilities,
      currencies: v.currencies,
      credentials_schema: jsonSchemaOf(v.credentialsSchema),
      configuration_schema: jsonSchemaOf(v.configurationSchema),
    })),
  };
}

export const listConnectors: AppRouteHandler<typeof routes.listConnectors> = (c) => {
  const page = pageOf(c.req.valid('query'));
  const listed = pageOfItems(connectorDefinitionsIn(c.get('deps').environment), page);
  return c.json({ data: listed.rows.map(toConnectorResource), pagination: paginationOf(page, listed) }, 200);
};
