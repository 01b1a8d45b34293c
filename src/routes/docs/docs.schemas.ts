import { z } from '@hono/zod-openapi';

/** The description's top level (`info`, `tags`); the operations describe themselves in each area's `.routes.ts`. */

export const OPENAPI_INFO = {
  title: 'Payment Service API',
  // Raised with every API change, with its CHANGELOG.md entry (docs/compatibility.md).
  version: '1.4.0',
  description: [
    'One normalized API in front of several payment processors.',
    '',
    '- Amounts are `{ "value": "<decimal string>", "currency": "<ISO 4217>" }`; the value is never a number.',
    '- Single resources come as `{ "data": ... }`, lists as `{ "data": [...], "pagination": { "limit", "offset", "total", "has_more" } }`,',
    '  errors as `{ "error": { "code", "message", "category", "retryable", "request_id", "details" } }`.',
    '- Lists page by cursor at any depth (`starting_after` / `ending_before`, the id of an item; walk on while `has_more`)',
    '  or by `offset`, at most 10,000 (deeper: `400 invalid_request` naming `starting_after`).',
    '- Every response carries `X-Request-Id` (`req_...`); quote it, with the environment, when reporting a problem.',
    '  Each operation declares the headers it answers with (`Idempotent-Replayed`, `X-Read-Bookmark`, `Retry-After` on 429',
    '  and 503), and each error response the `code` values it can carry.',
    '- Timestamps are ISO 8601 UTC with milliseconds. Request bodies are JSON objects of at most 64 KiB',
    '  (`413 invalid_request` beyond, `415 invalid_request` for another Content-Type); unknown fields are refused.',
    '- Nothing sent is ignored: an operation without a request body refuses a non-empty one (`400 invalid_request` naming',
    '  `(body)`; an empty body or `{}` is accepted), a query parameter the operation does not declare is refused (`400`',
    '  naming `query.<name>`), integer query parameters are decimal digits only, and a string holding a lone UTF-16',
    '  surrogate (`\\ud800` without its pair) is refused. An error repeats at most 200 characters of a name you sent (then',
    '  `…`) and at most 50 items of a list (`<list>_omitted` counts the rest); never a value.',
    '- Authenticate with `Authorization: Bearer <credential>`: an API key (`sk_test_...` / `sk_live_...`) on business',
    '  routes, or a user access token (JWT) from `POST /v1/auth/login` on business and management routes.',
    '- Each deployment serves one environment (`test` or `live`); a key or token of the other environment is refused.',
    '- Rate limits: each API key may send 1,000 requests per 10 seconds in `live` and 500 in `test` (a deployment may set',
    '  its own), each key counted apart, even keys of one owner; beyond it, `429 rate_limited` (retryable) with `Retry-After`',
    '  in seconds (user access tokens are not limited this way). Login and refresh: 10 attempts a minute per client address and per email.',
    '- Reads (`GET /v1/...`) and idempotent writes answer `X-Read-Bookmark`. Send the latest one back on a read and it may be',
    '  served by a database replica near you that has caught up to it; without one, reads go to the primary (always your own writes).',
    '  A malformed one is `400 invalid_request`. Changes to an API key, its scopes or its payment methods apply within 10 seconds.',
    '- `webhooks` describes every body the service POSTs to your webhook URLs, one entry per event type, with the',
    '  Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`) to verify it by.',
    '- Payments may gain fields, `action.type` values and event types over time; tolerate unknown ones. Added so far:',
    '  `charged_back_at` (the payer’s bank took the money back; event `payment.charged_back`), and a `pending`',
    '  payment with `action.type: check_terminal` (someone must check the terminal; event `payment.action_required`).',
  ].join('\n'),
};

/** The operation groups, in the explorer's order. */
export const OPENAPI_TAGS = [
  { name: 'Sessions', description: 'Log in, refresh and log out; the current user.' },
  { name: 'Users', description: 'User accounts (admins).' },
  { name: 'API keys', description: 'API keys of the calling user (admins: of any user).' },
  { name: 'Connectors', description: 'Processor connectors and the versions a payment method is created from.' },
  { name: 'Account payment methods', description: 'Configure payment methods and enable them for API keys.' },
  { name: 'Payment methods', description: 'The payment methods enabled for the caller.' },
  { name: 'Payments', description: 'Create, read and cancel payments.' },
  { name: 'Refunds', description: 'Refund approved payments, partially or fully.' },
  { name: 'Disputes', description: 'Inquiries and chargebacks of your payments, as their processors report them.' },
  { name: 'Webhooks', description: 'Payment events, their deliveries and the signing secret.' },
  { name: 'Processor notifications', description: "Processors' asynchronous news about payments." },
  { name: 'Test helpers', description: 'Simulate processor news (`test` environment only).' },
  { name: 'API description', description: 'This description of the API, and its checksum.' },
];

/** `/openapi.json` as the description declares it: an OpenAPI document, open to everything OpenAPI puts in one. */
export const OpenApiDescriptionSchema = z
  .looseObject({
    openapi: z.string().openapi({ example: '3.1.0' }),
    info: z.looseObject({
      title: z.string().openapi({ example: OPENAPI_INFO.title }),
      version: z
        .string()
        .openapi({ description: 'Semantic versioning; CHANGELOG.md lists each.', example: OPENAPI_INFO.version }),
    }),
    paths: z.record(z.string(), z.unknown()).openapi({ example: { '/v1/payments': {} } }),
  })
  .openapi('OpenApiDescription');
