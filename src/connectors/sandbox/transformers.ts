import { recordedMinorUnits } from '../../domain/money.ts';
import type { RefundFailureReason } from '../../domain/reversals.ts';
import type { Channel, Money, PaymentOutcome, ProcessorRefundStatus, RefundOutcome, Settlement } from '../types.ts';

/**
 * Pure mappings of the sandbox processor (docs/sandbox.md, "Payments, by the last two digits of the amount"): the outcome is
 * chosen by the last two digits of the amount's minor units, which are the cents, or the last two
 * integer digits for a currency without decimals.
 */
export type SandboxPaymentAnswer =
  | { kind: 'outcome'; status: 'approved' | 'pending' | 'declined' | 'failed' }
  | { kind: 'timeout' }
  | { kind: 'unavailable' };

export const lastTwoDigits = (amount: Money) => amount.minor % 100;

/** A POS amount ending in these digits waits at the terminal, and its cancel is accepted asynchronously. */
export const AT_TERMINAL_DIGITS = 56;
export const waitsAtTerminal = (channel: Channel, amount: Money) =>
  channel === 'pos' && lastTwoDigits(amount) === AT_TERMINAL_DIGITS;

/** The usual answer: POS approves at once; QR waits for the buyer to scan. */
const usual = (channel: Channel): SandboxPaymentAnswer => ({
  kind: 'outcome',
  status: channel === 'pos' ? 'approved' : 'pending',
});

export function sandboxPaymentAnswer(channel: Channel, amount: Money, attemptNumber: number): SandboxPaymentAnswer {
  switch (lastTwoDigits(amount)) {
    case 51:
      // A QR decline arrives later, as a notification (test helper `decline`).
      return channel === 'pos' ? { kind: 'outcome', status: 'declined' } : usual(channel);
    case 52:
      return attemptNumber === 1 ? { kind: 'timeout' } : usual(channel);
    case 53:
      return attemptNumber === 1 ? { kind: 'unavailable' } : usual(channel);
    case 54:
      return { kind: 'outcome', status: 'failed' };
    case 55:
      // A POS payment the terminal could not settle: it waits for someone to check the terminal (as
      // Mercado Pago Point's `action_required`), until the processor's news (test helpers) settles it.
      return channel === 'pos' ? { kind: 'outcome', status: 'pending' } : usual(channel);
    case AT_TERMINAL_DIGITS:
      // A POS payment the customer has not paid at the terminal yet, so that cancel-at-terminal can be
      // tried: it waits until the test helpers settle it, or its cancel completes.
      return channel === 'pos' ? { kind: 'outcome', status: 'pending' } : usual(channel);
    default:
      return usual(channel);
  }
}

/** What the sandbox would answer when asked for the payment later (reconciliation). */
export function sandboxPaymentStatus(channel: Channel, amount: Money): 'approved' | 'pending' | 'declined' | 'failed' {
  const answer = sandboxPaymentAnswer(channel, amount, Number.MAX_SAFE_INTEGER);
  return answer.kind === 'outcome' ? answer.status : 'pending';
}

export function sandboxRefundStatus(amount: Money): ProcessorRefundStatus {
  return lastTwoDigits(amount) === 61 ? 'declined' : 'approved';
}

/**
 * A refund ending 62 is approved when made and reported failed when read again (its card expired): a
 * reversal whose notification was lost, for reconciliation to find. Every other refund reads as it was made.
 */
export const SANDBOX_REVERSED_REFUND_REASON: RefundFailureReason = 'expired_or_canceled_card';

export function sandboxRefundLookup(amount: Money): Pick<RefundOutcome, 'status' | 'failureReason'> {
  if (lastTwoDigits(amount) === 62) return { status: 'failed', failureReason: SANDBOX_REVERSED_REFUND_REASON };
  const status = sandboxRefundStatus(amount);
  return status === 'declined' ? { status, failureReason: 'declined' } : { status };
}

const DAY_MS = 86_400_000;

