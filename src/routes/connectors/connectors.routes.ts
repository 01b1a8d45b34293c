import { createRoute, z } from '@hono/zod-openapi';
import { requireAuth } from '../../middleware/auth.ts';
import { bearerSecurity, errorResponses, jsonContent, listEnvelope, PaginationQuery } from '../../lib/openapi.ts';
import { CapabilitySchema } from '../payment-methods/payment-methods.schemas.ts';

const JsonSchema = z.record(z.string(), z.unknown()).openapi({ description: 'JSON Schema (draft 2020-12).' });

export const ConnectorSchema = z
  .object({
    id: z.string().openapi({ example: 'cnd_sandbox_qr' }),
    provider: z.string().openapi({ example: 'sandbox' }),
    name: z.string().openapi({ example: 'Sandbox QR' }),
    type: z.string().openapi({ example: 'qr' }),
    versions: z.array(
      z.object({
        id: z.string().openapi({ description: 'The value of `connector_definition_version_id`.', example: 'cnv_sandbox_qr_v1' }),
        version: z.string().openapi({ example: '1' }),
        status: z.enum(['published', 'deprecated']),
        capabilities: z.array(CapabilitySchema),
        currencies: z.array(z.string()).openapi({ example: ['USD', 'BRL'] }),
        credentials_schema: JsonSchema,
        configuration_schema: JsonSchema,
      }),
    ),
  })
  .openapi('Connector');

export const listConnectors = createRoute({
  operationId: 'listConnectors',
  method: 'get',
  path: '/v1/connectors',
  tags: ['Connectors'],
  summary: 'List connectors and their versions',
  description: 'What a payment method can be built on: each version’s channel, capabilities, currencies and the JSON Schemas of its `credentials` and `configuration`.',
  security: bearerSecurity,
  middleware: [requireAuth({ accept: 'user' })],
  request: { query: PaginationQuery },
  responses: {
    200: jsonContent(listEnvelope(ConnectorSchema), 'A page of connectors.'),
    ...errorResponses('unauthorized'),
  },
});
