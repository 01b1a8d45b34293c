import { ISO_4217_MINOR_UNITS } from './iso-4217.ts';

/**
 * Money: decimal strings at the edge, integer minor units inside. Values are parsed and formatted as
 * digit strings, never through floats, so "0.1 + 0.2" problems cannot arise anywhere. With at most 12
 * integer digits and 2 minor digits every amount stays below 10^14, well inside the safe-integer range
 * (2^53), so a plain `number` holds it exactly and D1 stores it as an INTEGER.
 */

/**
 * ISO 4217 minor units of the currencies the service accepts: the sandbox connector's list, plus THB and
 * SGD for Stripe's QR methods (PromptPay, PayNow), PEN for Mercado Pago Peru, and MYR for Adyen's DuitNow. A
 * connector version still lists which of them it takes.
 */
export const CURRENCY_MINOR_UNITS = {
  USD: 2,
  EUR: 2,
  BRL: 2,
  ARS: 2,
  MXN: 2,
  UYU: 2,
  COP: 2,
  CLP: 0,
  THB: 2,
  SGD: 2,
  PEN: 2,
  MYR: 2,
} as const satisfies Record<string, number>;

export type Currency = keyof typeof CURRENCY_MINOR_UNITS;

export const SUPPORTED_CURRENCIES = Object.keys(CURRENCY_MINOR_UNITS) as Currency[];

/** At most 12 integer digits (docs/limits.md, "Amounts"). */
export const MAX_INTEGER_DIGITS = 12;

export type MoneyErrorReason =
  | 'unsupported_currency'
  | 'malformed'
  | 'too_many_integer_digits'
  | 'too_many_fraction_digits'
  | 'not_positive'
  | 'invalid_minor_amount';

/**
 * The value is deliberately not part of the message: it is client input and may be anything. Callers
 * map `unsupported_currency` to 422 `unsupported_currency` and every other reason to 400 `invalid_request`.
 */
export class MoneyError extends Error {
  constructor(readonly reason: MoneyErrorReason) {
    super(`Invalid amount: ${reason}`);
    this.name = 'MoneyError';
  }
}

export function isSupportedCurrency(currency: string): currency is Currency {
  // Own-property check: "toString" or "__proto__" must not count as currencies.
  return typeof currency === 'string' && Object.hasOwn(CURRENCY_MINOR_UNITS, currency);
}

/** Minor digits of a supported currency; codes are case-sensitive, as ISO 4217 writes them upper case. */
export function minorUnits(currency: string): number {
  if (!isSupportedCurrency(currency)) throw new MoneyError('unsupported_currency');
  return CURRENCY_MINOR_UNITS[currency];
}

// No sign, exponent, spaces, separators or leading zeros: one spelling per integer part, so a value
// cannot be smuggled past a check in a form another component reads differently.
const DECIMAL = /^(0|[1-9]\d*)(?:\.(\d+))?$/;

/**
 * `amount.value` to integer minor units. The currency is checked first: without it the number of
 * allowed fraction digits is unknown, and the caller needs the distinct 422.
 */
export function parseAmount(value: string, currency: string): number {
  const digits = minorUnits(currency);
  if (typeof value !== 'string') throw new MoneyError('malformed');
  const match = DECIMAL.exec(value);
  if (!match) throw new MoneyError('malformed');
  const integerPart = match[1] ?? '';
  const fractionPart = match[2] ?? '';
  if (integerPart.length > MAX_INTEGER_DIGITS) throw new MoneyError('too_many_integer_digits');
  // "10.50" is fine for USD but "10.500" is not: trailing zeros count, as the contract limits digits.
  if (fractionPart.length > digits) throw new MoneyError('too_many_fraction_digits');
  // At most 14 digits: Number() of a digit string this short is exact.
  const minor = Number(integerPart + fractionPart.padEnd(digits, '0'));
  if (!Number.isSafeInteger(minor) || minor <= 0) throw new MoneyError('not_positive');
  return minor;
}

/**
 * Integer minor units to the canonical string: always exactly the currency's minor digits ("10.50",
 * CLP "1500"). Zero is allowed, as a balance can be zero; negative or fractional input is a bug.
 */
export function formatAmount(minor: number, currency: string): string {
  const digits = minorUnits(currency);
  if (!Number.isSafeInteger(minor) || minor < 0) throw new MoneyError('invalid_minor_amount');
  return decimalOf(minor, digits);
}

function decimalOf(minor: number, digits: number): string {
  if (digits === 0) return String(minor);
  const padded = String(minor).padStart(digits + 1, '0');
  return `${padded.slice(0, -digits)}.${padded.slice(-digits)}`;
}

/**
 * Minor digits of a currency an amount the service only records may be in: what a processor reports it kept
 * (settlements, fees) or what a payer disputes, in the processor's currency, which need not be one a payment may be
 * in (Stripe settles in the account's currency: GBP, JPY, ...). Any ISO 4217 currency with a minor unit
 * (domain/iso-4217.ts); undefined for anything else.
 */
export function recordedMinorUnits(currency: string): number | undefined {
  return typeof currency === 'string' ? ISO_4217_MINOR_UNITS[currency] : undefined;
}

/**
 * A recorded amount as the interface shows it (as `formatAmount`, in the currency's own minor digits: JPY "1030",
 * BHD "1.250"), or null when the service cannot show it: a currency outside ISO 4217 (or one without a minor unit,
 * such as gold), or a value no `Amount` holds (negative, fractional, beyond 12 integer digits). Never throws: what a
 * processor reported must never break a read.
 */
export function formatRecordedAmount(minor: number, currency: string): string | null {
  const digits = recordedMinorUnits(currency);
  if (digits === undefined || !Number.isSafeInteger(minor) || minor < 0) return null;
  const value = decimalOf(minor, digits);
  return value.length - (digits === 0 ? 0 : digits + 1) > MAX_INTEGER_DIGITS ? null : value;
}
