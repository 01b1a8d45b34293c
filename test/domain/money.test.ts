import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CURRENCY_MINOR_UNITS,
  MoneyError,
  SUPPORTED_CURRENCIES,
  formatAmount,
  isSupportedCurrency,
  parseAmount,
  type Currency,
} from '../../src/domain/money.ts';

function reasonOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    if (error instanceof MoneyError) return error.reason;
    throw error;
  }
  return undefined;
}

describe('currencies', () => {
  it('lists the sandbox currencies, Stripe QR currencies (THB, SGD), Mercado Pago Peru (PEN) and Adyen DuitNow (MYR) with their ISO 4217 minor units', () => {
    expect(CURRENCY_MINOR_UNITS).toEqual({
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
    });
    expect([...SUPPORTED_CURRENCIES].sort()).toEqual([
      'ARS',
      'BRL',
      'CLP',
      'COP',
      'EUR',
      'MXN',
      'MYR',
      'PEN',
      'SGD',
      'THB',
      'USD',
      'UYU',
    ]);
  });

  it.each(['usd', 'GBP', 'JPY', '', 'US', 'USDD', 'toString', '__proto__', 'constructor'])('refuses %j', (code) => {
    expect(isSupportedCurrency(code)).toBe(false);
    expect(reasonOf(() => parseAmount('10', code))).toBe('unsupported_currency');
    expect(reasonOf(() => formatAmount(1000, code))).toBe('unsupported_currency');
  });

  it('checks the currency before the value, so the caller can answer 422', () => {
    expect(reasonOf(() => parseAmount('abc', 'XYZ'))).toBe('unsupported_currency');
  });
});

describe('parseAmount', () => {
  it.each<[string, Currency, number]>([
    ['10', 'USD', 1000],
    ['10.5', 'USD', 1050],
    ['10.50', 'USD', 1050],
    ['0.01', 'USD', 1],
    ['0.5', 'EUR', 50],
    ['1', 'BRL', 100],
    ['999999999999.99', 'USD', 99_999_999_999_999],
    ['999999999999', 'COP', 99_999_999_999_900],
    ['10', 'CLP', 10],
    ['1500', 'CLP', 1500],
    ['1', 'CLP', 1],
    ['999999999999', 'CLP', 999_999_999_999],
  ])('accepts %j %s as %d', (value, currency, minor) => {
    expect(parseAmount(value, currency)).toBe(minor);
  });

  it.each<[string, Currency, string]>([
    ['10.505', 'USD', 'too_many_fraction_digits'],
    ['10.500', 'USD', 'too_many_fraction_digits'],
    ['-1', 'USD', 'malformed'],
    ['0', 'USD', 'not_positive'],
    ['0.00', 'USD', 'not_positive'],
    ['0.0', 'USD', 'not_positive'],
    ['0', 'CLP', 'not_positive'],
    ['1e3', 'USD', 'malformed'],
    ['1E3', 'USD', 'malformed'],
    [' 1', 'USD', 'malformed'],
    ['1 ', 'USD', 'malformed'],
    ['\t1', 'USD', 'malformed'],
    ['1\n', 'USD', 'malformed'],
    ['01', 'USD', 'malformed'],
    ['00.5', 'USD', 'malformed'],
    ['.5', 'USD', 'malformed'],
    ['5.', 'USD', 'malformed'],
    ['+1', 'USD', 'malformed'],
    ['1,00', 'USD', 'malformed'],
    ['1_000', 'USD', 'malformed'],
    ['1.2.3', 'USD', 'malformed'],
    ['0x10', 'USD', 'malformed'],
    ['Infinity', 'USD', 'malformed'],
    ['NaN', 'USD', 'malformed'],
    ['١٠', 'USD', 'malformed'],
    ['１０', 'USD', 'malformed'],
    ['', 'USD', 'malformed'],
    ['10.5', 'CLP', 'too_many_fraction_digits'],
    ['10.0', 'CLP', 'too_many_fraction_digits'],
    ['1000000000000', 'USD', 'too_many_integer_digits'],
    ['1000000000000', 'CLP', 'too_many_integer_digits'],
    ['99999999999999999999', 'USD', 'too_many_integer_digits'],
  ])('refuses %j %s (%s)', (value, currency, reason) => {
    expect(reasonOf(() => parseAmount(value, currency))).toBe(reason);
  });

  it('refuses a value that is not a string', () => {
    expect(reasonOf(() => parseAmount(10 as unknown as string, 'USD'))).toBe('malformed');
    expect(reasonOf(() => parseAmount(null as unknown as string, 'USD'))).toBe('malformed');
  });

  it('does not echo the value in the error', () => {
    try {
      parseAmount('secret-looking 4111111111111111', 'USD');
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(MoneyError);
      expect((error as Error).message).not.toContain('4111');
    }
  });
});

