import { createRoute } from '@hono/zod-openapi';
import { requireAuth } from '../../middleware/auth.ts';
import { requireIdempotencyKey } from '../../middleware/idempotency.ts';
import {
  bearerSecurity,
  dataEnvelope,
  errorResponses,
  jsonBody,
  jsonContent,
  listEnvelope,
  listErrorResponses,
  PaginationQuery,
} from '../../lib/openapi.ts';
import {
  CreatePaymentBody,
  CreateRefundBody,
  IdempotencyHeaders,
  ListPaymentsQuery,
  PaymentParams,
  PaymentSchema,
  RefundParams,
  RefundSchema,
} from './payments.schemas.ts';
const idempotent = ['idempotency_key_required', 'idempotency_key_reused'] as const;
const processorErrors = ['processor_timeout', 'processor_unavailable', 'connector_configuration_invalid'] as const;
/** A change of the payment that kept losing its compare-and-set to other writers (retryable). */
const contention = ['concurrent_update'] as const;

export const createPayment = createRoute({
  operationId: 'createPayment',
  method: 'post',
  path: '/v1/payments',
  tags: ['Payments'],
  summary: 'Create a payment',
  description: [
    'Scope `payments:create`; the method must be active, support `payments` and (for an API key) be enabled for the key.',
    'A processor outcome is a resource: 201 with `status` `approved`, `pending` (QR: show `action.qr_data` and wait for the webhook or a read), `declined` or `failed`. A 2xx is not an approval: read `status`.',
    '`504 processor_timeout` / `503 processor_unavailable`: the attempt is kept; retry with the same `Idempotency-Key` and body to resume it (never a second charge), or reconcile with a read.',
    'POS: a terminal the processor reports offline or busy refuses the payment at once with `409 terminal_unavailable` (`details.terminal_status`; nothing charged, the attempt kept): bring the terminal online (`GET /v1/payment-methods/{payment_method_id}/terminal` shows it) and retry with the same key and body. `configuration.display` (where the method’s schema has it) is checked against the payment: a total other than `amount`, or another currency, is `400 invalid_request`.',
    'The same key and body replay the stored answer byte for byte (`Idempotent-Replayed: true`); the same key with another body is `409 idempotency_key_reused`.',
    'A reference already used by this API key (or user) is `409 external_reference_conflict` with `details.payment_id`, the payment that holds it: read it to recover an attempt whose answer was lost.',
  ].join(' '),
  security: bearerSecurity,
  middleware: [requireAuth({ accept: 'any', scope: 'payments:create' }), requireIdempotencyKey],
  request: { headers: IdempotencyHeaders, body: jsonBody(CreatePaymentBody) },
  responses: {
    201: jsonContent(dataEnvelope(PaymentSchema), 'The payment, with `action`.'),
    ...errorResponses(
      'unauthorized',
      'insufficient_scope',
      'rate_limited',
      'payment_method_not_found',
      'capability_not_supported',
      'unsupported_currency',
      'external_reference_conflict',
      'terminal_unavailable',
      ...idempotent,
      ...processorErrors,
      ...contention,
    ),
  },
});

export const listPayments = createRoute({
  operationId: 'listPayments',
  method: 'get',
  path: '/v1/payments',
  tags: ['Payments'],
  summary: 'List and find payments',
  description: [
    'Scope `payments:read`. The payments of the caller’s owner in this environment: for an API key, every payment of its owner (whichever key or user token created it, as `getPayment` reads them); for a user token, the user’s own (admins included: no one lists another owner’s payments).',
    'Newest first (`created_at`, then `id`, descending). Filters combine: `external_reference` finds the payment a `409 external_reference_conflict` or a lost answer is about; `status`, `payment_method` and the `created_gte` / `created_lt` range narrow a reconciliation.',
    'An invalid filter, or an unknown parameter, is `400 invalid_request` naming it.',
  ].join(' '),
  security: bearerSecurity,
  middleware: [requireAuth({ accept: 'any', scope: 'payments:read' })],
  request: { query: ListPaymentsQuery },
  responses: {
    200: jsonContent(listEnvelope(PaymentSchema), 'A page of payments.'),
    ...listErrorResponses('unauthorized', 'insufficient_scope', 'rate_limited'),
  },
});

export const getPayment = createRoute({
  operationId: 'getPayment',
  method: 'get',
  path: '/v1/payments/{payment_id}',
  tags: ['Payments'],
  summary: 'Read a payment',
  description:
    'Scope `payments:read`. Use it to reconcile. Another owner’s payment answers like an unknown id. Never carries secrets or processor payloads.',
  security: bearerSecurity,
  middleware: [requireAuth({ accept: 'any', scope: 'payments:read' })],
  request: { params: PaymentParams },
  responses: {
    200: jsonContent(dataEnvelope(PaymentSchema), 'The payment.'),
    ...errorResponses('unauthorized', 'insufficient_scope', 'rate_limited', 'payment_not_found'),
  },
});

