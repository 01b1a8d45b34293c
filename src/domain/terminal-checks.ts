/**
 * How often a payment pending at a POS terminal is read again from its processor (docs/terminal-checks.md).
 * The processor's notification is the usual news; these reads cover a notification that is late or lost,
 * while a cashier is standing at the counter. They start a few seconds after the payment is first seen at
 * the terminal (a Stripe authorization "normally takes a few seconds"; Mercado Pago moves a Point order to
 * `action_required` 40 s into processing), back off to minutes, and stop after a bounded number of reads or
 * when the window ends, whichever comes first; after that the regular reconciliation takes over. A payment
 * the processor reports final is not read again: the caller stops asking.
 */

/** The delay before each read, counted from the read before it (the first from when the payment was first seen). */
export const TERMINAL_CHECK_DELAYS_SECONDS = [5, 5, 10, 10, 15, 15, 30, 30, 60, 60, 120, 120, 300, 300, 600] as const;

/** Reads of one payment at most: one per delay. */
export const MAX_TERMINAL_CHECKS = TERMINAL_CHECK_DELAYS_SECONDS.length;

/** Two reads of one payment are never closer than this, however late or early the caller runs. */
export const TERMINAL_CHECK_MIN_GAP_MS = TERMINAL_CHECK_DELAYS_SECONDS[0] * 1000;

/** No read is scheduled later than this after the payment was first seen at the terminal. */
export const TERMINAL_CHECK_WINDOW_MS = 30 * 60 * 1000;

/** Seconds from the first sighting to each read, on time: 5, 10, 20, ... */
const OFFSETS_SECONDS: readonly number[] = TERMINAL_CHECK_DELAYS_SECONDS.map((_, i) =>
  TERMINAL_CHECK_DELAYS_SECONDS.slice(0, i + 1).reduce((sum: number, delay) => sum + delay, 0),
);

/**
 * When to read a terminal payment next: `attempts` reads were already made since it was first seen at the
 * terminal (`firstSeenAt`), and it is `now` (all in milliseconds). Each read has its slot on the schedule,
 * anchored at the first sighting so a late run does not push the rest later; a run that is late by more
 * than a slot gets the next read `TERMINAL_CHECK_MIN_GAP_MS` from now, never at once, so catching up never
 * bursts. Null: the reads are spent, or the next would fall outside the window.
 */
export function nextTerminalCheck(attempts: number, firstSeenAt: number, now: number): number | null {
  if (!Number.isInteger(attempts) || attempts < 0 || attempts >= MAX_TERMINAL_CHECKS) return null;
  const slot = firstSeenAt + OFFSETS_SECONDS[attempts]! * 1000;
  const at = Math.max(slot, now + TERMINAL_CHECK_MIN_GAP_MS);
  return at - firstSeenAt > TERMINAL_CHECK_WINDOW_MS ? null : at;
}

/** What a payment's terminal wait is recorded as (db/schema/payments.ts). */
export interface TerminalWait {
  atTerminal: boolean;
  terminalSeenAt: number | null;
  terminalChecks: number;
  terminalCheckAt: number | null;
}

/** Statuses a payment may still wait at its terminal in. */
const OPEN: readonly string[] = ['created', 'pending', 'processing'];

/**
 * What the processor's account of a payment (the status it moves to, and the action it reports, when it
 * reports one) changes of its terminal wait; null when nothing. A `pending` payment reported `at_terminal`
 * shows that action; one first seen waiting at its terminal (`at_terminal` or `check_terminal`) starts the
 * re-read schedule there; a payment that is no longer open stops it. The reads themselves advance the
 * schedule (jobs/terminal-checks.ts); a payment seen at the terminal again later keeps its first sighting,
 * so the reads stay bounded per payment.
 */
export function terminalWaitChange(
  current: TerminalWait,
  next: { status: string; action?: string },
  now: number,
): Partial<TerminalWait> | null {
  const change: Partial<TerminalWait> = {};
  if (!OPEN.includes(next.status)) {
    if (current.atTerminal) change.atTerminal = false;
    if (current.terminalCheckAt !== null) change.terminalCheckAt = null;
  } else if (next.action !== undefined) {
    const atTerminal = next.status === 'pending' && next.action === 'at_terminal';
    if (atTerminal !== current.atTerminal) change.atTerminal = atTerminal;
    const waiting = next.status === 'pending' && (next.action === 'at_terminal' || next.action === 'check_terminal');
    if (waiting && current.terminalSeenAt === null) {
      change.terminalSeenAt = now;
      change.terminalChecks = 0;
      change.terminalCheckAt = nextTerminalCheck(0, now, now);
    }
  }
  return Object.keys(change).length > 0 ? change : null;
}
