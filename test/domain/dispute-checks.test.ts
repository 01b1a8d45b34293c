import { describe, expect, it } from 'vitest';
import {
  DISPUTE_CHECK_MAX_GAP_MS,
  DISPUTE_CHECK_MIN_GAP_MS,
  nextDisputeCheck,
  OPEN_DISPUTE_CHECK_GAP_MS,
  withinDisputeWindow,
} from '../../src/domain/dispute-checks.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const WINDOW = 120 * DAY;

/** The reads of one payment without a dispute over its whole window, from its first (an hour after the sale). */
function readsOverWindow(): number[] {
  const reads: number[] = [];
  let at: number | null = DISPUTE_CHECK_MIN_GAP_MS;
  while (at !== null) {
    reads.push(at);
    at = nextDisputeCheck({ createdAt: 0, windowMs: WINDOW, openDispute: false, now: at });
  }
  return reads;
}

describe('nextDisputeCheck', () => {
  it('within the window: a gap of a quarter of the age, between 1 hour and 3 days; the last read at the window’s end', () => {
    expect(nextDisputeCheck({ createdAt: 0, windowMs: WINDOW, openDispute: false, now: HOUR })).toBe(2 * HOUR);
    expect(nextDisputeCheck({ createdAt: 0, windowMs: WINDOW, openDispute: false, now: 4 * DAY })).toBe(5 * DAY);
    expect(nextDisputeCheck({ createdAt: 0, windowMs: WINDOW, openDispute: false, now: 60 * DAY })).toBe(63 * DAY);
    expect(nextDisputeCheck({ createdAt: 0, windowMs: WINDOW, openDispute: false, now: 119 * DAY })).toBe(WINDOW);
    expect(nextDisputeCheck({ createdAt: 0, windowMs: WINDOW, openDispute: false, now: WINDOW })).toBeNull();
  });

  it('bounded: 60 reads of a payment over 120 days, never closer than 1 hour nor further apart than 3 days', () => {
    const reads = readsOverWindow();
    const gaps = reads.slice(1).map((at, i) => at - reads[i]!);
    expect(reads).toHaveLength(60);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(DISPUTE_CHECK_MIN_GAP_MS);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(DISPUTE_CHECK_MAX_GAP_MS);
    expect(reads.at(-1)).toBe(WINDOW);
  });

  it('an open dispute is read every 6 hours, also past the window; a processor that cannot be read is not', () => {
    const now = 60 * DAY;
    expect(nextDisputeCheck({ createdAt: 0, windowMs: WINDOW, openDispute: true, now })).toBe(
      now + OPEN_DISPUTE_CHECK_GAP_MS,
    );
    expect(nextDisputeCheck({ createdAt: 0, windowMs: WINDOW, openDispute: true, now: 2 * HOUR })).toBe(3 * HOUR);
    expect(nextDisputeCheck({ createdAt: 0, windowMs: WINDOW, openDispute: true, now: 200 * DAY })).toBe(
      200 * DAY + OPEN_DISPUTE_CHECK_GAP_MS,
    );
    expect(nextDisputeCheck({ createdAt: 0, windowMs: undefined, openDispute: false, now: HOUR })).toBeNull();
  });

  it('withinDisputeWindow includes its last moment', () => {
    expect(withinDisputeWindow(0, WINDOW, WINDOW)).toBe(true);
    expect(withinDisputeWindow(0, WINDOW, WINDOW + 1)).toBe(false);
    expect(withinDisputeWindow(0, undefined, 0)).toBe(false);
  });
});
