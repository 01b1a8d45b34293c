import { describe, expect, it } from 'vitest';
import { toCsv } from '../dashboard/src/csv.ts';
import { formatMoney, fromMinor, refundableBalance, toMinor } from '../dashboard/src/money.ts';
import { calendarDays, dayIn, type ReportRow, summarize } from '../dashboard/src/report.ts';
import { WALK_PAGE_SIZE, walkList } from '../dashboard/src/walk-list.ts';

/**
 * The dashboard's logic that needs no browser: CSV, amounts, walking a whole list for the export, and the overview's
 * sums of the payments report.
 */

/**
 * A list served newest first with cursor paging, as the API pages: the items after `starting_after` (by id, wherever
 * it now is in the list), `limit` of them, and whether more follow.
 */
function cursorList(items: { id: string }[]) {
  const windows: { limit: number; starting_after?: string }[] = [];
  const fetchPage = async (window: { limit: number; starting_after?: string }) => {
    windows.push(window);
    const start = window.starting_after === undefined ? 0 : items.findIndex((i) => i.id === window.starting_after) + 1;
    const data = items.slice(start, start + window.limit);
    return { data: { data, pagination: { total: items.length, has_more: start + window.limit < items.length } } };
  };
  return { windows, fetchPage };
}

const ids = (count: number) => Array.from({ length: count }, (_, i) => ({ id: `pay_${i}` }));

describe('walkList', () => {
  it('walks every page of a list by cursor, not only the first', async () => {
    const { windows, fetchPage } = cursorList(ids(2 * WALK_PAGE_SIZE + 7));
    const progress: number[] = [];
    const walked = await walkList(fetchPage, (done) => progress.push(done));
    expect(walked.items?.map((item) => item.id)).toEqual(ids(2 * WALK_PAGE_SIZE + 7).map((item) => item.id));
    expect(windows).toEqual([
      { limit: WALK_PAGE_SIZE },
      { limit: WALK_PAGE_SIZE, starting_after: `pay_${WALK_PAGE_SIZE - 1}` },
      { limit: WALK_PAGE_SIZE, starting_after: `pay_${2 * WALK_PAGE_SIZE - 1}` },
    ]);
    expect(progress).toEqual([WALK_PAGE_SIZE, 2 * WALK_PAGE_SIZE, 2 * WALK_PAGE_SIZE + 7]);
  });

  it('asks once for an empty list, and once for a list of exactly one page', async () => {
    for (const count of [0, WALK_PAGE_SIZE]) {
      const { windows, fetchPage } = cursorList(ids(count));
      expect((await walkList(fetchPage)).items).toHaveLength(count);
      expect(windows).toHaveLength(1);
    }
  });

  it('meets every item once while new ones arrive at the front between pages', async () => {
    const items = ids(2 * WALK_PAGE_SIZE + 1);
    const before = items.map((item) => item.id);
    const { fetchPage } = cursorList(items);
    const walked = await walkList(async (window) => {
      const answer = await fetchPage(window);
      // A payment arrives after each page: newest first, it comes before every page read so far.
      items.unshift({ id: `pay_new_${items.length}` });
      return answer;
    });
    expect(walked.items!.map((item) => item.id)).toEqual(before);
  });

  it('stops at the first problem and answers it', async () => {
    const problem = { code: 'rate_limited' };
    let asked = 0;
    const walked = await walkList(async () =>
      asked++ === 0 ? { data: { data: ids(WALK_PAGE_SIZE), pagination: { total: 500, has_more: true } } } : { problem },
    );
    expect(walked).toEqual({ problem });
    expect(asked).toBe(2);
  });
});

describe('toCsv', () => {
  it('quotes what must be quoted and ends every line with CRLF', () => {
    expect(
      toCsv([
        ['id', 'description'],
        ['pay_1', 'Two "coffees", one cake\nto go'],
        ['pay_2', null],
      ]),
    ).toBe('id,description\r\npay_1,"Two ""coffees"", one cake\nto go"\r\npay_2,\r\n');
  });

  it('keeps a spreadsheet from running a cell as a formula', () => {
    expect(toCsv([['=HYPERLINK("https://x.invalid")', '+1', '-2', '@SUM(A1)', 'plain']])).toBe(
      `"'=HYPERLINK(""https://x.invalid"")",'+1,'-2,'@SUM(A1),plain\r\n`,
    );
  });
});

