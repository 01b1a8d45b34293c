import type { DisputeRow, PaymentRow, RefundRow } from '../../db/schema/index.ts';
import { formatAmount, formatRecordedAmount, MoneyError } from '../../domain/money.ts';
import { COLLECTED_STATUSES } from '../../domain/payment-state.ts';
import type { SettlementColumns, SettlementNullReason } from '../../domain/settlement.ts';
import { toIso, toIsoOrNull } from '../../lib/time.ts';

/** A stored amount as the interface shows it. */
const amountOf = (row: { amountMinor: number; currency: string }) => ({
  value: formatAmount(row.amountMinor, row.currency),
  currency: row.currency,
});

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
    amount: amountOf(row),
    external_reference: row.externalReference,
    payment_method: row.paymentMethodId,
    processor_reference: row.processorReference,
    ...(action ? { action } : {}),
    description: row.description,
    metadata: row.metadata,
    webhook_url: row.webhookUrl,
    charged_back_at: toIsoOrNull(row.chargedBackAt),
    ...settlementView(row, COLLECTED_STATUSES.includes(row.status)),
    cancel_requested_at: toIsoOrNull(row.cancelRequestedAt),
    created_at: toIso(row.createdAt),
    updated_at: toIso(row.updatedAt),
  };
}

/**
 * `settlement` as recorded, or null with `settlement_null_reason`: `not_collected` while no money moved
 * (`moved` false), else the reason recorded, `not_reported` when none was (a row from before settlements).
 */
function settlementView(row: SettlementColumns, moved: boolean) {
  const { settlementFeeMinor: fee, settlementNetMinor: net, settlementCurrency: currency } = row;
  if (moved && fee !== null && net !== null && currency !== null && row.settlementAvailableOn !== null) {
    // Magnitudes: a refund's booked amounts are negative (they left the balance), its schema says so. In the
    // processor's currency, any of ISO 4217; one recorded before the service could tell (a read never fails on it).
    const [feeValue, netValue] = [
      formatRecordedAmount(Math.abs(fee), currency),
      formatRecordedAmount(Math.abs(net), currency),
    ];
    if (feeValue === null || netValue === null)
      return { settlement: null, settlement_null_reason: 'unrepresentable_amount' as const };
    return {
      settlement: {
        fee: { value: feeValue, currency },
        net: { value: netValue, currency },
        available_on: toIso(row.settlementAvailableOn),
      },
      settlement_null_reason: null,
    };
  }
  const reason: SettlementNullReason = moved ? (row.settlementNullReason ?? 'not_reported') : 'not_collected';
  return { settlement: null, settlement_null_reason: reason };
}

export type PaymentResource = ReturnType<typeof toPaymentResource>;

export function toRefundResource(row: RefundRow) {
  return {
    id: row.id,
    payment_id: row.paymentId,
    status: row.status,
    amount: amountOf(row),
    reason: row.reason,
    failure_reason: row.failureReason,
    processor_reference: row.processorReference,
    ...settlementView(row, row.status === 'approved'),
    created_at: toIso(row.createdAt),
    updated_at: toIso(row.updatedAt),
  };
}

export type RefundResource = ReturnType<typeof toRefundResource>;

/**
 * In the dispute's currency, any of ISO 4217: news of a dispute in another is not recorded
 * (services/disputes/record-dispute-news.ts), so a recorded one always shows.
 */
function disputedAmountOf(row: DisputeRow) {
  const value = formatRecordedAmount(row.amountMinor, row.currency);
  if (value === null) throw new MoneyError('unsupported_currency');
  return { value, currency: row.currency };
}

export function toDisputeResource(row: DisputeRow) {
  return {
    id: row.id,
    payment_id: row.paymentId,
    status: row.status,
    amount: disputedAmountOf(row),
    reason: row.reason,
    evidence_due_by: toIsoOrNull(row.evidenceDueBy),
    funds_withdrawn_at: toIsoOrNull(row.fundsWithdrawnAt),
    funds_reinstated_at: toIsoOrNull(row.fundsReinstatedAt),
    created_at: toIso(row.createdAt),
    updated_at: toIso(row.updatedAt),
  };
}

export type DisputeResource = ReturnType<typeof toDisputeResource>;
