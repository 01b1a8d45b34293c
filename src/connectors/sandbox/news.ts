import { z } from 'zod';
import { DISPUTE_REASONS, DISPUTE_STATUSES, type DisputeReason } from '../../domain/disputes.ts';
import { REFUND_FAILURE_REASONS, type RefundFailureReason } from '../../domain/reversals.ts';
import type { Money, ProcessorDispute, ProcessorNotification } from '../types.ts';
import { sandboxSettlement } from './transformers.ts';

/**
 * The sandbox's notifications: what its test helpers send through the same path as a real processor's
 * news (src/services/test-helpers.ts signs and posts them). Three kinds, told apart by `resource`:
 * - `payment` / `refund` with a status of its kind, as always; a failed refund may say why (`failure_reason`),
 *   which is how an approved refund is reversed;
 * - `dispute`: the whole dispute as the sandbox now reports it, on the payment `reference`. The sandbox is
 *   stateless, so each notification carries the complete dispute (the helpers build it from what the core
 *   recorded: `openSandboxDispute`, `closeSandboxDispute`).
 */

const Id = z.string().min(1).max(128);
/** Epoch milliseconds, or null. */
const Time = z.number().int().min(0).max(8_640_000_000_000_000).nullable();

const PaymentNews = z.object({
  id: Id,
  resource: z.literal('payment'),
  reference: Id,
  status: z.enum(['pending', 'processing', 'approved', 'declined', 'failed', 'expired', 'canceled', 'charged_back']),
  /**
   * The payment's amount, with `approved`: the sandbox is stateless, so news of a collection says what was
   * collected and the notification reports the sandbox's fixed fee on it (`sandboxSettlement`).
   */
  amount: z
    .object({
      minor: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
      currency: z.string().regex(/^[A-Z]{3}$/),
    })
    .optional(),
});

const RefundNews = z.object({
  id: Id,
  resource: z.literal('refund'),
  reference: Id,
  status: z.enum(['pending', 'processing', 'approved', 'declined', 'failed']),
  failure_reason: z.enum(REFUND_FAILURE_REASONS).optional(),
});

export const SandboxDispute = z.object({
  id: Id,
  status: z.enum(DISPUTE_STATUSES),
  amount: z.object({
    minor: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
    currency: z.string().regex(/^[A-Z]{3}$/),
  }),
  reason: z.enum(DISPUTE_REASONS),
  evidence_due_by: Time,
  funds_withdrawn_at: Time,
  funds_reinstated_at: Time,
});
export type SandboxDispute = z.infer<typeof SandboxDispute>;

const DisputeNews = z.object({ id: Id, resource: z.literal('dispute'), reference: Id, dispute: SandboxDispute });

export const SandboxNotificationBody = z.discriminatedUnion('resource', [PaymentNews, RefundNews, DisputeNews]);
export type SandboxNotificationBody = z.infer<typeof SandboxNotificationBody>;

/** A verified body as news: the sandbox signs everything, so all of it is trusted. */
export function sandboxNotification(body: SandboxNotificationBody): ProcessorNotification {
  const base = { eventId: body.id, trusted: true };
  if (body.resource === 'dispute') {
    const d = body.dispute;
    const dispute: ProcessorDispute = {
      processorDisputeId: d.id,
      paymentProcessorReference: body.reference,
      status: d.status,
      amount: d.amount,
      reason: d.reason,
      evidenceDueBy: d.evidence_due_by,
      fundsWithdrawnAt: d.funds_withdrawn_at,
      fundsReinstatedAt: d.funds_reinstated_at,
      processorStatus: `sandbox_dispute_${d.status}`,
    };
    // Only a lost dispute is the chargeback summary; any other leaves the payment's status alone.
    const status = d.status === 'lost' ? 'charged_back' : null;
    return { ...base, resource: 'payment', processorReference: body.reference, status, dispute };
  }
  if (body.resource === 'payment')
    return {
      ...base,
      resource: 'payment',
      processorReference: body.reference,
      status: body.status,
      ...(body.status === 'approved' && body.amount ? { settlement: sandboxSettlement(body.amount, Date.now()) } : {}),
    };
  const failed = body.status === 'failed' || body.status === 'declined';
  return {
    ...base,
    resource: 'refund',
    processorReference: body.reference,
    status: body.status,
    ...(failed && body.failure_reason ? { failureReason: body.failure_reason } : {}),
  };
}

const eventId = () => `sbxevt_${crypto.randomUUID()}`;

/** What `POST /v1/test-helpers/refunds/{id}/fail` sends: the approved refund failed later. */
export function sandboxRefundFailedNews(
  refundReference: string,
  reason: RefundFailureReason = 'expired_or_canceled_card',
): SandboxNotificationBody {
  return { id: eventId(), resource: 'refund', reference: refundReference, status: 'failed', failure_reason: reason };
}

/** News of `dispute` on the payment the sandbox knows as `paymentReference`. */
export function sandboxDisputeNews(paymentReference: string, dispute: SandboxDispute): SandboxNotificationBody {
  return { id: eventId(), resource: 'dispute', reference: paymentReference, dispute };
}

const DAY_MS = 86_400_000;
/** Evidence is due a week after the dispute opens (Stripe: "usually 7-21 days", docs.stripe.com/disputes/how-disputes-work). */
export const SANDBOX_EVIDENCE_DAYS = 7;

/**
 * A chargeback the payer's bank opens: `needs_response`, the funds withdrawn at once (as Stripe debits them
 * when a dispute opens), a new dispute id.
 */
export function openSandboxDispute(input: { amount: Money; reason: DisputeReason; now: number }): SandboxDispute {
  return {
    id: `sbx_dp_${crypto.randomUUID().replaceAll('-', '').slice(0, 24)}`,
    status: 'needs_response',
    amount: { minor: input.amount.minor, currency: input.amount.currency },
    reason: input.reason,
    evidence_due_by: input.now + SANDBOX_EVIDENCE_DAYS * DAY_MS,
    funds_withdrawn_at: input.now,
    funds_reinstated_at: null,
  };
}

/** The issuer decides: `won` reinstates the funds now; `lost` keeps them withdrawn. */
export function closeSandboxDispute(
  dispute: Pick<
    ProcessorDispute,
    'processorDisputeId' | 'amount' | 'reason' | 'evidenceDueBy' | 'fundsWithdrawnAt' | 'fundsReinstatedAt'
  >,
  outcome: 'won' | 'lost',
  now: number,
): SandboxDispute {
  return {
    id: dispute.processorDisputeId,
    status: outcome,
    amount: { minor: dispute.amount.minor, currency: dispute.amount.currency },
    reason: dispute.reason,
    evidence_due_by: dispute.evidenceDueBy,
    funds_withdrawn_at: dispute.fundsWithdrawnAt,
    funds_reinstated_at: outcome === 'won' ? (dispute.fundsReinstatedAt ?? now) : dispute.fundsReinstatedAt,
  };
}
