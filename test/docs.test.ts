import { describe, expect, it } from 'vitest';
import errorsPage from '../docs/errors.md?raw';
import statesPage from '../docs/states.md?raw';
import terminalChecksPage from '../docs/terminal-checks.md?raw';
import { eventTypeFor, PAYMENT_STATUSES, PAYMENT_TRANSITIONS } from '../src/domain/payment-state.ts';
import { REFUND_REVERSALS, REFUND_STATUSES, REFUND_TRANSITIONS } from '../src/domain/refund-state.ts';
import { DISPUTE_STATUSES, DISPUTE_TRANSITIONS } from '../src/domain/disputes.ts';
import { PAYMENT_REVERSALS } from '../src/domain/reversals.ts';
import {
  MAX_TERMINAL_CHECKS,
  nextTerminalCheck,
  TERMINAL_CHECK_DELAYS_SECONDS,
} from '../src/domain/terminal-checks.ts';
import { HTTP_STATUS } from '../src/http/errors.ts';
import { ERROR_CODES, type ErrorCode } from '../src/lib/errors.ts';

/**
 * docs/ holds the interface decisions in prose and tables; the code holds them as data. These tests read
 * the tables back so that a change of one without the other fails.
 */

/** The rows of the markdown table that follows `heading`, as trimmed cells, without backticks. */
function tableAfter(page: string, heading: string): string[][] {
  const start = page.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`no heading ${heading}`);
  const lines = page.slice(start + heading.length + 2).split('\n');
  const first = lines.findIndex((line) => line.startsWith('|'));
  const rows: string[][] = [];
  for (const line of lines.slice(first)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim().replaceAll('`', '')),
    );
  }
  // Header and separator rows.
  return rows.slice(2);
}

const list = (cell: string) => (cell === '' ? [] : cell.split(',').map((s) => s.trim()));

describe('docs/states.md', () => {
  it('lists every payment status once, in the order of the code', () => {
    expect(tableAfter(statesPage, '## Payment states').map((row) => row[0])).toEqual([...PAYMENT_STATUSES]);
  });

  it('has the payment transition table of src/domain/payment-state.ts', () => {
    const rows = tableAfter(statesPage, '### Payment transitions');
    expect(Object.fromEntries(rows.map((row) => [row[0], list(row[1]!)]))).toEqual(PAYMENT_TRANSITIONS);
  });

  it('lists every refund status once, and the refund transition table of src/domain/refund-state.ts', () => {
    expect(tableAfter(statesPage, '## Refund states').map((row) => row[0])).toEqual([...REFUND_STATUSES]);
    const rows = tableAfter(statesPage, '### Refund transitions');
    expect(Object.fromEntries(rows.map((row) => [row[0], list(row[1]!)]))).toEqual(REFUND_TRANSITIONS);
  });

  it('has the reversal tables of src/domain/refund-state.ts and src/domain/reversals.ts', () => {
    const table = (heading: string) =>
      Object.fromEntries(tableAfter(statesPage, heading).map((row) => [row[0], list(row[1]!)]));
    expect(table('### Refund reversals')).toEqual(REFUND_REVERSALS);
    expect(table('### Payment reversals')).toEqual(PAYMENT_REVERSALS);
  });

  it('has the dispute transition table of src/domain/disputes.ts, every status once', () => {
    const rows = tableAfter(statesPage, '## Disputes');
    expect(rows.map((row) => row[0])).toEqual([...DISPUTE_STATUSES]);
    expect(Object.fromEntries(rows.map((row) => [row[0], list(row[1]!)]))).toEqual(DISPUTE_TRANSITIONS);
  });

  it('names the event each status sends, as the code does', () => {
    const rows = tableAfter(statesPage, '## Events a status change sends');
    expect(rows.map((row) => row[0])).toEqual([...PAYMENT_STATUSES]);
    for (const [status, event] of rows)
      expect(event || null, status).toBe(eventTypeFor(status as (typeof PAYMENT_STATUSES)[number]));
  });
});

describe('docs/errors.md', () => {
  it('has one row per error code, with the status, category and retryability of src/lib/errors.ts', () => {
    const rows = tableAfter(
      errorsPage,
      'The table is `ERROR_CODES` of `src/lib/errors.ts` with the statuses of `src/http/errors.ts` (`test/docs.test.ts` compares them).',
    );
    const documented = Object.fromEntries(
      rows.map(([code, status, category, retryable]) => [
        code,
        { status: Number(status), category, retryable: retryable === 'true' },
      ]),
    );
    const coded = Object.fromEntries(
      Object.entries(ERROR_CODES).map(([code, spec]) => [
        code,
        { status: HTTP_STATUS[code as ErrorCode], category: spec.category, retryable: spec.retryable },
      ]),
    );
    expect(documented).toEqual(coded);
    expect(rows).toHaveLength(Object.keys(ERROR_CODES).length);
  });
});

describe('docs/terminal-checks.md', () => {
  it('has the schedule of src/domain/terminal-checks.ts: each read’s delay, and when it falls on time', () => {
    const rows = tableAfter(terminalChecksPage, '## Schedule');
    expect(rows.map((row) => Number(row[0]))).toEqual(Array.from({ length: MAX_TERMINAL_CHECKS }, (_, i) => i + 1));
    expect(rows.map((row) => Number(row[1]))).toEqual([...TERMINAL_CHECK_DELAYS_SECONDS]);
    const seconds = (cell: string) =>
      [...cell.matchAll(/(\d+) (min|s)/g)].reduce((sum, [, n, unit]) => sum + Number(n) * (unit === 'min' ? 60 : 1), 0);
    let now = 0;
    rows.forEach((row, attempts) => {
      now = nextTerminalCheck(attempts, 0, now)!;
      expect(now / 1000, row[2]).toBe(seconds(row[2]!));
    });
  });
});
