import { z } from '@hono/zod-openapi';
import { CAPABILITIES } from '../../connectors/types.ts';
import { Timestamp } from '../../lib/openapi.ts';

export const CapabilitySchema = z.enum(CAPABILITIES).openapi('Capability');
export const ChannelSchema = z
  .string()
  .openapi({ description: 'Normalized channel, e.g. `pos` or `qr`; tolerate new values.', example: 'qr' });
export const ProviderSchema = z
  .string()
  .openapi({ description: 'Processor that executes operations, e.g. `sandbox`.', example: 'sandbox' });

const SECRET_LIKE_KEY = /(secret|password|passwd|token|api[_-]?key|credential|private)/i;

/** Presentation data: flat, small, and refused when a key looks like it carries a secret. */
export const DisplayConfigurationSchema = z
  .record(z.string().min(1).max(64), z.union([z.string().max(500), z.number(), z.boolean()]))
  .superRefine((value, ctx) => {
    const keys = Object.keys(value);
    if (keys.length > 50) ctx.addIssue({ code: 'custom', message: 'At most 50 keys' });
    for (const key of keys) {
      if (SECRET_LIKE_KEY.test(key))
        ctx.addIssue({ code: 'custom', path: [key], message: 'Must not carry secrets; put them in credentials' });
    }
  })
  .openapi('DisplayConfiguration', {
    description:
      'Non-sensitive presentation data (at most 50 flat keys), never read by the service: a field of the version’s `configuration_schema` (e.g. `qr_ttl_seconds`) is refused here; send it in `configuration`.',
    example: { label: 'Front counter', color: '#0a7' },
  });

export const PublicPaymentMethodSchema = z
  .object({
    id: z.string().uuid().openapi({ example: '5b0e7c52-3f57-4b8e-9a55-0e4d7c1b2a91' }),
    name: z.string().openapi({ example: 'Counter QR' }),
    type: ChannelSchema,
    provider: ProviderSchema,
    environment: z.enum(['test', 'live']),
    status: z.enum(['active', 'inactive']).openapi({ description: 'Only `active` methods take new operations.' }),
    capabilities: z.array(CapabilitySchema),
    metadata: z
      .record(z.string(), z.unknown())
      .openapi({ description: 'Non-sensitive presentation data.', example: { label: 'Front counter' } }),
    created_at: Timestamp,
  })
  .openapi('PaymentMethod');

export const TerminalSchema = z
  .object({
    payment_method: z.string().uuid().openapi({ description: 'The POS payment method whose terminal this is.' }),
    processor_id: z.string().openapi({
      description: 'The processor’s id of the device (a Stripe reader `tmr_…`, a Mercado Pago Point terminal id).',
      example: 'tmr_FDOt2wlRZEdpd7',
    }),
    status: z.string().openapi({
      description:
        '`online`: can take a payment. `offline`: a payment sent now is refused at once (`409 terminal_unavailable`). `busy`: doing something else (`busy_with`); a payment is refused until it is done. `unknown`: the processor does not report connectivity (Mercado Pago); never read it as online. Tolerate future values.',
      example: 'online',
    }),
    busy_with: z
      .object({
        kind: z.string().openapi({
          description: '`payment`, `refund`, `setup` (saving a card), `input` (collecting input on screen) or `other`.',
          example: 'payment',
        }),
        processor_reference: z.string().nullable().openapi({
          description:
            'The processor’s id of the payment it is busy with, when it names it: a payment’s `processor_reference` when it is one of yours.',
        }),
      })
      .nullable()
      .openapi({ description: 'What the terminal is busy with (when `busy`, or last seen doing offline); else null.' }),
    operating_mode: z.string().nullable().openapi({
      description:
        'Mercado Pago Point: `pdv` (takes orders from the API), `self_service`, `standalone` (operated by hand: payments through the API cannot reach it) or `unknown`. Null for processors without modes.',
      example: null,
    }),
    read_at: Timestamp.openapi({
      description: 'When the processor was read: answers are reused for up to 5 seconds, so poll at most that often.',
    }),
  })
  .openapi('Terminal');
