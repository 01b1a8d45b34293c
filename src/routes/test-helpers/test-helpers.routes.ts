import { createRoute, z } from '@hono/zod-openapi';
import { DISPUTE_REASONS } from '../../domain/disputes.ts';
import { REFUND_FAILURE_REASONS } from '../../domain/reversals.ts';
import { bearerSecurity, dataEnvelope, errorResponses, jsonBody, jsonContent, opaqueId } from '../../lib/openapi.ts';
import { requireAuth } from '../../middleware/auth.ts';
import { DisputeParams, DisputeSchema } from '../disputes/disputes.schemas.ts';
import { PaymentMethodParams, TERMINAL_ERRORS } from '../payment-methods/payment-methods.routes.ts';
import { TerminalSchema } from '../payment-methods/payment-methods.schemas.ts';
import { SANDBOX_TERMINAL_STATUSES } from '../../connectors/sandbox/index.ts';
import { AmountSchema, PaymentParams, PaymentSchema, RefundSchema } from '../payments/payments.schemas.ts';

// The operation id says "news" because it is part of the published API; in the code it is a processor notification.
export const simulateProcessorNotification = createRoute({
  operationId: 'simulateProcessorNews',
  method: 'post',
  path: '/v1/test-helpers/payments/{payment_id}/{action}',
  tags: ['Test helpers'],
  summary: 'Simulate the processor’s news for a sandbox payment (test only)',
  description:
    'Only in the `test` environment (404 in `live`); same credentials as reading the payment. Sends a signed sandbox notification through the same path as a real processor notification: state machine, `updated_at`, webhook. News the state machine refuses (e.g. `approve` on an expired payment) changes nothing; the payment is returned as it is.',
  security: bearerSecurity,
  middleware: [requireAuth({ accept: 'any', scope: 'payments:read' })],
  request: {
    params: z.object({
      payment_id: opaqueId('payment_id', 'pay_3kqz7w1v0c9m2x8bq4n6', 'The payment (`pay_...`).'),
      action: z.enum(['approve', 'decline', 'expire', 'fail', 'charge_back']).openapi({
        param: { name: 'action', in: 'path' },
        description:
          '`charge_back`: the payer’s bank takes the payment’s money back (`charged_back_at` is set, event `payment.charged_back`).',
      }),
    }),
  },
  responses: {
    200: jsonContent(dataEnvelope(PaymentSchema), 'The payment after the news.'),
    ...errorResponses(
      'unauthorized',
      'insufficient_scope',
      'rate_limited',
      'not_found',
      'payment_not_found',
      'capability_not_supported',
      'invalid_state_transition',
      'concurrent_update',
    ),
  },
});

export const FailRefundBody = z
  .strictObject({
    reason: z.enum(REFUND_FAILURE_REASONS).optional().openapi({
      description: 'The refund’s `failure_reason` after the news. Default `expired_or_canceled_card`.',
      example: 'lost_or_stolen_card',
    }),
  })
  .openapi('SimulateRefundFailureRequest');

export const simulateRefundFailure = createRoute({
  operationId: 'simulateRefundFailure',
  method: 'post',
  path: '/v1/test-helpers/refunds/{refund_id}/fail',
  tags: ['Test helpers'],
  summary: 'Simulate the processor reporting an approved sandbox refund failed (test only)',
  description:
    'Only in the `test` environment (404 in `live`); same credentials as reading the payment; sandbox methods only. The sandbox reports that the approved refund failed later (as a card refund can, days after it succeeded), by a signed sandbox notification through the same path as a real processor notification: the refund becomes `failed` with `failure_reason`, its amount is refundable again, the payment’s status is recomputed from its approved refunds, and the event `refund.failed` is sent once. A refund that is not `approved` is returned as it is. A refund that is missing or another owner’s is `404 refund_not_found`.',
  security: bearerSecurity,
  middleware: [requireAuth({ accept: 'any', scope: 'payments:read' })],
  request: {
    params: z.object({
      refund_id: opaqueId('refund_id', 'ref_8d2k7q1x9m3v5b0c6z4n', 'The refund (`ref_...`), of any of your payments.'),
    }),
    body: { ...jsonBody(FailRefundBody), required: false },
  },
  responses: {
    200: jsonContent(dataEnvelope(RefundSchema), 'The refund after the news.'),
    ...errorResponses(
      'unauthorized',
      'insufficient_scope',
      'rate_limited',
      'not_found',
      'refund_not_found',
      'capability_not_supported',
      'invalid_state_transition',
      'concurrent_update',
    ),
  },
});

/** What every dispute helper may answer: its credentials, `live` (404), a method not the sandbox's, contention. */
const HELPER_ERRORS = [
  'unauthorized',
  'insufficient_scope',
  'rate_limited',
  'not_found',
  'capability_not_supported',
  'concurrent_update',
] as const;

