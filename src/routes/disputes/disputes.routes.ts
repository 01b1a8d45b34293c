import { createRoute } from '@hono/zod-openapi';
import {
  bearerSecurity,
  dataEnvelope,
  errorResponses,
  jsonContent,
  listEnvelope,
  listErrorResponses,
  PaginationQuery,
} from '../../lib/openapi.ts';
import { requireAuth } from '../../middleware/auth.ts';
import { PaymentParams } from '../payments/payments.schemas.ts';
import { DisputeParams, DisputeSchema, ListDisputesQuery } from './disputes.schemas.ts';

export const listDisputes = createRoute({
  operationId: 'listDisputes',
  method: 'get',
  path: '/v1/disputes',
  tags: ['Disputes'],
  summary: 'List your disputes',
  description: [
    'Scope `payments:read`. The disputes (inquiries and chargebacks) of the caller’s owner’s payments in this environment, as their processors reported them; for a user token, the user’s own.',
    'Newest first (`created_at`, then `id`, descending); `status` narrows it (e.g. `needs_response`: the ones whose evidence is due).',
    'An invalid filter, or an unknown parameter, is `400 invalid_request` naming it.',
  ].join(' '),
  security: bearerSecurity,
  middleware: [requireAuth({ accept: 'any', scope: 'payments:read' })],
  request: { query: ListDisputesQuery },
  responses: {
    200: jsonContent(listEnvelope(DisputeSchema), 'A page of disputes.'),
    ...listErrorResponses('unauthorized', 'insufficient_scope', 'rate_limited'),
  },
});

export const getDispute = createRoute({
  operationId: 'getDispute',
  method: 'get',
  path: '/v1/disputes/{dispute_id}',
  tags: ['Disputes'],
  summary: 'Read a dispute',
  description:
    'Scope `payments:read`. A dispute that is missing or another owner’s is `404 dispute_not_found` (both answer alike).',
  security: bearerSecurity,
  middleware: [requireAuth({ accept: 'any', scope: 'payments:read' })],
  request: { params: DisputeParams },
  responses: {
    200: jsonContent(dataEnvelope(DisputeSchema), 'The dispute.'),
    ...errorResponses('unauthorized', 'insufficient_scope', 'rate_limited', 'dispute_not_found'),
  },
});

export const listPaymentDisputes = createRoute({
  operationId: 'listPaymentDisputes',
  method: 'get',
  path: '/v1/payments/{payment_id}/disputes',
  tags: ['Disputes'],
  summary: 'List a payment’s disputes',
  description:
    'Scope `payments:read`. Newest first (`created_at`, then `id`, descending), whatever their status. A payment that is missing or another owner’s is `404 payment_not_found`.',
  security: bearerSecurity,
  middleware: [requireAuth({ accept: 'any', scope: 'payments:read' })],
  request: { params: PaymentParams, query: PaginationQuery },
  responses: {
    200: jsonContent(listEnvelope(DisputeSchema), 'A page of disputes.'),
    ...listErrorResponses('unauthorized', 'insufficient_scope', 'rate_limited', 'payment_not_found'),
  },
});
