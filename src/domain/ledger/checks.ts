import { DISPUTABLE_STATUSES, DISPUTE_CHECK_MIN_GAP_MS, nextDisputeCheck } from '../dispute-checks.ts';
import { nextTerminalCheck } from '../terminal-checks.ts';
import { changed, type Decision, OPEN_STATUSES, unchanged } from './change.ts';
import type { PaymentRecord } from './records.ts';

/**
 * The schedules of the service's own reads of a payment (jobs/): a slot is taken in the payment's compare-and-set
 * before the processor is asked, so two runs never read one payment for one slot.
 */

/** Takes the terminal read due now (docs/terminal-checks.md); true when it is this run's to make. */
export interface ClaimTerminalCheck {
  type: 'claim_terminal_check';
}

export function claimTerminalCheck(p: PaymentRecord, now: number): Decision<boolean> {
  if (p.terminalCheckAt === null || p.terminalCheckAt > now) return unchanged(false);
  // No longer open: its schedule is dropped.
  if (!OPEN_STATUSES.includes(p.status)) return changed({ payment: { terminalCheckAt: null }, events: [] }, false);
  const checks = p.terminalChecks + 1;
  return changed(
    {
      payment: {
        terminalChecks: checks,
        terminalCheckAt: nextTerminalCheck(checks, p.terminalSeenAt ?? now, now),
        // Looked at: reconciliation leaves it alone meanwhile.
        reconciledAt: now,
      },
      events: [],
    },
    true,
  );
}

/**
 * Takes the dispute read due now (docs/dispute-checks.md) and sets the next: `readable` whether the method's connector
 * lists disputes, `askable` whether its credentials can be used now, `windowMs` its dispute window. The outcome: the
 * slot taken, when this run is to read; null otherwise (not due, nothing to dispute, or not askable now: the schedule
 * goes on, the credentials may come back).
 */
export interface ClaimDisputeCheck {
  type: 'claim_dispute_check';
  readable: boolean;
  askable: boolean;
  windowMs: number | undefined;
}

export function claimDisputeCheck(p: PaymentRecord, c: ClaimDisputeCheck, now: number): Decision<number | null> {
  const slot = p.disputeCheckAt;
  if (slot === null || slot > now) return unchanged(null);
  const open = p.openDisputeId !== null;
  // A payment voided or never collected has nothing to dispute, unless a dispute is open.
  if (!c.readable || (!DISPUTABLE_STATUSES.includes(p.status) && !open))
    return changed({ payment: { disputeCheckAt: null }, events: [] }, null);
  const next = nextDisputeCheck({ createdAt: p.createdAt, windowMs: c.windowMs, openDispute: open, now });
  return changed({ payment: { disputeCheckAt: next }, events: [] }, c.askable ? slot : null);
}

/** A due dispute read that failed before its slot was spent: put off by the shortest gap. */
export interface DeferDisputeCheck {
  type: 'defer_dispute_check';
}

export function deferDisputeCheck(p: PaymentRecord, now: number): Decision<null> {
  if (p.disputeCheckAt === null || p.disputeCheckAt > now) return unchanged(null);
  return changed({ payment: { disputeCheckAt: now + DISPUTE_CHECK_MIN_GAP_MS }, events: [] }, null);
}

/** After a read found a dispute opened or closed: the next read follows what is open now. */
export interface RescheduleDisputeCheck {
  type: 'reschedule_dispute_check';
  windowMs: number | undefined;
}

export function rescheduleDisputeCheck(p: PaymentRecord, c: RescheduleDisputeCheck, now: number): Decision<null> {
  const next = nextDisputeCheck({
    createdAt: p.createdAt,
    windowMs: c.windowMs,
    openDispute: p.openDisputeId !== null,
    now,
  });
  return next === p.disputeCheckAt ? unchanged(null) : changed({ payment: { disputeCheckAt: next }, events: [] }, null);
}
