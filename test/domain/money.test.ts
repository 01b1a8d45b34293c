import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ISO_4217_MINOR_UNITS } from '../../src/domain/iso-4217.ts';
import {
  CURRENCY_MINOR_UNITS,
  MoneyError,
  SUPPORTED_CURRENCIES,
  formatAmount,
  formatRecordedAmount,
  isSupportedCurrency,
  parseAmount,
  recordedMinorUnits,
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

describe('ISO 4217 (amounts the service only records)', () => {
  /**
   * Where the Unicode CLDR displays no decimals and ISO 4217 counts some (src/domain/iso-4217.ts says why ISO's hold);
   * CLDR versions differ on a few (RSD), so the runtime's may have fewer of these, never another.
   */
  const CLDR_WITHOUT_DECIMALS = 'AFN ALL COP HUF IDR IRR IQD KPW LAK LBP MGA MMK PKR RSD SOS SYP YER'.split(' ');
  const cldrDigits = (code: string) =>
    new Intl.NumberFormat('en', { style: 'currency', currency: code }).resolvedOptions().maximumFractionDigits;

  it('has every currency of List One with a minor unit, each as CLDR has it but where CLDR only displays fewer', () => {
    const codes = Object.keys(ISO_4217_MINOR_UNITS);
    expect(codes.length).toBe(167);
    expect(codes.every((code) => /^[A-Z]{3}$/.test(code))).toBe(true);
    const differences = codes.filter((code) => cldrDigits(code) !== ISO_4217_MINOR_UNITS[code]);
    expect(differences.filter((code) => !CLDR_WITHOUT_DECIMALS.includes(code) || cldrDigits(code) !== 0)).toEqual([]);
    // The well-known ones, in every CLDR since ISO and CLDR parted on them.
    expect(differences).toEqual(expect.arrayContaining(['COP', 'HUF', 'IDR', 'IQD', 'PKR']));
    expect(ISO_4217_MINOR_UNITS).toMatchObject({ JPY: 0, KRW: 0, BHD: 3, KWD: 3, CLF: 4, UYW: 4, XCG: 2, GBP: 2 });
    // No minor unit in List One: metals, drawing rights, bond units, the testing code and "no currency".
    for (const code of ['XAU', 'XAG', 'XPT', 'XPD', 'XDR', 'XUA', 'XSU', 'XBA', 'XTS', 'XXX'])
      expect(recordedMinorUnits(code)).toBeUndefined();
  });

  it('agrees with the currencies a payment may be in', () => {
    for (const currency of SUPPORTED_CURRENCIES)
      expect(recordedMinorUnits(currency), currency).toBe(CURRENCY_MINOR_UNITS[currency]);
  });

  it.each<[number, string, string]>([
    [1030, 'JPY', '1030'],
    [0, 'JPY', '0'],
    [1250, 'BHD', '1.250'],
    [5, 'KWD', '0.005'],
    [12_345, 'CLF', '1.2345'],
    [103, 'GBP', '1.03'],
    [99_999_999_999_999, 'USD', '999999999999.99'],
    [999_999_999_999, 'JPY', '999999999999'],
  ])('shows %d %s as %j', (minor, currency, value) => {
    expect(formatRecordedAmount(minor, currency)).toBe(value);
  });

  it.each<[number, string]>([
    [100, 'XAU'],
    [100, 'XYZ'],
    [100, 'jpy'],
    [100, ''],
    [100, 'toString'],
    [100, '__proto__'],
    [-1, 'USD'],
    [1.5, 'USD'],
    [Number.NaN, 'USD'],
    [Number.MAX_SAFE_INTEGER + 1, 'JPY'],
    [1_000_000_000_000, 'JPY'],
    [100_000_000_000_000, 'USD'],
  ])('cannot show %d %j, and says so without throwing', (minor, currency) => {
    expect(formatRecordedAmount(minor, currency)).toBeNull();
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
