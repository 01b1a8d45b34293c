import type { PaymentRow, RefundRow } from '../../db/schema/index.ts';
import { formatAmount } from '../../domain/money.ts';
import { toIso, toIsoOrNull } from '../../lib/time.ts';

export type ActionView =
  | { type: 'none' }
  | { type: 'display_qr'; qr_data: string; expires_at: string | null }
  | { type: 'check_terminal' }
  | { type: 'at_terminal' };

/** What a `pending` payment waits on, or null. A required action outranks the QR: the scan is over. */
function pendingAction(row: PaymentRow): ActionView | null {
  if (row.status !== 'pending') return null;
  if (row.requiredAction === 'check_terminal') return { type: 'check_terminal' };
  if (row.atTerminal) return { type: 'at_terminal' };
  return row.qrData ? { type: 'display_qr', qr_data: row.qrData, expires_at: toIsoOrNull(row.expiresAt) } : null;
}

/**
 * The public payment. `action` is given by the create response, and by reads while a `pending` payment
 * waits on something: a QR to show (a cashier who reloads must be able to show the same QR again) or a
 * check at the terminal; otherwise it is absent.
 */
export function toPaymentResource(row: PaymentRow, options: { withAction: boolean } = { withAction: false }) {
  const action: ActionView | undefined = pendingAction(row) ?? (options.withAction ? { type: 'none' } : undefined);
  return {
    id: row.id,
    status: row.status,
    amount: { value: formatAmount(row.amountMinor, row.currency), currency: row.currency },
    external_reference: row.externalReference,
    payment_method: row.paymentMethodId,
    processor_reference: row.processorReference,
    ...(action ? { action } : {}),
    description: row.description,
    metadata: row.metadata,
    webhook_url: row.webhookUrl,
    charged_back_at: toIsoOrNull(row.chargedBackAt),
    cancel_requested_at: toIsoOrNull(row.cancelAcceptedAt),
    created_at: toIso(row.createdAt),
    updated_at: toIso(row.updatedAt),
  };
}

export type PaymentResource = ReturnType<typeof toPaymentResource>;

export function toRefundResource(row: RefundRow) {
  return {
    id: row.id,
    payment_id: row.paymentId,
    status: row.status,
    amount: { value: formatAmount(row.amountMinor, row.currency), currency: row.currency },
    reason: row.reason,
    failure_reason: row.failureReason,
    processor_reference: row.processorReference,
    created_at: toIso(row.createdAt),
    updated_at: toIso(row.updatedAt),
  };
}

export type RefundResource = ReturnType<typeof toRefundResource>;
