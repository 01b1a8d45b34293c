import { describe, expect, it } from 'vitest';
import { mercadoPagoPosV1 } from '../../src/connectors/mercadopago/index.ts';
import { stripePosV1 } from '../../src/connectors/stripe/index.ts';
import {
  MAX_TERMINAL_CHECKS,
  nextTerminalCheck,
  TERMINAL_CHECK_DELAYS_SECONDS,
  TERMINAL_CHECK_MIN_GAP_MS,
  TERMINAL_CHECK_WINDOW_MS,
} from '../../src/domain/terminal-checks.ts';
import { mpFixture, mpLookup, mpPayment } from '../helpers/mercadopago.ts';
import { posConfig, stripeCtx, stripeLookup, stripePayment } from '../helpers/stripe.ts';
import { StripeSimulator } from '../simulators/stripe.ts';

/**
 * The re-read schedule of a payment pending at a terminal, run on an injected clock: every read the
 * schedule asks for is made at the time it says (plus the runner's own lateness), and what the processors
 * document about their rate limits is checked against the reads it produces.
 */

const T0 = Date.UTC(2026, 10, 21, 10, 0, 0);
const S = 1000;

/** The times of the reads of one payment first seen at `firstSeenAt`, each made `lateness(n)` ms after it was due. */
function reads(firstSeenAt: number, lateness: (n: number) => number = () => 0): number[] {
  const times: number[] = [];
  let now = firstSeenAt;
  for (let attempts = 0; ; attempts++) {
    const due = nextTerminalCheck(attempts, firstSeenAt, now);
    if (due === null) return times;
    now = due + lateness(attempts);
    times.push(now);
  }
}

/** The most reads that fall in any one-second window (windows start at each read). */
function peakPerSecond(times: number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let peak = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i]! - sorted[j]! >= S) j++;
    peak = Math.max(peak, i - j + 1);
  }
  return peak;
}

describe('nextTerminalCheck', () => {
  it('on time: 5, 10, 20, 30, 45 s, 1, 1.5, 2, 3, 4, 6, 8, 13, 18 and 28 min after the first sighting, then none', () => {
    const offsets = reads(T0).map((t) => (t - T0) / S);
    expect(offsets).toEqual([5, 10, 20, 30, 45, 60, 90, 120, 180, 240, 360, 480, 780, 1080, 1680]);
    expect(offsets).toHaveLength(MAX_TERMINAL_CHECKS);
    expect(nextTerminalCheck(MAX_TERMINAL_CHECKS, T0, T0 + 1680 * S)).toBeNull();
  });

  it('a late runner (a once-a-minute cron) keeps the slots, never reads twice within 5 s, and stops in the window', () => {
    // Each read runs at the next whole minute after it is due.
    const times = reads(T0 + 7 * S, (n) => (60 * S - ((T0 + 7 * S + n * 13 * S) % (60 * S))) % (60 * S));
    expect(times.length).toBeLessThanOrEqual(MAX_TERMINAL_CHECKS);
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(5 * S);
    for (const t of times) expect(t - (T0 + 7 * S)).toBeLessThanOrEqual(TERMINAL_CHECK_WINDOW_MS + 60 * S);
  });

  it('a runner far behind catches up one read at a time, 5 s apart, never in a burst', () => {
    // Nothing ran for 10 minutes after the payment was first seen.
    const late = T0 + 10 * 60 * S;
    expect(nextTerminalCheck(0, T0, late)).toBe(late + TERMINAL_CHECK_MIN_GAP_MS);
    expect(nextTerminalCheck(1, T0, late + 5 * S)).toBe(late + 10 * S);
    // The slot of the eleventh read (6 min) is behind too; the twelfth (8 min) is not reached yet.
    expect(nextTerminalCheck(10, T0, late)).toBe(late + 5 * S);
    expect(nextTerminalCheck(11, T0, T0 + 7 * 60 * S)).toBe(T0 + 8 * 60 * S);
  });

  it('nothing is scheduled past the window, and nonsense attempts schedule nothing', () => {
    expect(nextTerminalCheck(3, T0, T0 + TERMINAL_CHECK_WINDOW_MS)).toBeNull();
    // The last read's slot is at 28 min; run at 29 min 56 s, 5 s later would be past the 30 min window.
    expect(nextTerminalCheck(14, T0, T0 + 29 * 60 * S)).toBe(T0 + (29 * 60 + 5) * S);
    expect(nextTerminalCheck(14, T0, T0 + (29 * 60 + 56) * S)).toBeNull();
    for (const attempts of [-1, 1.5, Number.NaN, MAX_TERMINAL_CHECKS + 1])
      expect(nextTerminalCheck(attempts, T0, T0)).toBeNull();
  });

  it('the delays back off from seconds to minutes, and their sum fits the window', () => {
    const sum = TERMINAL_CHECK_DELAYS_SECONDS.reduce((a: number, b) => a + b, 0);
    expect(sum * S).toBeLessThanOrEqual(TERMINAL_CHECK_WINDOW_MS);
    for (let i = 1; i < TERMINAL_CHECK_DELAYS_SECONDS.length; i++)
      expect(TERMINAL_CHECK_DELAYS_SECONDS[i]).toBeGreaterThanOrEqual(TERMINAL_CHECK_DELAYS_SECONDS[i - 1]!);
  });
});

