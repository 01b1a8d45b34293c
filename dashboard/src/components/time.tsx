import { useEffect, useState } from 'preact/hooks';

const LOCAL = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/** The viewer's time zone, named on pages that show times. */
export const viewerTimeZone = LOCAL.resolvedOptions().timeZone;

export const utcText = (date: Date) => `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;

/** An instant in the viewer's time zone, with UTC on hover (and in `datetime` for assistive tools). */
export function Time({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span class="hint">none</span>;
  const date = new Date(iso);
  return (
    <time dateTime={iso} title={utcText(date)}>
      {LOCAL.format(date)}
    </time>
  );
}

/** The current time, again every `everyMs`. */
export function useNow(everyMs: number): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(timer);
  }, [everyMs]);
  return now;
}

/** "3 d 4 h", "12 min 5 s": a duration as a person reads it, its two largest units. */
export function durationText(ms: number): string {
  const units: [string, number][] = [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['min', 60_000],
    ['s', 1000],
  ];
  const parts: string[] = [];
  let rest = Math.abs(ms);
  for (const [name, size] of units) {
    const count = Math.floor(rest / size);
    rest -= count * size;
    if (count > 0 || parts.length > 0) parts.push(`${count} ${name}`);
    if (parts.length === 2) break;
  }
  return parts.length > 0 ? parts.join(' ') : '0 s';
}

/** Time left until `iso` (a deadline), counting down; "overdue by ..." once it has passed. */
export function Countdown({ iso }: { iso: string | null }) {
  const now = useNow(1000);
  if (!iso) return <span class="hint">no deadline</span>;
  const left = new Date(iso).getTime() - now;
  return (
    <span>
      <Time iso={iso} /> ({left > 0 ? `${durationText(left)} left` : `overdue by ${durationText(left)}`})
    </span>
  );
}
