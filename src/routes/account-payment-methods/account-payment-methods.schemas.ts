import { z } from '@hono/zod-openapi';
import { Timestamp } from '../../lib/openapi.ts';
import {
  CapabilitySchema,
  ChannelSchema,
  DisplayConfigurationSchema,
  ProviderSchema,
} from '../payment-methods/payment-methods.schemas.ts';

export const AccountPaymentMethodSchema = z
  .object({
    id: z.string().uuid().openapi({ example: '5b0e7c52-3f57-4b8e-9a55-0e4d7c1b2a91' }),
    user_id: z.string().openapi({ example: 'usr_4n8d2k7q1x9m3v5b0c6z' }),
    connector_definition_version_id: z.string().openapi({ example: 'cnv_sandbox_qr_v1' }),
    name: z.string(),
    type: ChannelSchema,
    provider: ProviderSchema,
    environment: z.enum(['test', 'live']),
    status: z.enum(['active', 'inactive']),
    capabilities: z.array(CapabilitySchema),
    display_configuration: z.record(z.string(), z.unknown()).openapi({ example: { label: 'Front counter' } }),
    enabled: z.boolean(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi('AccountPaymentMethod');

const Secrets = z.record(z.string(), z.unknown());

export const CreateAccountPaymentMethodBody = z
  .strictObject({
    connector_definition_version_id: z
      .string()
      .min(1)
      .max(128)
      .openapi({ description: 'A version id from `GET /v1/connectors`.', example: 'cnv_sandbox_qr_v1' }),
    name: z.string().trim().min(1).max(200).openapi({ example: 'Counter QR' }),
    credentials: Secrets.openapi({
      description:
        'Write-only; validated against the version’s `credentials_schema`; encrypted at rest; never returned.',
      example: { api_key: 'sandbox-key-123' },
    }),
    configuration: Secrets.optional().openapi({
      description: 'Write-only; validated against the version’s `configuration_schema` (defaults applied).',
      example: { qr_ttl_seconds: 900 },
    }),
    display_configuration: DisplayConfigurationSchema.optional(),
    capabilities: z
      .array(CapabilitySchema)
      .max(3)
      .optional()
      .openapi({ description: 'Each must be supported by the version; default: all of the version’s.' }),
    user_id: z
      .string()
      .min(1)
      .max(128)
      .optional()
      .openapi({ description: 'Admins only: create the method for this owner.' }),
  })
  .openapi('CreateAccountPaymentMethodRequest');

export const UpdateAccountPaymentMethodBody = z
  .strictObject({
    name: z.string().trim().min(1).max(200).optional(),
    credentials: Secrets.optional().openapi({
      description: 'Rotates the credentials; validated, never echoed.',
      example: { api_key: 'sandbox-key-456' },
    }),
    configuration: Secrets.optional().openapi({
      description: 'Replaces the configuration; validated, never echoed.',
      example: { qr_ttl_seconds: 600 },
    }),
    display_configuration: DisplayConfigurationSchema.optional(),
    capabilities: z.array(CapabilitySchema).max(3).optional(),
    enabled: z.boolean().optional().openapi({
      description:
        '`false` makes the method `inactive` (new operations refused, history kept); `true` makes it `active` again.',
    }),
  })
  .openapi('UpdateAccountPaymentMethodRequest');

export const ApiKeyLinkSchema = z
  .object({
    api_key_id: z.string(),
    payment_method_id: z.string().uuid(),
    enabled: z.boolean(),
    created_at: Timestamp,
  })
  .openapi('ApiKeyLink');

export const LinkApiKeyBody = z
  .strictObject({ api_key_id: z.string().min(1).max(128).openapi({ example: 'key_7m2x9c4v1b8n3k6q0z5w' }) })
  .openapi('LinkApiKeyRequest');