/**
 * The sandbox's fee, fixed so that fees can be tried without a processor: 2.9 % of the amount rounded half
 * up to the minor unit, plus 0.30 of the currency (30 minor units with two decimals, nothing in CLP), never
 * more than the amount; `net` is the rest, so `fee` + `net` = the amount. Available two days after the day
 * of the read, at 00:00 UTC (Stripe's `available_on` is a day too).
 */
export const SANDBOX_FEE = { basisPoints: 290, fixedMajor: 0.3, availableAfterDays: 2 } as const;

export function sandboxSettlement(amount: Money, now: number): Settlement {
  // News may state a collection in any currency (the sandbox is stateless): the fixed part is in that currency's
  // ISO 4217 minor unit, and nothing in one ISO 4217 does not know, which the service then cannot show either.
  const fixed = Math.round(SANDBOX_FEE.fixedMajor * 10 ** (recordedMinorUnits(amount.currency) ?? 0));
  const fee = Math.min(amount.minor, Math.floor((amount.minor * SANDBOX_FEE.basisPoints + 5_000) / 10_000) + fixed);
  return {
    fee: { minor: fee, currency: amount.currency },
    net: { minor: amount.minor - fee, currency: amount.currency },
    availableOn: availableOn(now),
  };
}

/** A refund's: the sandbox keeps its fee, as Stripe does ("Stripe doesn't return processing fees", docs.stripe.com/refunds). */
export function sandboxRefundSettlement(amount: Money, now: number): Settlement {
  return {
    fee: { minor: 0, currency: amount.currency },
    net: { minor: -amount.minor, currency: amount.currency },
    availableOn: availableOn(now),
  };
}

const availableOn = (now: number) => (Math.floor(now / DAY_MS) + SANDBOX_FEE.availableAfterDays) * DAY_MS;

export function toPaymentOutcome(
  channel: Channel,
  status: PaymentOutcome['status'],
  reference: string,
  amount: Money,
  now = Date.now(),
): PaymentOutcome {
  // A pending POS payment waits at the terminal: for the customer (ending 56) or for a check there (55); a
  // pending QR one waits for the scan.
  const action: PaymentOutcome['action'] =
    status !== 'pending'
      ? { type: 'none' }
      : channel === 'qr'
        ? { type: 'display_qr', qrData: emvQrPayload(reference, amount) }
        : waitsAtTerminal(channel, amount)
          ? { type: 'at_terminal' }
          : { type: 'check_terminal' };
  return {
    status,
    processorReference: reference,
    action,
    processorStatus: `sandbox_${status}`,
    ...(status === 'declined' ? { declineCode: 'sandbox_declined' } : {}),
    ...(status === 'approved' ? { settlement: sandboxSettlement(amount, now) } : {}),
  };
}

/**
 * An EMVCo merchant-presented QR payload (tag-length-value with a CRC-16/CCITT-FALSE checksum), as
 * dynamic QR processors return; the client must show it unaltered.
 */
export function emvQrPayload(reference: string, amount: Money): string {
  const tlv = (tag: string, value: string) => `${tag}${String(value.length).padStart(2, '0')}${value}`;
  const decimals = amount.currency === 'CLP' ? 0 : 2;
  const value =
    decimals === 0
      ? String(amount.minor)
      : `${Math.floor(amount.minor / 100)}.${String(amount.minor % 100).padStart(2, '0')}`;
  const body =
    tlv('00', '01') +
    tlv('01', '12') +
    tlv('26', tlv('00', 'dev.sandbox.payments') + tlv('01', reference.slice(0, 25))) +
    tlv('52', '0000') +
    tlv('53', ISO_NUMERIC[amount.currency] ?? '999') +
    tlv('54', value) +
    tlv('58', 'US') +
    tlv('59', 'SANDBOX MERCHANT') +
    tlv('60', 'SANDBOX') +
    '6304';
  return body + crc16(body);
}

const ISO_NUMERIC: Record<string, string> = {
  USD: '840',
  EUR: '978',
  BRL: '986',
  ARS: '032',
  MXN: '484',
  CLP: '152',
  COP: '170',
  UYU: '858',
};

function crc16(text: string): string {
  let crc = 0xffff;
  for (const byte of new TextEncoder().encode(text)) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}
