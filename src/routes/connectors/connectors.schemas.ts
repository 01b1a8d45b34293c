import { z } from '@hono/zod-openapi';
import { CapabilitySchema } from '../payment-methods/payment-methods.schemas.ts';

const JsonSchema = z.record(z.string(), z.unknown()).openapi({
  description: 'JSON Schema (draft 2020-12).',
  example: {
    type: 'object',
    properties: { qr_ttl_seconds: { type: 'integer', minimum: 60, maximum: 86400, default: 900 } },
    additionalProperties: false,
  },
});

export const ConnectorSchema = z
  .object({
    id: z.string().openapi({ example: 'cnd_sandbox_qr' }),
    provider: z.string().openapi({ example: 'sandbox' }),
    name: z.string().openapi({ example: 'Sandbox QR' }),
    type: z.string().openapi({ example: 'qr' }),
    versions: z.array(
      z.object({
        id: z
          .string()
          .openapi({ description: 'The value of `connector_definition_version_id`.', example: 'cnv_sandbox_qr_v1' }),
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
