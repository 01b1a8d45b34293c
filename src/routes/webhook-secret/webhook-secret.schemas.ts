import { z } from '@hono/zod-openapi';
import { Timestamp } from '../../lib/openapi.ts';

export const WebhookSecretSchema = z
  .object({
    secret: z.string().openapi({
      description: '`whsec_` + base64 of 32 bytes: the Standard Webhooks signing key of this owner and environment.',
      example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    }),
    previous_secret_expires_at: Timestamp.nullable().openapi({
      description: 'After a rotation, the previous secret also signs until then (24 hours).',
    }),
  })
  .openapi('WebhookSecret');
