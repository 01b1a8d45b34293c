/**
 * Amounts as the API writes them: `{ value: "12.50", currency: "USD" }`, a decimal string with exactly the
 * currency's minor digits (docs/limits.md, "Amounts"). Arithmetic is on integer minor units (bigint), never
 * floats. No DOM here: the Node tests import this module.
 */
export interface Amount {
  value: string;
  currency: string;
}

/** The minor digits of an amount the API wrote ("10.50": 2, CLP "1500": 0). */
export const digitsOf = (value: string): number => value.split('.')[1]?.length ?? 0;

/** "12.5" with 2 digits is 1250n; null for anything but a plain non-negative decimal within those digits. */
export function toMinor(value: string, digits: number): bigint | null {
  const match = /^(\d{1,12})(?:\.(\d+))?$/.exec(value.trim());
  if (!match) return null;
  const fraction = match[2] ?? '';
  if (fraction.length > digits) return null;
  return BigInt(match[1] + fraction.padEnd(digits, '0'));
}

/** 1250n with 2 digits is "12.50": the API's own spelling. */
export function fromMinor(minor: bigint, digits: number): string {
  if (digits === 0) return minor.toString();
  const padded = minor.toString().padStart(digits + 1, '0');
  return `${padded.slice(0, -digits)}.${padded.slice(-digits)}`;
}

/** The amount in its currency, in the viewer's locale, with the currency's digits (the string is formatted exactly). */
export function formatMoney(amount: Amount, locale?: string): string {
  const digits = digitsOf(amount.value);
  try {
    return new Intl.NumberFormat(locale, {
      style: 'currency',
      currency: amount.currency,
      minimumFractionDigits: digits,
      maximumFractionDigits: digits,
    }).format(amount.value as `${number}`);
  } catch {
    return `${amount.value} ${amount.currency}`;
  }
}

/** Refund statuses whose money has left or may still leave: a declined or failed refund gave the balance back. */
const HOLDING = new Set(['created', 'pending', 'processing', 'approved']);

/** What may still be refunded: the payment's amount less every refund that holds money. */
export function refundableBalance(payment: Amount, refunds: readonly { status: string; amount: Amount }[]): string {
  const digits = digitsOf(payment.value);
  let left = toMinor(payment.value, digits) ?? 0n;
  for (const refund of refunds) {
    if (HOLDING.has(refund.status)) left -= toMinor(refund.amount.value, digits) ?? 0n;
  }
  return fromMinor(left > 0n ? left : 0n, digits);
}
