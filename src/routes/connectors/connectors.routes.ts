import { createRoute } from '@hono/zod-openapi';
import { requireAuth } from '../../middleware/auth.ts';
import { bearerSecurity, jsonContent, listEnvelope, listErrorResponses, PaginationQuery } from '../../lib/openapi.ts';
import { ConnectorSchema } from './connectors.schemas.ts';

export const listConnectors = createRoute({
  operationId: 'listConnectors',
  method: 'get',
  path: '/v1/connectors',
  tags: ['Connectors'],
  summary: 'List connectors and their versions',
  description:
    'What a payment method can be built on in this deployment: each version’s channel, capabilities, currencies and the JSON Schemas of its `credentials` and `configuration`. The `sandbox` provider (simulated payments, no money moves) is offered in the `test` environment only: `live` does not list it and refuses methods on it.',
  security: bearerSecurity,
  middleware: [requireAuth({ accept: 'user' })],
  request: { query: PaginationQuery },
  responses: {
    200: jsonContent(listEnvelope(ConnectorSchema), 'A page of connectors.'),
    ...listErrorResponses('unauthorized'),
  },
});