describe('formatAmount', () => {
  it.each<[number, Currency, string]>([
    [1050, 'USD', '10.50'],
    [1000, 'USD', '10.00'],
    [1, 'USD', '0.01'],
    [10, 'EUR', '0.10'],
    [0, 'USD', '0.00'],
    [99_999_999_999_999, 'USD', '999999999999.99'],
    [1500, 'CLP', '1500'],
    [0, 'CLP', '0'],
  ])('formats %d %s as %j', (minor, currency, text) => {
    expect(formatAmount(minor, currency)).toBe(text);
  });

  it.each([-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, Number.MAX_SAFE_INTEGER + 1])('refuses %d', (minor) => {
    expect(reasonOf(() => formatAmount(minor, 'USD'))).toBe('invalid_minor_amount');
  });
});

// Amounts drawn over the whole accepted range of each currency, as BigInt because fc.integer stops at 2^31.
const currencyAndMinor = fc.constantFrom(...SUPPORTED_CURRENCIES).chain((currency) =>
  fc.tuple(
    fc.constant(currency),
    fc.bigInt({ min: 1n, max: 10n ** BigInt(12 + CURRENCY_MINOR_UNITS[currency]) - 1n }).map((n) => Number(n)),
  ),
);

const validValue = fc.constantFrom(...SUPPORTED_CURRENCIES).chain((currency) => {
  const digits = CURRENCY_MINOR_UNITS[currency];
  const integerPart = fc.oneof(
    fc.constant('0'),
    fc
      .tuple(fc.integer({ min: 1, max: 9 }), fc.string({ unit: fc.constantFrom(...'0123456789'), maxLength: 11 }))
      .map(([first, rest]) => `${first}${rest}`),
  );
  const fractionPart = fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: 0, maxLength: digits });
  return fc
    .tuple(integerPart, fc.boolean(), fractionPart)
    .map(([int, dot, frac]) => (dot && frac.length > 0 ? `${int}.${frac}` : int))
    .filter((value) => /[1-9]/.test(value))
    .map((value) => [currency, value] as const);
});

describe('properties', () => {
  it('formatAmount then parseAmount gives back the same integer', () => {
    fc.assert(
      fc.property(currencyAndMinor, ([currency, minor]) => {
        expect(parseAmount(formatAmount(minor, currency), currency)).toBe(minor);
      }),
      { numRuns: 2000 },
    );
  });

  it('parseAmount then formatAmount gives the canonical form', () => {
    fc.assert(
      fc.property(validValue, ([currency, value]) => {
        const digits = CURRENCY_MINOR_UNITS[currency];
        const [int, frac = ''] = value.split('.');
        const canonical = digits === 0 ? value : `${int}.${frac.padEnd(digits, '0')}`;
        const minor = parseAmount(value, currency);
        expect(formatAmount(minor, currency)).toBe(canonical);
        // Cross-check against exact BigInt arithmetic.
        expect(BigInt(minor)).toBe(BigInt(int ?? '') * 10n ** BigInt(digits) + BigInt(frac.padEnd(digits, '0') || '0'));
      }),
      { numRuns: 2000 },
    );
  });

  it('any string is either refused with a MoneyError or parsed into a positive safe integer of the accepted form', () => {
    const anyText = fc.oneof(fc.string(), fc.string({ unit: fc.constantFrom(...'0123456789.-+eE ,'), maxLength: 20 }));
    fc.assert(
      fc.property(fc.constantFrom(...SUPPORTED_CURRENCIES), anyText, (currency, value) => {
        let minor: number;
        try {
          minor = parseAmount(value, currency);
        } catch (error) {
          expect(error).toBeInstanceOf(MoneyError);
          return;
        }
        expect(Number.isSafeInteger(minor)).toBe(true);
        expect(minor).toBeGreaterThan(0);
        const digits = CURRENCY_MINOR_UNITS[currency];
        const fraction = digits === 0 ? '' : `(\\.\\d{1,${digits}})?`;
        expect(value).toMatch(new RegExp(`^(0|[1-9]\\d{0,11})${fraction}$`));
      }),
      { numRuns: 3000 },
    );
  });
});
