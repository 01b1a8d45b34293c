/**
 * How often a collected payment's disputes are read again from its processor (docs/dispute-checks.md). The
 * processor's notification is the usual news of a dispute; these reads find one whose notification was lost:
 * a dispute opened, moved or decided without us hearing of it. Two reasons to read a payment:
 * - it is within its processor's dispute window (a cardholder may still open one), read ever more rarely as it
 *   ages: disputes come in the weeks after a sale far more than months later;
 * - it has a dispute still open (its decision may come long after the window), read every few hours until it
 *   closes, because an open dispute has a deadline the merchant must meet.
 * The caller reads the payment when its time comes (`dispute_check_at`) and sets the next time with
 * `nextDisputeCheck`; null ends the reads.
 */

/** The first read after a payment is collected, and the shortest gap between two reads of one payment. */
export const DISPUTE_CHECK_MIN_GAP_MS = 60 * 60 * 1000;
/**
 * The longest gap between two reads of a payment within its window: a dispute whose notification was lost is
 * found within this long. Evidence is due 7 to 21 days after a dispute opens, depending on the card network
 * (https://docs.stripe.com/disputes/responding?locale=es-ES: "normalmente de 7 a 21 días, según la red de tarjetas"), so 3 days leaves the merchant at
 * least 4 of the shortest.
 */
export const DISPUTE_CHECK_MAX_GAP_MS = 3 * 86_400_000;
/** Gap as a share of the payment's age: a payment 4 days old is read again a day later. */
export const DISPUTE_CHECK_AGE_SHARE = 0.25;
/** An open dispute is read this often until it closes (whatever the payment's age). */
export const OPEN_DISPUTE_CHECK_GAP_MS = 6 * 60 * 60 * 1000;

/** Statuses whose money was collected: only these can be disputed (and so are read). */
export const DISPUTABLE_STATUSES: readonly string[] = ['approved', 'partially_refunded', 'refunded'];

/** When a payment's disputes are first read: once collected, on `DISPUTE_CHECK_MIN_GAP_MS`. */
export function firstDisputeCheck(now: number): number {
  return now + DISPUTE_CHECK_MIN_GAP_MS;
}

export interface DisputeCheckInput {
  /** When the payment was created: its window counts from it (a payment is collected minutes after, usually). */
  createdAt: number;
  /** How long after the sale its processor lets a cardholder dispute; absent: the processor cannot be read. */
  windowMs: number | undefined;
  /** Whether one of its disputes is open (not `won`, `lost` or `warning_closed`). */
  openDispute: boolean;
  now: number;
}

/**
 * When to read the payment's disputes next, or null for never: the sooner of the window's next read (a gap of
 * a quarter of the payment's age, between 1 hour and 3 days, the last read at the window's end) and an open
 * dispute's (every 6 hours).
 */
export function nextDisputeCheck({ createdAt, windowMs, openDispute, now }: DisputeCheckInput): number | null {
  const times: number[] = [];
  if (windowMs !== undefined) {
    const end = createdAt + windowMs;
    if (now < end) {
      const gap = Math.min(
        DISPUTE_CHECK_MAX_GAP_MS,
        Math.max(DISPUTE_CHECK_MIN_GAP_MS, (now - createdAt) * DISPUTE_CHECK_AGE_SHARE),
      );
      times.push(Math.min(now + gap, end));
    }
  }
  if (openDispute) times.push(now + OPEN_DISPUTE_CHECK_GAP_MS);
  return times.length > 0 ? Math.min(...times) : null;
}

/** Whether the payment is within its window now: its disputes are listed, not only its open ones read again. */
export function withinDisputeWindow(createdAt: number, windowMs: number | undefined, now: number): boolean {
  return windowMs !== undefined && now <= createdAt + windowMs;
}
