import type { DisputeReason, DisputeStatus } from '../disputes.ts';
import type { Environment } from '../environment.ts';
import type { PaymentStatus, RequiredAction } from '../payment-state.ts';
import type { RefundStatus } from '../refund-state.ts';
import type { RefundFailureReason } from '../reversals.ts';
import type { SettlementColumns } from '../settlement.ts';

/**
 * A payment, its refunds and its disputes as the ledger reads and writes them: the stored rows (db/schema/payments.ts,
 * disputes.ts declare their tables from these, so the two cannot drift). Times are epoch milliseconds, amounts integer
 * minor units of the payment's currency.
 */
export interface PaymentRecord extends SettlementColumns {
  id: string;
  ownerId: string;
  environment: Environment;
  paymentMethodId: string;
  apiKeyId: string | null;
  referenceScope: string;
  externalReference: string;
  amountMinor: number;
  currency: string;
  status: PaymentStatus;
  /** Raised by every change: the compare-and-set that serializes a payment's writers (services/payments/store.ts). */
  version: number;
  /** Running totals, written only by the ledger: approved refunds (less reversed ones), refunds still in flight. */
  amountRefunded: number;
  amountReserved: number;
  /** Refunds ever recorded, whatever became of them: a void is possible only while there is none. */
  refundCount: number;
  /** What lost disputes took back (the rest of the payment at most). */
  amountChargedBack: number;
  /** The payment's dispute still open (at most one): refunds and voids are refused while it is. */
  openDisputeId: string | null;
  processorReference: string | null;
  /** The processor's own id of the payment where `processorReference` is another name of it; the first reported. */
  processorPaymentId: string | null;
  processorIdempotencyKey: string;
  processorAttempts: number;
  processorStatus: string | null;
  qrData: string | null;
  requiredAction: RequiredAction | null;
  description: string | null;
  metadata: Record<string, unknown> | null;
  /** What later calls of the payment keep of the configuration it was created with (its terminal); never changes. */
  keptConfiguration: Record<string, unknown> | null;
  webhookUrl: string | null;
  expiresAt: number | null;
  reconciledAt: number | null;
  chargedBackAt: number | null;
  voidedAt: number | null;
  voidRefundReference: string | null;
  /** A cancellation's claim on the payment while the processor is asked (no refund is reserved meanwhile). */
  cancelClaimedAt: number | null;
  /** The attempt (idempotency object) that claimed the payment, or whose cancel the processor accepted or carried out. */
  cancelAttemptKey: string | null;
  /** The processor accepted a cancel it completes later (the public `cancel_requested_at`). */
  cancelRequestedAt: number | null;
  atTerminal: boolean;
  terminalSeenAt: number | null;
  terminalChecks: number;
  terminalCheckAt: number | null;
  disputeCheckAt: number | null;
  attemptKey: string | null;
  attemptFingerprint: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface RefundRecord extends SettlementColumns {
  id: string;
  paymentId: string;
  ownerId: string;
  amountMinor: number;
  currency: string;
  status: RefundStatus;
  reason: string | null;
  failureReason: RefundFailureReason | null;
  processorReference: string | null;
  processorIdempotencyKey: string;
  processorAttempts: number;
  processorStatus: string | null;
  reconciledAt: number | null;
  attemptKey: string | null;
  attemptFingerprint: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface DisputeRecord {
  id: string;
  paymentId: string;
  ownerId: string;
  environment: Environment;
  processorDisputeId: string;
  status: DisputeStatus;
  amountMinor: number;
  currency: string;
  reason: DisputeReason;
  evidenceDueBy: number | null;
  fundsWithdrawnAt: number | null;
  fundsReinstatedAt: number | null;
  processorStatus: string;
  createdAt: number;
  updatedAt: number;
}

/** A payment's fields the ledger may change; never its identity, owner, amount or creation. */
export type PaymentPatch = Partial<
  Omit<PaymentRecord, 'id' | 'version' | 'ownerId' | 'environment' | 'amountMinor' | 'currency' | 'createdAt'>
>;