export const OpenDisputeBody = z
  .strictObject({
    amount: AmountSchema.optional().openapi({
      description: 'The disputed amount, in the payment’s currency, at most its amount. Default: the payment’s amount.',
    }),
    reason: z.enum(DISPUTE_REASONS).optional().openapi({
      description: 'Why the payer disputes. Default `fraudulent`.',
      example: 'fraudulent',
    }),
  })
  .openapi('SimulateDisputeRequest');
export type OpenDisputeInput = z.infer<typeof OpenDisputeBody>;

export const simulateDispute = createRoute({
  operationId: 'simulateDispute',
  method: 'post',
  path: '/v1/test-helpers/payments/{payment_id}/dispute',
  tags: ['Test helpers'],
  summary: 'Simulate the payer’s bank disputing a sandbox payment (test only)',
  description:
    'Only in the `test` environment (404 in `live`); same credentials as reading the payment; sandbox methods only, collected payments only (`approved`, `partially_refunded`, `refunded`; otherwise `409 invalid_state_transition`). The sandbox reports a chargeback, by a signed sandbox notification through the same path as a real processor notification: a dispute `needs_response` with its funds withdrawn now and evidence due in 7 days, event `dispute.created`. Close it with `POST /v1/test-helpers/disputes/{dispute_id}/close`. One dispute at a time, as Stripe allows one per charge: a payment whose dispute is open is `409 payment_disputed` (`details.dispute_id`). A payment that is missing or another owner’s is `404 payment_not_found`.',
  security: bearerSecurity,
  middleware: [requireAuth({ accept: 'any', scope: 'payments:read' })],
  request: { params: PaymentParams, body: { ...jsonBody(OpenDisputeBody), required: false } },
  responses: {
    200: jsonContent(dataEnvelope(DisputeSchema), 'The dispute the news opened.'),
    ...errorResponses(
      ...HELPER_ERRORS,
      'payment_not_found',
      'unsupported_currency',
      'invalid_state_transition',
      'payment_disputed',
    ),
  },
});

export const CloseDisputeBody = z
  .strictObject({
    outcome: z.enum(['won', 'lost']).openapi({
      description:
        '`won`: the funds are reinstated (`funds_reinstated_at`); `lost`: they stay with the payer and the payment’s `charged_back_at` is set (event `payment.charged_back` too).',
      example: 'won',
    }),
  })
  .openapi('SimulateDisputeCloseRequest');

export const simulateDisputeClose = createRoute({
  operationId: 'simulateDisputeClose',
  method: 'post',
  path: '/v1/test-helpers/disputes/{dispute_id}/close',
  tags: ['Test helpers'],
  summary: 'Simulate the issuer deciding a sandbox dispute (test only)',
  description:
    'Only in the `test` environment (404 in `live`); same credentials as reading the payment; sandbox methods only. The sandbox reports the dispute decided, by a signed sandbox notification through the same path as a real processor notification: event `dispute.closed`. A dispute already closed is returned as it is (its outcome is final). A dispute that is missing or another owner’s is `404 dispute_not_found`.',
  security: bearerSecurity,
  middleware: [requireAuth({ accept: 'any', scope: 'payments:read' })],
  request: { params: DisputeParams, body: jsonBody(CloseDisputeBody) },
  responses: {
    200: jsonContent(dataEnvelope(DisputeSchema), 'The dispute after the news.'),
    ...errorResponses(...HELPER_ERRORS, 'dispute_not_found'),
  },
});

export const SimulateTerminalBody = z
  .strictObject({
    status: z.enum(SANDBOX_TERMINAL_STATUSES).openapi({
      description:
        'The simulated device’s state: `online` takes payments; `offline` and `busy` refuse them at once (`409 terminal_unavailable`).',
      example: 'offline',
    }),
  })
  .openapi('SimulateTerminalRequest');

export const simulateTerminalStatus = createRoute({
  operationId: 'simulateTerminalStatus',
  method: 'post',
  path: '/v1/test-helpers/payment-methods/{payment_method_id}/terminal',
  tags: ['Test helpers'],
  summary: 'Set the simulated terminal of a sandbox POS method (test only)',
  description:
    'Only in the `test` environment (404 in `live`); sandbox POS methods only (another is `422 capability_not_supported`); same visibility as reading the method (scope `payment_methods:read`). Sets the sandbox device’s state (kept in the method’s configuration as `terminal_status`) and answers the terminal as `GET /v1/payment-methods/{payment_method_id}/terminal` then reads it.',
  security: bearerSecurity,
  middleware: [requireAuth({ accept: 'any', scope: 'payment_methods:read' })],
  request: { params: PaymentMethodParams, body: jsonBody(SimulateTerminalBody) },
  responses: {
    200: jsonContent(dataEnvelope(TerminalSchema), 'The terminal after the change.'),
    ...errorResponses(...TERMINAL_ERRORS, 'not_found'),
  },
});
