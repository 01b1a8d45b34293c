/**
 * ISO 4217 currencies and their minor units, as data: every code of the ISO 4217 list of current currencies and
 * funds ("List One") that has a minor unit, as published by SIX, the standard's maintenance agency
 * (https://www.six-group.com/en/products-services/financial-information/data-standards.html, `list-one.xml`), in its
 * edition of 2024-06-25, plus XCG (Caribbean guilder, 2 minor digits), which amendment 176 added from 2025-03-31.
 * Left out: the codes whose minor unit the list gives as "N.A." (gold XAU, silver XAG, platinum XPT, palladium XPD,
 * the special drawing right XDR, XUA, XSU, the bond market units XBA to XBD, the testing code XTS and XXX, "no
 * currency"): an amount in them has no minor unit to be written in.
 *
 * Checked against a second source, the Unicode CLDR's `currencyData` (CLDR 48 when written; the runtime's `Intl`
 * carries a CLDR): test/domain/money.test.ts compares every entry. CLDR displays no decimals for AFN, ALL, COP, HUF,
 * IDR, IRR, IQD, KPW, LAK, LBP, MGA, MMK, PKR, SOS, SYP and YER (and RSD in some versions), where ISO 4217 counts 2
 * (IQD 3): processors count in ISO's unit (Stripe's HUF and IDR amounts have two decimals), so ISO's are kept.
 *
 * Grouped by minor digits, so an entry reads as the list does; codes are upper case, as the standard writes them.
 */
const CODES_BY_MINOR_UNITS = {
  0: ['BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF'],
  2: [
    'AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BMD BND BOB BOV BRL BSD BTN BWP BYN BZD',
    'CAD CDF CHE CHF CHW CNY COP COU CRC CUC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL',
    'GHS GIP GMD GTQ GYD HKD HNL HTG HUF IDR ILS INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP LKR LRD',
    'LSL MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD PAB PEN',
    'PGK PHP PKR PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB',
    'TJS TMT TOP TRY TTD TWD TZS UAH USD USN UYU UZS VED VES WST XCD XCG YER ZAR ZMW ZWG',
  ],
  3: ['BHD IQD JOD KWD LYD OMR TND'],
  4: ['CLF UYW'],
} as const;

/** Minor digits by ISO 4217 code (a null-prototype record: "toString" or "__proto__" is no currency). */
export const ISO_4217_MINOR_UNITS: Readonly<Record<string, number>> = Object.freeze(
  Object.assign(
    Object.create(null) as Record<string, number>,
    Object.fromEntries(
      Object.entries(CODES_BY_MINOR_UNITS).flatMap(([digits, lines]) =>
        lines.flatMap((line) => line.split(' ')).map((code) => [code, Number(digits)] as const),
      ),
    ),
  ),
);
