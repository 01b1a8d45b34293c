import { formatRecordedAmount } from './money.ts';

/**
 * What the processor kept of money that moved, and when the rest is the merchant's (docs/states.md,
 * "Settlement"). Recorded as the processor reports it, never computed by the service.
 */

/**
 * Why a payment's or refund's `settlement` is null:
 * - `not_collected`: no money moved (yet): the payment is not collected, the refund not approved (or it
 *   failed, so in the end nothing moved);
 * - `pending_at_processor`: the money moved but the processor has not booked it yet; a later read tells;
 * - `not_reported`: the processor's API does not report it for this operation (each connector's NOTES.md
 *   says where), or it was recorded before the service kept settlements;
 * - `unrepresentable_amount`: the processor reported it in a form the service cannot show (`formatRecordedAmount`):
 *   a currency outside ISO 4217 or one without a minor unit, or a value no `Amount` holds. Never a failure: the
 *   payment and its events read as ever.
 */
export const SETTLEMENT_NULL_REASONS = [
  'not_collected',
  'pending_at_processor',
  'not_reported',
  'unrepresentable_amount',
] as const;
export type SettlementNullReason = (typeof SETTLEMENT_NULL_REASONS)[number];

/** What a processor can say when it reports nothing although the money moved. */
export type ProcessorSettlementNullReason = Exclude<SettlementNullReason, 'not_collected'>;

interface Money {
  minor: number;
  currency: string;
}

export interface SettlementFacts {
  fee: Money;
  net: Money;
  /** Epoch milliseconds. */
  availableOn: number;
}

/** The stored columns of a settlement (payments and refunds alike). */
export interface SettlementColumns {
  settlementFeeMinor: number | null;
  settlementNetMinor: number | null;
  settlementCurrency: string | null;
  settlementAvailableOn: number | null;
  settlementNullReason: SettlementNullReason | null;
}

/**
 * What an outcome's settlement changes of the record: a settlement once reported does not change at the
 * processor, so the first one is kept; a null with its reason is recorded only while none is (a later read
 * may report it). Null when nothing changes, or when the outcome says nothing (`undefined`: no money moved,
 * or the answer did not read it).
 */
export function settlementChange(
  current: SettlementColumns,
  reported: { settlement?: SettlementFacts | null; settlementNullReason?: ProcessorSettlementNullReason },
): Partial<SettlementColumns> | null {
  if (current.settlementFeeMinor !== null || reported.settlement === undefined) return null;
  if (reported.settlement === null) {
    const reason = reported.settlementNullReason ?? 'not_reported';
    return current.settlementNullReason === reason ? null : { settlementNullReason: reason };
  }
  const { fee, net, availableOn } = reported.settlement;
  // The processor books both in its settlement currency; anything else is not a settlement we can show.
  if (fee.currency !== net.currency) return null;
  if (!isRepresentableSettlement(fee, net)) {
    return current.settlementNullReason === 'unrepresentable_amount'
      ? null
      : { settlementNullReason: 'unrepresentable_amount' };
  }
  return {
    settlementFeeMinor: fee.minor,
    settlementNetMinor: net.minor,
    settlementCurrency: fee.currency,
    settlementAvailableOn: availableOn,
    settlementNullReason: null,
  };
}

/**
 * Whether a settlement can be shown: both amounts in a currency of ISO 4217 (`formatRecordedAmount`), as magnitudes
 * (a refund's are negative: they left the balance).
 */
export const isRepresentableSettlement = (fee: Money, net: Money) =>
  formatRecordedAmount(Math.abs(fee.minor), fee.currency) !== null &&
  formatRecordedAmount(Math.abs(net.minor), net.currency) !== null;

/** A reversed refund moved nothing in the end: its settlement goes. */
export const NO_SETTLEMENT: SettlementColumns = {
  settlementFeeMinor: null,
  settlementNetMinor: null,
  settlementCurrency: null,
  settlementAvailableOn: null,
  settlementNullReason: null,
};
