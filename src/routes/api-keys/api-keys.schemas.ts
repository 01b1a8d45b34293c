import { z } from '@hono/zod-openapi';
import { BUSINESS_SCOPES } from '../../domain/scopes.ts';
import { Timestamp } from '../../lib/openapi.ts';
import { ScopeSchema } from '../users/users.schemas.ts';

export const ApiKeySchema = z
  .object({
    id: z.string().openapi({ example: 'key_7m2x9c4v1b8n3k6q0z5w' }),
    name: z.string().openapi({ example: 'Checkout server' }),
    prefix: z
      .string()
      .openapi({ description: 'First characters of the secret, to tell keys apart.', example: 'sk_test_Xy3q' }),
    scopes: z.array(ScopeSchema),
    environment: z.enum(['test', 'live']),
    status: z.enum(['active', 'revoked']),
    created_at: Timestamp,
    last_used_at: Timestamp.nullable().openapi({ description: 'Updated at most once a minute.' }),
    revoked_at: Timestamp.nullable(),
  })
  .openapi('ApiKey');

export const CreatedApiKeySchema = ApiKeySchema.extend({
  secret: z.string().openapi({
    description: 'The key itself. Returned only in this response; store it now. Only its keyed hash is kept.',
    example: 'sk_test_3J9x8yQm2kP0vR7tL5nW1cZ4aB6dE8fG0hJ2kL4mN6p',
  }),
}).openapi('CreatedApiKey');

export const CreateApiKeyBody = z
  .strictObject({
    name: z.string().trim().min(1).max(200).openapi({ example: 'Checkout server' }),
    scopes: z
      .array(ScopeSchema)
      .min(1)
      .max(BUSINESS_SCOPES.length * 2),
    user_id: z
      .string()
      .min(1)
      .max(128)
      .optional()
      .openapi({ description: 'Admins only: create the key for this owner.' }),
  })
  .openapi('CreateApiKeyRequest');

export const ListApiKeysQuery = z.object({
  user_id: z.string().min(1).max(128).optional().openapi({ description: 'Admins only: list this owner’s keys.' }),
});
