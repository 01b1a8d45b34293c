import { and, eq } from 'drizzle-orm';
import {
  closeSandboxDispute,
  openSandboxDispute,
  SANDBOX_SIGNATURE_HEADER,
  sandboxDisputeNews,
  sandboxRefundFailedNews,
  signSandboxNotification,
  type SandboxCredentials,
  type SandboxNotificationBody,
} from '../connectors/sandbox/index.ts';
import { payments, refunds, type DisputeRow, type PaymentRow, type RefundRow } from '../db/schema/index.ts';
import type { DisputeReason } from '../domain/disputes.ts';
import { newDisputeOf } from '../domain/ledger/index.ts';
import { MoneyError, parseAmount } from '../domain/money.ts';
import type { RefundFailureReason } from '../domain/reversals.ts';
import type { Deps } from '../deps.ts';
import { invalidRequest, ServiceError } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import { openSecrets } from './payment-methods/secrets.ts';
import { loadPaymentMethod } from './payment-methods/store.ts';
import { receiveProcessorNotification } from './payments/processor-notifications.ts';
import type { OwnerScope } from '../domain/caller.ts';
import { findDispute } from './disputes/find-dispute.ts';
import { findDisputeOfPayment } from './disputes/record-dispute-news.ts';
import { findPayment } from './payments/store.ts';

/** What each test-helper action makes the sandbox report. */
const SANDBOX_STATUS = {
  approve: 'approved',
  decline: 'declined',
  expire: 'expired',
  fail: 'failed',
  charge_back: 'charged_back',
} as const;

/**
 * Sends a signed sandbox notification about the caller's sandbox payment through the same path as a
 * real processor notification (docs/sandbox.md), and returns the payment as it then stands.
 */
export async function simulateSandboxNotification(
  deps: Deps,
  scope: OwnerScope,
  paymentId: string,
  action: keyof typeof SANDBOX_STATUS,
  url: string,
): Promise<PaymentRow> {
  const payment = await findPayment(deps, scope, paymentId);
  if (!payment) throw new ServiceError('payment_not_found');
  if (payment.processorReference === null)
    throw new ServiceError('invalid_state_transition', 'The sandbox never answered for this payment.');
  const body: SandboxNotificationBody = {
    id: newId('sbxevt'),
    resource: 'payment',
    reference: payment.processorReference,
    status: SANDBOX_STATUS[action],
    ...(action === 'approve' ? { amount: { minor: payment.amountMinor, currency: payment.currency } } : {}),
  };
  await sendSandboxNews(deps, payment.paymentMethodId, body, url);
  return (await findPayment(deps, scope, payment.id))!;
}

/**
 * The sandbox reports that the caller's approved refund failed later (its card was closed...), as a signed
 * notification through the same path as a real processor's (`reverseRefund`). News that reverses nothing
 * (the refund is not approved) changes nothing; the refund is returned as it then stands. Another owner's
 * refund answers like one that does not exist.
 */
export async function failSandboxRefund(
  deps: Deps,
  scope: OwnerScope,
  refundId: string,
  reason: RefundFailureReason | undefined,
  url: string,
): Promise<RefundRow> {
  const owned = () =>
    deps.db
      .select({ refund: refunds, paymentMethodId: payments.paymentMethodId })
      .from(refunds)
      .innerJoin(payments, eq(payments.id, refunds.paymentId))
      .where(
        and(eq(refunds.id, refundId), eq(refunds.ownerId, scope.ownerId), eq(payments.environment, scope.environment)),
      )
      .get();
  const found = await owned();
  if (!found) throw new ServiceError('refund_not_found');
  if (found.refund.processorReference === null)
    throw new ServiceError('invalid_state_transition', 'The sandbox never answered for this refund.');
  await sendSandboxNews(
    deps,
    found.paymentMethodId,
    sandboxRefundFailedNews(found.refund.processorReference, reason),
    url,
  );
  return (await owned())!.refund;
}

/**
 * The payer's bank disputes the caller's collected sandbox payment (a chargeback, `needs_response`, the funds
 * withdrawn: `openSandboxDispute`), as a signed sandbox notification through the same path as a real
 * processor's news. `amount` defaults to the payment's (in its currency, at most its amount), `reason` to
 * `fraudulent`. Returns the dispute as recorded.
 */
