/**
 * Time ranges as sums of counter buckets (db/schema/counters.ts): a range of `created_at` is answered from the counters
 * of the whole days, hours and quarter hours it covers, and only what is left at its edges (less than a quarter hour
 * each) is counted from rows. Every time zone's offset is a multiple of 15 minutes, so a day or an hour of any zone is
 * whole buckets. Where a range covers most of a bucket, the bucket is taken and the part outside subtracted, which
 * keeps the buckets read to a few per edge whatever the range.
 */

export const QUARTER_MS = 15 * 60_000;
export const HOUR_MS = 60 * 60_000;
export const DAY_MS = 24 * HOUR_MS;

/**
 * The counters' spans below `all`, largest first, with their size; each a whole number of the next, so that a range
 * of any length is a few buckets of each (at most about eight per edge and span: a range of years reads about a
 * hundred buckets, one of minutes a few).
 */
export const BUCKET_SPANS = [
  { span: 'days512', size: 512 * DAY_MS },
  { span: 'days64', size: 64 * DAY_MS },
  { span: 'days8', size: 8 * DAY_MS },
  { span: 'day', size: DAY_MS },
  { span: 'hour', size: HOUR_MS },
  { span: 'quarter', size: QUARTER_MS },
] as const;
export type BucketSpan = (typeof BUCKET_SPANS)[number]['span'];

/** A bucket added (`sign` 1) or subtracted (-1). */
export interface SignedBucket {
  span: BucketSpan;
  bucket: number;
  sign: 1 | -1;
}

/** `[from, to)` of `created_at` counted from rows (less than a quarter hour), added or subtracted. */
export interface SignedRows {
  from: number;
  to: number;
  sign: 1 | -1;
}

export interface Decomposition {
  buckets: SignedBucket[];
  rows: SignedRows[];
}

const floorTo = (t: number, size: number) => Math.floor(t / size) * size;
const ceilTo = (t: number, size: number) => Math.ceil(t / size) * size;

/** How many lookups covering `[a, b)` costs below `level` (buckets of the smaller spans, and row ranges). */
function cost(a: number, b: number, level: number): number {
  const d = decompose(a, b, level);
  return d.buckets.length + d.rows.length;
}

/**
 * `[from, to)` as signed buckets and row ranges whose sum is exactly the range. `level` is the largest span used
 * (0: the largest). Finite bounds only: an open end is bounded by the caller (the clock, or the first bucket).
 */
export function decompose(from: number, to: number, level = 0): Decomposition {
  const out: Decomposition = { buckets: [], rows: [] };
  if (!(from < to)) return out;
  const unit = BUCKET_SPANS[level];
  if (!unit) {
    out.rows.push({ from, to, sign: 1 });
    return out;
  }
  const first = ceilTo(from, unit.size);
  const last = floorTo(to, unit.size);
  if (first > last) {
    // Inside one bucket of this span: its smaller buckets, or the bucket less what lies outside the range on each side.
    const holder = last;
    const inside = cost(from, to, level + 1);
    const outside = 1 + cost(holder, from, level + 1) + cost(to, holder + unit.size, level + 1);
    if (outside < inside) {
      out.buckets.push({ span: unit.span, bucket: holder, sign: 1 });
      merge(out, decompose(holder, from, level + 1), -1);
      merge(out, decompose(to, holder + unit.size, level + 1), -1);
    } else merge(out, decompose(from, to, level + 1), 1);
    return out;
  }
  for (let bucket = first; bucket < last; bucket += unit.size) out.buckets.push({ span: unit.span, bucket, sign: 1 });
  edge(out, first - unit.size, from, first, level, 'head');
  edge(out, last, to, last + unit.size, level, 'tail');
  return out;
}

/**
 * The part of the bucket `[start, start + size)` that the range covers at one edge: `[cut, end)` for the head,
 * `[start, cut)` for the tail. Its smaller buckets, or the whole bucket less the part outside, whichever is fewer.
 */
function edge(out: Decomposition, start: number, cut: number, end: number, level: number, side: 'head' | 'tail') {
  const unit = BUCKET_SPANS[level]!;
  const [inA, inB, outA, outB] = side === 'head' ? [cut, end, start, cut] : [start, cut, cut, end];
  if (inA >= inB) return;
  if (cost(outA, outB, level + 1) + 1 < cost(inA, inB, level + 1)) {
    out.buckets.push({ span: unit.span, bucket: start, sign: 1 });
    merge(out, decompose(outA, outB, level + 1), -1);
  } else merge(out, decompose(inA, inB, level + 1), 1);
}

function merge(out: Decomposition, part: Decomposition, sign: 1 | -1) {
  for (const b of part.buckets) out.buckets.push({ ...b, sign: (b.sign * sign) as 1 | -1 });
  for (const r of part.rows) out.rows.push({ ...r, sign: (r.sign * sign) as 1 | -1 });
}

/** The UTC offset of `zone` at `at`, in milliseconds (Intl: no table of zones of our own). */
export function zoneOffset(at: number, zone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(at));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const asUtc = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return asUtc - floorTo(at, 1000);
}

/** Whether `zone` is an IANA time zone the runtime knows. */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The instant the local day of `zone` holding `at` starts. */
export function zonedDayStart(at: number, zone: string): number {
  const local = at + zoneOffset(at, zone);
  const midnight = floorTo(local, DAY_MS);
  // The offset at midnight may differ from the one at `at` (a change of summer time that day): settle on it.
  let start = midnight - zoneOffset(midnight, zone);
  for (let i = 0; i < 3; i++) {
    const next = midnight - zoneOffset(start, zone);
    if (next === start) break;
    start = next;
  }
  return start > at ? start - DAY_MS : start;
}

/**
 * The report's intervals over `[from, to)`: the local days of `zone`, or hours, each clipped to the range, so that
 * they add up to it exactly.
 */
export function intervals(from: number, to: number, interval: 'day' | 'hour', zone: string): [number, number][] {
  const out: [number, number][] = [];
  let start = interval === 'day' ? zonedDayStart(from, zone) : hourStart(from, zone);
  while (start < to) {
    const end = interval === 'day' ? zonedDayStart(start + DAY_MS + 2 * HOUR_MS, zone) : start + HOUR_MS;
    out.push([Math.max(start, from), Math.min(end, to)]);
    start = end;
  }
  return out;
}

/** The start of the local hour of `zone` holding `at` (whole hours, or the half and quarter hours of some zones). */
function hourStart(at: number, zone: string): number {
  const offset = zoneOffset(at, zone);
  return floorTo(at + offset, HOUR_MS) - offset;
}
