import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BUCKET_SPANS,
  DAY_MS,
  decompose,
  HOUR_MS,
  intervals,
  isTimeZone,
  QUARTER_MS,
  zonedDayStart,
  zoneOffset,
} from '../../src/domain/buckets.ts';

const sizeOf = (span: string) => BUCKET_SPANS.find((s) => s.span === span)!.size;
const BASE = Date.UTC(2026, 10, 1);

/** How many times the decomposition counts the instant `t`: exactly once inside the range, never outside. */
function covers(d: ReturnType<typeof decompose>, t: number): number {
  let n = 0;
  for (const b of d.buckets) if (t >= b.bucket && t < b.bucket + sizeOf(b.span)) n += b.sign;
  for (const r of d.rows) if (t >= r.from && t < r.to) n += r.sign;
  return n;
}

describe('a range as counter buckets', () => {
  it('counts every instant of the range once and none outside, whatever the range', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 5 * DAY_MS }),
        fc.integer({ min: 0, max: 3 * DAY_MS }),
        fc.array(fc.integer({ min: -DAY_MS, max: 9 * DAY_MS }), { minLength: 20, maxLength: 20 }),
        (start, length, probes) => {
          const [from, to] = [BASE + start, BASE + start + length];
          const d = decompose(from, to);
          for (const probe of [...probes.map((p) => BASE + p), from, to - 1, to, from - 1])
            expect(covers(d, probe), `${probe - BASE} in [${start}, ${start + length})`).toBe(
              probe >= from && probe < to ? 1 : 0,
            );
          // Rows are read only at the edges, less than a quarter hour each side.
          for (const r of d.rows) expect(r.to - r.from).toBeLessThan(2 * QUARTER_MS);
          expect(d.rows.length).toBeLessThanOrEqual(4);
        },
      ),
      { numRuns: 2_000, seed: 27 },
    );
  });

  it('a range of any length reads a bounded number of buckets: decades cost about what a week does', () => {
    const week = decompose(BASE + 5 * HOUR_MS + 7 * QUARTER_MS, BASE + 7 * DAY_MS + 3 * QUARTER_MS);
    const decades = decompose(0 + 5 * HOUR_MS + 7 * QUARTER_MS, Date.UTC(2100, 0, 1) + 3 * QUARTER_MS);
    for (const d of [week, decades]) {
      expect(d.rows).toEqual([]);
      expect(d.buckets.length).toBeLessThanOrEqual(120);
    }
    for (const t of [5 * HOUR_MS + 7 * QUARTER_MS, BASE, Date.UTC(2099, 11, 31)]) expect(covers(decades, t)).toBe(1);
    expect(covers(decades, Date.UTC(2100, 0, 1) + 3 * QUARTER_MS)).toBe(0);
  });

  it('a day of any zone is whole buckets, a few per edge, and a UTC day one bucket', () => {
    const utc = decompose(BASE, BASE + DAY_MS);
    expect(utc).toEqual({ buckets: [{ span: 'day', bucket: BASE, sign: 1 }], rows: [] });
    for (const offset of [-3 * HOUR_MS, 5.5 * HOUR_MS, 5.75 * HOUR_MS, 12 * HOUR_MS]) {
      const d = decompose(BASE + offset, BASE + offset + DAY_MS);
      expect(d.rows).toEqual([]);
      expect(d.buckets.length).toBeLessThanOrEqual(24);
    }
  });
});

describe('the report’s intervals', () => {
  it('are the zone’s days, clipped to the range, adding up to it; hours when asked', () => {
    for (const zone of ['UTC', 'America/Sao_Paulo', 'Asia/Kolkata', 'Asia/Kathmandu', 'Europe/Berlin']) {
      expect(isTimeZone(zone)).toBe(true);
      const from = Date.UTC(2026, 2, 20, 7, 13);
      const to = Date.UTC(2026, 3, 5, 1, 2);
      const days = intervals(from, to, 'day', zone);
      expect(days[0]![0]).toBe(from);
      expect(days.at(-1)![1]).toBe(to);
      for (let i = 1; i < days.length; i++) expect(days[i]![0]).toBe(days[i - 1]![1]);
      // Each inner day starts at the zone's midnight (23 or 25 hours on a change of summer time).
      for (const [start, end] of days.slice(1, -1)) {
        expect(zonedDayStart(start, zone)).toBe(start);
        expect([23, 24, 25]).toContain((end - start) / HOUR_MS);
        expect((start + zoneOffset(start, zone)) % DAY_MS).toBe(0);
      }
      const hours = intervals(Date.UTC(2026, 2, 29, 0), Date.UTC(2026, 2, 30, 0), 'hour', zone);
      expect(hours[0]![0]).toBe(Date.UTC(2026, 2, 29, 0));
      for (let i = 1; i < hours.length; i++) expect(hours[i]![0]).toBe(hours[i - 1]![1]);
    }
    expect(isTimeZone('Mars/Olympus_Mons')).toBe(false);
  });
});
