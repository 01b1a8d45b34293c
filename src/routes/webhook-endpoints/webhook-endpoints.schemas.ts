import { z } from '@hono/zod-openapi';
import { PAYMENT_EVENT_TYPES } from '../../domain/payment-state.ts';
import { ALL_EVENTS } from '../../domain/webhook-endpoints.ts';
import { MAX_WEBHOOK_URL_LENGTH } from '../../domain/webhook-url.ts';
import { opaqueId, PaginationQuery, Timestamp } from '../../lib/openapi.ts';

const EXAMPLE_ID = 'we_5c1v8m2x0k7q3w9n4b6z';

const EventTypeOrAll = z.enum([ALL_EVENTS, ...PAYMENT_EVENT_TYPES]);

const EnabledEvents = z
  .array(EventTypeOrAll)
  .min(1)
  .max(32)
  .openapi({
    description:
      'The event types this endpoint receives, or `["*"]` for every type (including types added later; `*` goes alone). Repeats are dropped.',
    example: ['payment.approved', 'payment.refunded'],
  });

const Url = z.string().max(MAX_WEBHOOK_URL_LENGTH).openapi({
  description:
    'HTTPS URL on a public address: the rules of a payment’s `webhook_url` (no loopback, private, link-local or metadata address in any spelling, no credentials, no fragment), checked again before every delivery.',
  example: 'https://merchant.example/webhooks/account',
});

const Description = z
  .string()
  .trim()
  .max(1000)
  .openapi({ description: 'Your note: what this endpoint is for.', example: 'Order service (production)' });

export const WebhookEndpointSchema = z
  .object({
    id: z.string().openapi({ example: EXAMPLE_ID }),
    user_id: z.string().openapi({ example: 'usr_4n8d2k7q1x9m3v5b0c6z' }),
    environment: z.enum(['test', 'live']),
    url: z.string(),
    enabled_events: z.array(z.string()).openapi({ example: ['payment.approved', 'payment.refunded'] }),
    description: z.string().nullable(),
    status: z.enum(['enabled', 'disabled']).openapi({
      description: '`disabled`: it receives nothing (no deliveries are made for new events, pending ones are closed).',
    }),
    disabled_reason: z.enum(['requested', 'failing']).nullable().openapi({
      description:
        '`requested`: disabled through `PATCH` (`disabled: true`); `failing`: disabled automatically after every attempt failed for 3 days. Null while enabled.',
    }),
    disabled_at: Timestamp.nullable(),
    failing_since: Timestamp.nullable().openapi({
      description:
        'When its current run of failed attempts began; null once an attempt succeeds. Three days of it disable the endpoint.',
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi('WebhookEndpoint');

export const WebhookEndpointWithSecretSchema = WebhookEndpointSchema.extend({
  secret: z.string().openapi({
    description:
      'The endpoint’s Standard Webhooks signing secret, `whsec_` + base64 of 32 bytes. Shown only in this answer (creation or rotation): keep it.',
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  }),
  previous_secret_expires_at: Timestamp.nullable().openapi({
    description: 'After a rotation, the previous secret also signs until then (24 hours); null on creation.',
  }),
}).openapi('WebhookEndpointWithSecret');

export const CreateWebhookEndpointBody = z
  .strictObject({
    url: Url,
    enabled_events: EnabledEvents,
    description: Description.optional(),
    user_id: z
      .string()
      .min(1)
      .max(128)
      .optional()
      .openapi({ description: 'Admins only: create the endpoint for this owner.' }),
  })
  .openapi('CreateWebhookEndpointRequest');

export const UpdateWebhookEndpointBody = z
  .strictObject({
    url: Url.optional(),
    enabled_events: EnabledEvents.optional(),
    description: Description.nullable().optional().openapi({ description: 'Your note; `null` clears it.' }),
    disabled: z.boolean().optional().openapi({
      description:
        '`true` stops deliveries (pending ones are closed); `false` enables it again, from new events on (its failure streak starts over).',
    }),
  })
  .openapi('UpdateWebhookEndpointRequest');

export const WebhookEndpointTestResultSchema = z
  .object({
    event_id: z.string().openapi({
      description: 'The ping’s `webhook-id` (and body `id`); not an event of `GET /v1/events`.',
      example: 'evt_0d4m8x2k9q7w1v3c5b6n',
    }),
    type: z.enum(['ping']),
    url: z.string(),
    succeeded: z.boolean().openapi({ description: 'True when the endpoint answered 2xx.' }),
    status_code: z
      .number()
      .int()
      .nullable()
      .openapi({ description: 'The endpoint’s HTTP status; null when none came.', example: 200 }),
    error: z.string().nullable().openapi({
      description:
        '`timeout`, `network_error`, `http_<status>`, `url_refused`; null on success. Never the endpoint’s body.',
    }),
    latency_ms: z.number().int().openapi({ example: 184 }),
    attempted_at: Timestamp,
  })
  .openapi('WebhookEndpointTestResult');

export const EndpointParams = z.object({
  webhook_endpoint_id: opaqueId('webhook_endpoint_id', EXAMPLE_ID, 'The webhook endpoint (`we_...`).'),
});

/** The body of the test ping (`testWebhookEndpoint`); not an event. */
export const WebhookPingSchema = z
  .object({
    id: z
      .string()
      .openapi({ description: 'As `webhook-id`; never an event’s id.', example: 'evt_0d4m8x2k9q7w1v3c5b6n' }),
    type: z.literal('ping'),
    created_at: Timestamp,
    data: z.object({ webhook_endpoint: z.object({ id: z.string().openapi({ example: EXAMPLE_ID }) }) }),
  })
  .openapi('WebhookPing');

export const ListWebhookEndpointsQuery = PaginationQuery.extend({
  user_id: z.string().min(1).max(128).optional().openapi({ description: 'Admins only.' }),
});
