import {
  SANDBOX_SIGNATURE_HEADER,
  signSandboxNotification,
  type SandboxCredentials,
} from '../connectors/sandbox/index.ts';
import type { PaymentRow } from '../db/schema/index.ts';
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
  const method = await loadPaymentMethod(deps, payment.paymentMethodId);
  if (method?.provider !== 'sandbox')
    throw new ServiceError('capability_not_supported', 'Test helpers drive sandbox payment methods only.');
  if (payment.processorReference === null)
    throw new ServiceError('invalid_state_transition', 'The sandbox never answered for this payment.');
  const rawBody = JSON.stringify({
    id: newId('sbxevt'),
    resource: 'payment',
    reference: payment.processorReference,
    status: SANDBOX_STATUS[action],
  });
  const { credentials } = await openSecrets(deps, method);
  const headers = new Headers({
    'Content-Type': 'application/json',
    [SANDBOX_SIGNATURE_HEADER]: await signSandboxNotification(credentials as SandboxCredentials, rawBody),
  });
  await receiveProcessorNotification(deps, method.id, { headers, rawBody, url });
  return (await findPayment(deps, scope, payment.id))!;
}