export const cancelPayment = createRoute({
  operationId: 'cancelPayment',
  method: 'post',
  path: '/v1/payments/{payment_id}/cancel',
  tags: ['Payments'],
  summary: 'Cancel a payment',
  description:
    'No body. Scope `payments:cancel`; the method must support `cancellations`. Allowed from `created`, `pending`, `processing`, and from `approved` while no refund exists (a void); otherwise `409 invalid_state_transition`. While a dispute of the payment is open, `409 payment_disputed`. A processor refusal is `402 processor_declined`.\n\n`200`: canceled (`status: canceled`). `202`: cancel requested, not done: the processor accepted a cancel it completes later (a POS payment already on the terminal, e.g. a Mercado Pago Point order `at_terminal`), or the void of an approved payment it carries out later (Adyen’s reversal); the payment keeps its status, with `cancel_requested_at` set, and while a void is awaited a refund is `409 invalid_state_transition` (for at most 24 hours). It completes by the processor’s notification or the service’s own read: `payment.canceled`, or `payment.approved` if the customer paid first; follow it by webhook or `GET /v1/payments/{payment_id}`. A cancel while one is requested answers `202` again without asking the processor (also while the withdrawal the service asked at a QR’s expiry is awaited: that one completes as `payment.expired`); a retry with the same `Idempotency-Key` answers what the first request answered.',
  security: bearerSecurity,
  middleware: [requireAuth({ accept: 'any', scope: 'payments:cancel' }), requireIdempotencyKey],
  request: { headers: IdempotencyHeaders, params: PaymentParams },
  responses: {
    200: jsonContent(dataEnvelope(PaymentSchema), 'The canceled payment.'),
    202: jsonContent(
      dataEnvelope(PaymentSchema),
      'Cancel requested: the processor completes it later. The payment as it still is, with `cancel_requested_at`.',
    ),
    ...errorResponses(
      'unauthorized',
      'insufficient_scope',
      'rate_limited',
      'payment_not_found',
      'payment_method_not_found',
      'capability_not_supported',
      'invalid_state_transition',
      'payment_disputed',
      'processor_declined',
      ...idempotent,
      ...processorErrors,
      ...contention,
    ),
  },
});

export const createRefund = createRoute({
  operationId: 'createRefund',
  method: 'post',
  path: '/v1/payments/{payment_id}/refunds',
  tags: ['Refunds'],
  summary: 'Refund a payment wholly or partly',
  description: [
    'Scope `refunds:create`; the method must support `refunds`. Only `approved` and `partially_refunded` payments; any other status, `refunded` included, is `409 invalid_state_transition`.',
    'The amount is in the payment’s currency (`422 unsupported_currency`) and at most the refundable balance: the amount less approved and in-flight refunds and what a chargeback took (`422 refund_exceeds_balance`). While a dispute of the payment is open, `409 payment_disputed` (`details.dispute_id`): answer the dispute at the processor first.',
    'The refund is a resource: 201 with `status` `approved`, `declined`, `pending`... After a timeout, repeat the same request with the same `Idempotency-Key`; never a new key, since the processor may already have refunded.',
  ].join(' '),
  security: bearerSecurity,
  middleware: [requireAuth({ accept: 'any', scope: 'refunds:create' }), requireIdempotencyKey],
  request: { headers: IdempotencyHeaders, params: PaymentParams, body: jsonBody(CreateRefundBody) },
  responses: {
    201: jsonContent(dataEnvelope(RefundSchema), 'The refund.'),
    ...errorResponses(
      'unauthorized',
      'insufficient_scope',
      'rate_limited',
      'payment_not_found',
      'payment_method_not_found',
      'capability_not_supported',
      'invalid_state_transition',
      'payment_disputed',
      'unsupported_currency',
      'refund_exceeds_balance',
      ...idempotent,
      ...processorErrors,
      ...contention,
    ),
  },
});

export const listRefunds = createRoute({
  operationId: 'listRefunds',
  method: 'get',
  path: '/v1/payments/{payment_id}/refunds',
  tags: ['Refunds'],
  summary: 'List a payment’s refunds',
  description:
    'Scope `payments:read`. Newest first (`created_at`, then `id`, descending), whatever their status: a `pending` refund is settled later, read it again to follow it. A payment that is missing or another owner’s is `404 payment_not_found`.',
  security: bearerSecurity,
  middleware: [requireAuth({ accept: 'any', scope: 'payments:read' })],
  request: { params: PaymentParams, query: PaginationQuery },
  responses: {
    200: jsonContent(listEnvelope(RefundSchema), 'A page of refunds.'),
    ...listErrorResponses('unauthorized', 'insufficient_scope', 'rate_limited', 'payment_not_found'),
  },
});

export const getRefund = createRoute({
  operationId: 'getRefund',
  method: 'get',
  path: '/v1/payments/{payment_id}/refunds/{refund_id}',
  tags: ['Refunds'],
  summary: 'Read a refund',
  description:
    'Scope `payments:read`. Use it to follow a `pending` refund to its outcome. A payment that is missing or another owner’s is `404 payment_not_found`; a refund that is missing or not of that payment is `404 refund_not_found`.',
  security: bearerSecurity,
  middleware: [requireAuth({ accept: 'any', scope: 'payments:read' })],
  request: { params: RefundParams },
  responses: {
    200: jsonContent(dataEnvelope(RefundSchema), 'The refund.'),
    ...errorResponses('unauthorized', 'insufficient_scope', 'rate_limited', 'payment_not_found', 'refund_not_found'),
  },
});
