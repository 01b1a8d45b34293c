import { createRoute, z } from '@hono/zod-openapi';
import { requireAuth } from '../../middleware/auth.ts';
import { requireIdempotencyKey } from '../../middleware/idempotency.ts';
import { bearerSecurity, dataEnvelope, errorResponses, jsonBody, jsonContent, opaqueId } from '../../lib/openapi.ts';
import { CreatePaymentBody, CreateRefundBody, IdempotencyHeaders, PaymentSchema, RefundSchema } from './payments.schemas.ts';

const PaymentParams = z.object({ payment_id: opaqueId('payment_id', 'pay_3kqz7w1v0c9m2x8bq4n6') });
const idempotent = ['idempotency_key_required', 'idempotency_key_reused'] as const;
const processorErrors = ['processor_timeout', 'processor_unavailable', 'connector_configuration_invalid'] as const;

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
    'The same key and body replay the stored answer byte for byte (`Idempotent-Replayed: true`); the same key with another body is `409 idempotency_key_reused`.',
    'A reference already used by this API key (or user) is `409 external_reference_conflict` with `details.payment_id`, the payment that holds it: read it to recover an attempt whose answer was lost.',
  ].join(' '),
  security: bearerSecurity,
  middleware: [requireAuth({ accept: 'any', scope: 'payments:create' }), requireIdempotencyKey],
  request: { headers: IdempotencyHeaders, body: jsonBody(CreatePaymentBody) },
  responses: {
    201: jsonContent(dataEnvelope(PaymentSchema), 'The payment, with `action`.'),
    ...errorResponses('unauthorized', 'insufficient_scope', 'payment_method_not_found', 'capability_not_supported', 'unsupported_currency', 'external_reference_conflict', ...idempotent, ...processorErrors),
  },
});

export const getPayment = createRoute({
  operationId: 'getPayment',
  method: 'get',
  path: '/v1/payments/{payment_id}',
  tags: ['Payments'],
  summary: 'Read a payment',
  description: 'Scope `payments:read`. Use it to reconcile. Another owner’s payment answers like an unknown id. Never carries secrets or processor payloads.',
  security: bearerSecurity,
  middleware: [requireAuth({ accept: 'any', scope: 'payments:read' })],
  request: { params: PaymentParams },
  responses: {
    200: jsonContent(dataEnvelope(PaymentSchema), 'The payment.'),
    ...errorResponses('unauthorized', 'insufficient_scope', 'payment_not_found'),
  },
});

export const cancelPayment = createRoute({
  operationId: 'cancelPayment',
  method: 'post',
  path: '/v1/payments/{payment_id}/cancel',
  tags: ['Payments'],
  summary: 'Cancel a payment',
  description:
    'No body. Scope `payments:cancel`; the method must support `cancellations`. Allowed from `created`, `pending`, `processing`, and from `approved` while no refund exists (a void); otherwise `409 invalid_state_transition`. A processor refusal is `402 processor_declined`.',
  security: bearerSecurity,
  middleware: [requireAuth({ accept: 'any', scope: 'payments:cancel' }), requireIdempotencyKey],
  request: { headers: IdempotencyHeaders, params: PaymentParams },
  responses: {
    200: jsonContent(dataEnvelope(PaymentSchema), 'The canceled payment.'),
    ...errorResponses('unauthorized', 'insufficient_scope', 'payment_not_found', 'payment_method_not_found', 'capability_not_supported', 'invalid_state_transition', 'processor_declined', ...idempotent, ...processorErrors),
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
    'The amount is in the payment’s currency (`422 unsupported_currency`) and at most the refundable balance: the amount less approved and in-flight refunds (`422 refund_exceeds_balance`).',
    'The refund is a resource: 201 with `status` `approved`, `declined`, `pending`... After a timeout, repeat the same request with the same `Idempotency-Key`; never a new key, since the processor may already have refunded.',
  ].join(' '),
  security: bearerSecurity,
  middleware: [requireAuth({ accept: 'any', scope: 'refunds:create' }), requireIdempotencyKey],
  request: { headers: IdempotencyHeaders, params: PaymentParams, body: jsonBody(CreateRefundBody) },
  responses: {
    201: jsonContent(dataEnvelope(RefundSchema), 'The refund.'),
    ...errorResponses('unauthorized', 'insufficient_scope', 'payment_not_found', 'payment_method_not_found', 'capability_not_supported', 'invalid_state_transition', 'unsupported_currency', 'refund_exceeds_balance', ...idempotent, ...processorErrors),
  },
});