describe('the schedule against the processors’ documented rate limits', () => {
  /**
   * https://docs.stripe.com/rate-limits: "Live mode: 100 read operations and 100 write operations; Test mode:
   * 25 read operations and 25 write operations" per second (the Search API 20 reads per second; terminal
   * reads never search: the payment has its PaymentIntent id by then).
   */
  const STRIPE_READS_PER_SECOND = { live: 100, test: 25 };

  /** What one read of a payment waiting on the reader costs at Stripe, counted on the simulator. */
  async function stripeRequestsPerRead(): Promise<number> {
    const sim = new StripeSimulator({ readerMode: 'manual' });
    const input = stripePayment(2500);
    const created = await stripePosV1.adapter.createPayment(stripeCtx(sim, posConfig()), input);
    const before = sim.requests.length;
    const read = await stripePosV1.adapter.getPayment(
      stripeCtx(sim, posConfig()),
      stripeLookup(input, created.processorReference),
    );
    expect(read.action).toEqual({ type: 'at_terminal' });
    const made = sim.requests.slice(before);
    expect(made.every((r) => r.method === 'GET' && !r.path.includes('/search'))).toBe(true);
    return made.length;
  }

  async function mercadoPagoRequestsPerRead(): Promise<number> {
    const { sim, ctx } = mpFixture();
    sim.faults.pointWaitsAtTerminal = true;
    const ref = (await mercadoPagoPosV1.adapter.createPayment(ctx(), mpPayment(2500))).processorReference!;
    const before = sim.requests.length;
    expect((await mercadoPagoPosV1.adapter.getPayment(ctx(), mpLookup(ref))).action).toEqual({ type: 'at_terminal' });
    return sim.requests.length - before;
  }

  it('Stripe: a read is 2 GETs (the PaymentIntent, the reader); one terminal never passes 2 a second', async () => {
    const perRead = await stripeRequestsPerRead();
    expect(perRead).toBe(2);
    expect(peakPerSecond(reads(T0)) * perRead).toBe(2);
  });

  it('Stripe: terminals whose payments all start at the same instant stay within 25/s (test, 12) and 100/s (live, 50)', async () => {
    const perRead = await stripeRequestsPerRead();
    // A terminal holds one payment at a time (a busy reader refuses the next), so concurrent terminal
    // payments of an account are at most its terminals.
    const aligned = (terminals: number) =>
      peakPerSecond(Array.from({ length: terminals }, () => reads(T0)).flat()) * perRead;
    expect(aligned(12)).toBeLessThanOrEqual(STRIPE_READS_PER_SECOND.test);
    expect(aligned(13)).toBeGreaterThan(STRIPE_READS_PER_SECOND.test);
    expect(aligned(50)).toBeLessThanOrEqual(STRIPE_READS_PER_SECOND.live);
  });

  it('Stripe: 60 terminals starting payments a second apart peak at 12 requests a second, within the test limit', async () => {
    const perRead = await stripeRequestsPerRead();
    const times = Array.from({ length: 60 }, (_, i) => reads(T0 + i * S)).flat();
    expect(peakPerSecond(times) * perRead).toBe(12);
    expect(peakPerSecond(times) * perRead).toBeLessThanOrEqual(STRIPE_READS_PER_SECOND.test);
  });

  it('Stripe: late runners do not raise a terminal’s peak (reads stay 5 s apart)', async () => {
    const perRead = await stripeRequestsPerRead();
    for (let seed = 1; seed <= 20; seed++) {
      const jitter = (n: number) => ((seed * 7919 + n * 104_729) % 90) * S;
      expect(peakPerSecond(reads(T0, jitter)) * perRead).toBeLessThanOrEqual(perRead);
    }
  });

  it('Mercado Pago: a read is one GET of the order; it publishes no numeric limit, so one per 5 s per terminal', async () => {
    // No page of Mercado Pago's developer docs found states a request rate for the Orders or Terminals
    // APIs; its SDKs treat 429 as retryable (MPRateLimitError), which the connector maps to unavailable.
    const perRead = await mercadoPagoRequestsPerRead();
    expect(perRead).toBe(1);
    const times = reads(T0);
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(5 * S);
    // In its first minute (when Point moves an unsettled order to action_required, at 40 s), six reads.
    expect(times.filter((t) => t - T0 <= 60 * S)).toHaveLength(6);
  });
});
