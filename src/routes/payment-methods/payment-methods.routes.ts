import { createRoute, z } from '@hono/zod-openapi';
import { requireAuth } from '../../middleware/auth.ts';
import {
  bearerSecurity,
  dataEnvelope,
  errorResponses,
  jsonContent,
  listEnvelope,
  listErrorResponses,
  opaqueId,
  PaginationQuery,
} from '../../lib/openapi.ts';
import { PublicPaymentMethodSchema, TerminalSchema } from './payment-methods.schemas.ts';

const tags = ['Payment methods'];
const readers = [requireAuth({ accept: 'any', scope: 'payment_methods:read' })];

export const listPaymentMethods = createRoute({
  operationId: 'listPaymentMethods',
  method: 'get',
  path: '/v1/payment-methods',
  tags,
  summary: 'List usable payment methods',
  description:
    'With an API key: the active methods enabled for that key. With a user token: the owner’s methods in this environment (active and inactive). Scope `payment_methods:read`. Use `id` as `payment_method` when creating a payment.',
  security: bearerSecurity,
  middleware: readers,
  request: { query: PaginationQuery },
  responses: {
    200: jsonContent(listEnvelope(PublicPaymentMethodSchema), 'A page of methods.'),
    ...listErrorResponses('unauthorized', 'insufficient_scope', 'rate_limited'),
  },
});

export const PaymentMethodParams = z.object({
  payment_method_id: opaqueId(
    'payment_method_id',
    '5b0e7c52-3f57-4b8e-9a55-0e4d7c1b2a91',
    'The payment method (a UUID).',
  ),
});

export const getPaymentMethod = createRoute({
  operationId: 'getPaymentMethod',
  method: 'get',
  path: '/v1/payment-methods/{payment_method_id}',
  tags,
  summary: 'Get a usable payment method',
  description:
    'A method that does not exist, belongs to someone else, is deleted, or is not enabled for the key: `404 payment_method_not_found` (category `validation`); list the methods again.',
  security: bearerSecurity,
  middleware: readers,
  request: { params: PaymentMethodParams },
  responses: {
    200: jsonContent(dataEnvelope(PublicPaymentMethodSchema), 'The method.'),
    ...errorResponses('unauthorized', 'insufficient_scope', 'rate_limited', 'payment_method_not_found'),
  },
});

/** What reading a method's terminal can answer, besides the processor's failures (shared with its test helper). */
export const TERMINAL_ERRORS = [
  'unauthorized',
  'insufficient_scope',
  'rate_limited',
  'payment_method_not_found',
  'capability_not_supported',
  'connector_configuration_invalid',
] as const;

export const getPaymentMethodTerminal = createRoute({
  operationId: 'getPaymentMethodTerminal',
  method: 'get',
  path: '/v1/payment-methods/{payment_method_id}/terminal',
  tags,
  summary: 'Get the terminal of a POS payment method',
  description:
    'The device behind a POS method as its processor reports it (Stripe’s readers API, Mercado Pago’s terminals API, the sandbox’s simulated device): `online`, `offline`, `busy` (with what) or `unknown`, and Mercado Pago’s operating mode. For a checkout screen: the answer is reused for up to 5 seconds per edge location, so poll no faster. Same visibility as `GET /v1/payment-methods/{payment_method_id}` (scope `payment_methods:read`); a QR method is `422 capability_not_supported`; a terminal the processor does not know is `422 connector_configuration_invalid`.',
  security: bearerSecurity,
  middleware: readers,
  request: { params: PaymentMethodParams },
  responses: {
    200: jsonContent(dataEnvelope(TerminalSchema), 'The terminal.'),
    ...errorResponses(...TERMINAL_ERRORS, 'processor_unavailable', 'processor_timeout'),
  },
});
