// Spectral ruleset for the served /openapi.json: OpenAPI's recommended rules plus the OWASP API Security
// ruleset. test-node/openapi-lint.test.ts runs it programmatically against a live server and fails on any
// error or warning not waived here; the CLI reads it too (`npx spectral lint -r .spectral.mjs openapi.json`,
// with @stoplight/spectral-cli installed). Every waiver carries a one-line reason.
import owasp from '@stoplight/spectral-owasp-ruleset';
import { oas } from '@stoplight/spectral-rulesets';

/** Schemas the service only sends, never reads from a request (test-node/openapi-lint.test.ts checks that). */
export const RESPONSE_ONLY_SCHEMAS = [
  'SessionTokens',
  'User',
  'CreatedApiKey',
  'ApiKey',
  'Connector',
  'AccountPaymentMethod',
  'ApiKeyLink',
  'PaymentMethod',
  'Terminal',
  'Payment',
  'PaymentAction',
  'Refund',
  'Dispute',
  'PaymentEvent',
  'WebhookEvent',
  'WebhookSecret',
  'WebhookDestination',
  'WebhookEndpoint',
  'WebhookEndpointWithSecret',
  'WebhookEndpointTestResult',
  'WebhookPing',
  'OpenApiDescription',
];

/** A path item as a `files` pattern: JSON pointer, URI-encoded the way Spectral compares it (`{` as `%7B`). */
const pathItem = (path) =>
  `**#/paths/${encodeURIComponent(path.replaceAll('~', '~0').replaceAll('/', '~1')).replaceAll('%7E', '~')}`;

export default {
  extends: [[oas, 'recommended'], owasp],
  rules: {
    // Waived: each deployment's operators publish their own support contact; one description serves them all.
    'info-contact': 'off',
    // Waived: the server URL is the origin the description is served from: http only under local `wrangler dev`, https on deployments.
    'owasp:api8:2023-no-server-http': 'off',
    // Waived: the service sends no quota headers: the per-key count (Workers Rate Limiting) does not tell what is left; the limits and the 429 with Retry-After are declared.
    'owasp:api4:2023-rate-limit': 'off',
    // Waived: every operation an API key may call declares its 429 (requests per API key), login and refresh theirs; user-token routes are not rate limited, so a 429 there would be a false promise.
    'owasp:api4:2023-rate-limit-responses-429': 'off',
    // Waived: ids are opaque by contract (no pattern to promise), and free text (names, descriptions, reasons, passwords) has no format; every input string has a maxLength.
    'owasp:api4:2023-string-restricted': 'off',
    // Waived: the API sends no CORS headers by design: merchants' servers call it with secret credentials, never pages of another origin (/docs is same-origin); declaring Access-Control-Allow-Origin would promise what is refused.
    'owasp:api8:2023-define-cors-origin': 'off',
  },
  overrides: [
    {
      files: RESPONSE_ONLY_SCHEMAS.map((name) => `**#/components/schemas/${name}`),
      rules: {
        // Waived: response-only schemas; input limits are what mitigates resource exhaustion, and every request schema has them.
        'owasp:api4:2023-string-limit': 'off',
        'owasp:api4:2023-array-limit': 'off',
        'owasp:api4:2023-integer-limit': 'off',
        'owasp:api4:2023-integer-format': 'off',
      },
    },
    {
      files: [pathItem('/v1/auth/login'), pathItem('/v1/auth/refresh')],
      // Waived: these exchange a password or refresh token for credentials, so they cannot require a bearer credential.
      rules: { 'owasp:api2:2023-write-restricted': 'off' },
    },
    {
      files: [pathItem('/v1/processor-notifications/{payment_method_id}')],
      // Waived: processors authenticate with a signature over the body (verified with the method's credentials), not a bearer credential.
      rules: { 'owasp:api2:2023-write-restricted': 'off' },
    },
    {
      files: [pathItem('/openapi.json')],
      // Waived: the contract is public, as every deployment's /docs is: it needs no credential, so nothing answers 401.
      rules: { 'owasp:api2:2023-read-restricted': 'off', 'owasp:api8:2023-define-error-responses-401': 'off' },
    },
    {
      files: ['**#/webhooks'],
      // Waived: webhooks are what the service sends to merchants, never input it reads; input limits are what mitigate resource exhaustion.
      rules: {
        'owasp:api4:2023-string-limit': 'off',
        'owasp:api4:2023-array-limit': 'off',
        'owasp:api4:2023-integer-limit': 'off',
        'owasp:api4:2023-integer-format': 'off',
      },
    },
  ],
};