export async function openSandboxDisputeOf(
  deps: Deps,
  scope: OwnerScope,
  paymentId: string,
  input: { amount?: { value: string; currency: string }; reason?: DisputeReason },
  url: string,
): Promise<DisputeRow> {
  const payment = await findPayment(deps, scope, paymentId);
  if (!payment) throw new ServiceError('payment_not_found');
  if (payment.processorReference === null)
    throw new ServiceError('invalid_state_transition', 'The sandbox never answered for this payment.');
  // The ledger's own rule, asked before the news is sent, so that a refusal is an answer rather than news ignored.
  const disputable = newDisputeOf(payment);
  if (disputable === 'not_collected')
    throw new ServiceError('invalid_state_transition', 'Only a collected payment can be disputed.', {
      details: { status: payment.status },
    });
  if (disputable === 'one_open')
    throw new ServiceError(
      'payment_disputed',
      'A dispute of this payment is open: the sandbox, as Stripe, opens one dispute at a time.',
      { details: { status: payment.status, dispute_id: payment.openDisputeId } },
    );
  const minor = input.amount ? disputedAmount(payment, input.amount) : payment.amountMinor;
  const dispute = openSandboxDispute({
    amount: { minor, currency: payment.currency },
    reason: input.reason ?? 'fraudulent',
    now: Date.now(),
  });
  await sendSandboxNews(deps, payment.paymentMethodId, sandboxDisputeNews(payment.processorReference, dispute), url);
  const recorded = await findDisputeOfPayment(deps, payment, dispute.id);
  if (!recorded) throw new ServiceError('invalid_state_transition', 'The payment can no longer be disputed.');
  return recorded;
}

/** The disputed amount in minor units: the payment's currency, more than zero and at most the payment. */
function disputedAmount(payment: PaymentRow, amount: { value: string; currency: string }): number {
  if (amount.currency !== payment.currency)
    throw new ServiceError('unsupported_currency', `Disputes of this payment are in ${payment.currency}.`, {
      details: { currency: payment.currency },
    });
  let minor: number;
  try {
    minor = parseAmount(amount.value, payment.currency);
  } catch (error) {
    if (error instanceof MoneyError)
      throw invalidRequest('Invalid amount.', [{ field: 'amount.value', issue: error.message }]);
    throw error;
  }
  if (minor > payment.amountMinor)
    throw invalidRequest('A dispute cannot exceed its payment.', [
      { field: 'amount.value', issue: 'more than the payment’s amount' },
    ]);
  return minor;
}

/**
 * The issuer decides the caller's sandbox dispute (`closeSandboxDispute`): `won` reinstates the funds, `lost`
 * keeps them withdrawn and sets the payment's `charged_back_at`; sent as a signed sandbox notification like
 * a real processor's. A dispute already closed changes nothing and is returned as it is. Another owner's
 * dispute answers like one that does not exist.
 */
export async function closeSandboxDisputeOf(
  deps: Deps,
  scope: OwnerScope,
  disputeId: string,
  outcome: 'won' | 'lost',
  url: string,
): Promise<DisputeRow> {
  const dispute = await findDispute(deps, scope, disputeId);
  if (!dispute) throw new ServiceError('dispute_not_found');
  const payment = await findPayment(deps, scope, dispute.paymentId);
  if (!payment?.processorReference) throw new ServiceError('dispute_not_found');
  const closed = closeSandboxDispute(
    {
      processorDisputeId: dispute.processorDisputeId,
      amount: { minor: dispute.amountMinor, currency: dispute.currency },
      reason: dispute.reason,
      evidenceDueBy: dispute.evidenceDueBy,
      fundsWithdrawnAt: dispute.fundsWithdrawnAt,
      fundsReinstatedAt: dispute.fundsReinstatedAt,
    },
    outcome,
    Date.now(),
  );
  await sendSandboxNews(deps, payment.paymentMethodId, sandboxDisputeNews(payment.processorReference, closed), url);
  return (await findDispute(deps, scope, disputeId))!;
}

/** Signs `body` with the sandbox method's key and hands it to the notification endpoint's own path. */
async function sendSandboxNews(deps: Deps, paymentMethodId: string, body: SandboxNotificationBody, url: string) {
  const method = await loadPaymentMethod(deps, paymentMethodId);
  if (method?.provider !== 'sandbox')
    throw new ServiceError('capability_not_supported', 'Test helpers drive sandbox payment methods only.');
  const rawBody = JSON.stringify(body);
  const { credentials } = await openSecrets(deps, method);
  const headers = new Headers({
    'Content-Type': 'application/json',
    [SANDBOX_SIGNATURE_HEADER]: await signSandboxNotification(credentials as SandboxCredentials, rawBody),
  });
  await receiveProcessorNotification(deps, method.id, { headers, rawBody, url });
}
