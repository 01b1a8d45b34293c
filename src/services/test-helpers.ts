import { and, eq } from 'drizzle-orm';
import {
  SANDBOX_SIGNATURE_HEADER,
  sandboxRefundFailedNews,
  signSandboxNotification,
  type SandboxCredentials,
  type SandboxNotificationBody,
} from '../connectors/sandbox/index.ts';
import { payments, refunds, type PaymentRow, type RefundRow } from '../db/schema/index.ts';
import type { RefundFailureReason } from '../domain/reversals.ts';
import type { Deps } from '../deps.ts';
import { ServiceError } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import { openSecrets } from './payment-methods/secrets.ts';
import { loadPaymentMethod } from './payment-methods/store.ts';
import { receiveProcessorNotification } from './payments/processor-notifications.ts';
import type { OwnerScope } from '../domain/caller.ts';
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