describe('amounts', () => {
  it('reads and writes decimal strings in minor units, exactly', () => {
    expect(toMinor('12.5', 2)).toBe(1250n);
    expect(toMinor('999999999999.99', 2)).toBe(99999999999999n);
    expect(toMinor('1500', 0)).toBe(1500n);
    for (const bad of ['12.505', '-1', '1e3', '', '1.', 'abc', '0x10']) expect(toMinor(bad, 2), bad).toBeNull();
    expect(fromMinor(1250n, 2)).toBe('12.50');
    expect(fromMinor(5n, 2)).toBe('0.05');
    expect(fromMinor(1500n, 0)).toBe('1500');
  });

  it('the refundable balance counts every refund but declined and failed ones', () => {
    const refunds = [
      { status: 'approved', amount: { value: '15.00', currency: 'USD' } },
      { status: 'pending', amount: { value: '5.10', currency: 'USD' } },
      { status: 'declined', amount: { value: '7.00', currency: 'USD' } },
      { status: 'failed', amount: { value: '3.00', currency: 'USD' } },
    ];
    expect(refundableBalance({ value: '40.00', currency: 'USD' }, refunds)).toBe('19.90');
    expect(refundableBalance({ value: '1500', currency: 'CLP' }, [])).toBe('1500');
    expect(refundableBalance({ value: '10.00', currency: 'USD' }, refunds)).toBe('0.00');
  });

  it('shows an amount in its currency with the digits the API wrote', () => {
    // ICU separates a currency code with a no-break space; which one is its business.
    const shown = (value: string, currency: string, locale: string) =>
      formatMoney({ value, currency }, locale).replace(/\s/g, ' ');
    expect(shown('1234.50', 'USD', 'en-US')).toBe('$1,234.50');
    expect(shown('1500', 'CLP', 'en-US')).toBe('CLP 1,500');
    expect(shown('0.10', 'BRL', 'pt-BR')).toBe('R$ 0,10');
    // Exactly the string, never through a float: 12 integer digits and 2 decimals stay as written.
    expect(shown('999999999999.99', 'USD', 'en-US')).toBe('$999,999,999,999.99');
    expect(shown('1.00', 'NOT-A-CODE', 'en-US')).toBe('1.00 NOT-A-CODE');
  });
});

describe('the overview’s report', () => {
  const row = (start: string, status: ReportRow['status'], value: string, currency: string, count: number) => ({
    start,
    end: start,
    status,
    currency,
    count,
    amount: { value, currency },
  });

  it('names calendar days, across a month’s end and a daylight-saving change', () => {
    expect(calendarDays('2026-02-27', 3)).toEqual(['2026-02-27', '2026-02-28', '2026-03-01']);
    // New York's clocks go forward on 2026-03-08: still one key a day.
    expect(calendarDays('2026-03-07', 3)).toEqual(['2026-03-07', '2026-03-08', '2026-03-09']);
    // São Paulo's midnight is 03:00 UTC: a day's interval starts then, and a millisecond before is the day before.
    expect(dayIn('America/Sao_Paulo')('2026-11-21T03:00:00.000Z')).toBe('2026-11-21');
    expect(dayIn('America/Sao_Paulo')('2026-11-21T02:59:59.999Z')).toBe('2026-11-20');
    expect(dayIn('Asia/Tokyo')('2026-11-20T15:00:00.000Z')).toBe('2026-11-21');
  });

  it('adds up the rows per status and currency, and per currency and day, empty days included', () => {
    const days = calendarDays('2026-11-20', 3);
    const rows = [
      row('2026-11-20T03:00:00.000Z', 'approved', '40.00', 'USD', 2),
      row('2026-11-20T03:00:00.000Z', 'declined', '9.99', 'USD', 1),
      row('2026-11-20T03:00:00.000Z', 'approved', '1500', 'CLP', 1),
      row('2026-11-22T03:00:00.000Z', 'refunded', '0.01', 'USD', 1),
      row('2026-11-22T03:00:00.000Z', 'partially_refunded', '999999999999.99', 'USD', 1),
    ];
    const { byStatus, currencies } = summarize(rows, days, dayIn('America/Sao_Paulo'));
    const status = (name: string) => byStatus.find((s) => s.status === name)!;
    expect(byStatus).toHaveLength(10);
    expect(status('approved').count).toBe(3);
    expect(status('approved').amounts).toEqual(
      new Map([
        ['USD', 4000n],
        ['CLP', 1500n],
      ]),
    );
    expect(status('pending')).toEqual({ status: 'pending', count: 0, amounts: new Map() });
    // Most payments first; exact sums beyond a float's digits.
    expect(currencies.map((c) => [c.currency, c.digits, c.total])).toEqual([
      ['USD', 2, { count: 5, minor: 100000000004999n }],
      ['CLP', 0, { count: 1, minor: 1500n }],
    ]);
    expect(fromMinor(currencies[0]!.total.minor, 2)).toBe('1000000000049.99');
    expect(currencies[0]!.days).toEqual([
      { day: '2026-11-20', all: { count: 3, minor: 4999n }, approved: { count: 2, minor: 4000n } },
      { day: '2026-11-21', all: { count: 0, minor: 0n }, approved: { count: 0, minor: 0n } },
      {
        day: '2026-11-22',
        all: { count: 2, minor: 100000000000000n },
        approved: { count: 2, minor: 100000000000000n },
      },
    ]);
    expect(currencies[1]!.days.map((d) => d.all.count)).toEqual([1, 0, 0]);
  });
});
