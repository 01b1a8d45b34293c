import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  applyDisputeNews,
  canDisputeTransition,
  DISPUTE_REASONS,
  DISPUTE_STATUSES,
  DISPUTE_TRANSITIONS,
  isDisputeClosed,
  isDisputeReason,
  isDisputeStatus,
  type DisputeFacts,
  type DisputeState,
  type DisputeStatus,
} from '../../src/domain/disputes.ts';

const EXPECTED: Record<DisputeStatus, DisputeStatus[]> = {
  warning_needs_response: ['warning_under_review', 'warning_closed', 'needs_response', 'under_review', 'won', 'lost'],
  warning_under_review: ['warning_closed', 'needs_response', 'under_review', 'won', 'lost'],
  warning_closed: [],
  needs_response: ['under_review', 'won', 'lost'],
  under_review: ['won', 'lost'],
  won: [],
  lost: [],
};

const facts = (overrides: Partial<DisputeFacts> = {}): DisputeFacts => ({
  status: 'needs_response',
  amount: { minor: 10_000, currency: 'USD' },
  reason: 'fraudulent',
  evidenceDueBy: 9_000,
  fundsWithdrawnAt: 1_000,
  fundsReinstatedAt: null,
  ...overrides,
});

const record = (overrides: Partial<DisputeState> = {}): DisputeState => ({
  ...facts(),
  createdAt: 1_000,
  updatedAt: 1_000,
  ...overrides,
});

describe('dispute statuses and transitions', () => {
  it('are exactly Stripe’s seven, with the table of docs/states.md', () => {
    expect([...DISPUTE_STATUSES]).toEqual(Object.keys(EXPECTED));
    for (const status of DISPUTE_STATUSES)
      expect([...DISPUTE_TRANSITIONS[status]].sort()).toEqual([...EXPECTED[status]].sort());
    expect(DISPUTE_STATUSES.filter(isDisputeClosed)).toEqual(['warning_closed', 'won', 'lost']);
  });

  it('never move back: a move is allowed only to a later status, and no closed dispute moves', () => {
    const order = (s: DisputeStatus) =>
      ({
        warning_needs_response: 0,
        warning_under_review: 1,
        needs_response: 2,
        under_review: 3,
        warning_closed: 4,
        won: 4,
        lost: 4,
      })[s];
    for (const from of DISPUTE_STATUSES)
      for (const to of DISPUTE_STATUSES) {
        if (canDisputeTransition(from, to)) expect(order(to)).toBeGreaterThan(order(from));
        if (isDisputeClosed(from)) expect(canDisputeTransition(from, to)).toBe(false);
      }
    // An inquiry that closed unescalated never becomes a chargeback; a chargeback never becomes an inquiry.
    expect(canDisputeTransition('warning_closed', 'needs_response')).toBe(false);
    expect(canDisputeTransition('needs_response', 'warning_under_review')).toBe(false);
    expect(canDisputeTransition('needs_response', 'warning_closed')).toBe(false);
  });

  it('names Stripe’s fourteen reasons', () => {
    expect(DISPUTE_REASONS).toHaveLength(14);
    expect(isDisputeReason('fraudulent')).toBe(true);
    expect(isDisputeReason('prevented')).toBe(false);
    expect(isDisputeStatus('lost')).toBe(true);
    expect(isDisputeStatus('prevented')).toBe(false);
  });
});

describe('applyDisputeNews', () => {
  it('a dispute first heard of is created; one first heard of closed is created and closed', () => {
    expect(applyDisputeNews(null, facts(), 5)).toEqual({
      ok: true,
      dispute: { ...facts(), createdAt: 5, updatedAt: 5 },
      events: ['dispute.created'],
      lost: false,
    });
    expect(applyDisputeNews(null, facts({ status: 'lost' }), 5)).toMatchObject({
      events: ['dispute.created', 'dispute.closed'],
      lost: true,
    });
    expect(applyDisputeNews(null, facts({ status: 'warning_closed' }), 5)).toMatchObject({
      events: ['dispute.created', 'dispute.closed'],
      lost: false,
    });
  });

  it('opened, funds withdrawn, answered, won with the funds reinstated after the close', () => {
    let current = applyDisputeNews(null, facts({ fundsWithdrawnAt: null }), 10);
    if (!current.ok) throw new Error('created');
    const withdrawn = applyDisputeNews(current.dispute, facts({ fundsWithdrawnAt: 11 }), 11);
    expect(withdrawn).toMatchObject({ ok: true, events: ['dispute.updated'], dispute: { fundsWithdrawnAt: 11 } });
    if (!withdrawn.ok) throw new Error('withdrawn');
    const review = applyDisputeNews(withdrawn.dispute, facts({ status: 'under_review', fundsWithdrawnAt: 11 }), 12);
    expect(review).toMatchObject({ ok: true, events: ['dispute.updated'], dispute: { status: 'under_review' } });
    if (!review.ok) throw new Error('review');
    const won = applyDisputeNews(review.dispute, facts({ status: 'won', fundsWithdrawnAt: 11 }), 13);
    expect(won).toMatchObject({ ok: true, events: ['dispute.closed'], lost: false, dispute: { status: 'won' } });
    if (!won.ok) throw new Error('won');
    current = won;
    const reinstated = applyDisputeNews(
      current.dispute,
      facts({ status: 'won', fundsWithdrawnAt: 11, fundsReinstatedAt: 14 }),
      14,
    );
    expect(reinstated).toMatchObject({
      ok: true,
      events: ['dispute.updated'],
      dispute: { status: 'won', fundsReinstatedAt: 14, createdAt: 10, updatedAt: 14 },
    });
  });

  it('lost: closed, and the payment’s chargeback summary is due', () => {
    const lost = applyDisputeNews(record({ status: 'under_review' }), facts({ status: 'lost' }), 2_000);
    expect(lost).toMatchObject({ ok: true, events: ['dispute.closed'], lost: true });
  });

  it('an inquiry escalates to a chargeback (updated), or closes unescalated (closed)', () => {
    const inquiry = record({ status: 'warning_needs_response', fundsWithdrawnAt: null });
    expect(applyDisputeNews(inquiry, facts({ status: 'needs_response' }), 2_000)).toMatchObject({
      ok: true,
      events: ['dispute.updated'],
      dispute: { status: 'needs_response', fundsWithdrawnAt: 1_000 },
    });
    expect(applyDisputeNews(inquiry, facts({ status: 'warning_closed', fundsWithdrawnAt: null }), 2_000)).toMatchObject(
      { ok: true, events: ['dispute.closed'], lost: false },
    );
  });

  it('repeated news changes nothing; stale news keeps only the money facts it brings', () => {
    const current = record({ status: 'under_review', evidenceDueBy: 9_000, fundsWithdrawnAt: null });
    expect(applyDisputeNews(current, facts({ status: 'under_review', fundsWithdrawnAt: null }), 2_000)).toEqual({
      ok: false,
      reason: 'no_change',
    });
    // A late `needs_response` with another deadline: the status and the deadline stay, the withdrawal is a fact.
    const late = applyDisputeNews(
      current,
      facts({ status: 'needs_response', evidenceDueBy: 1, fundsWithdrawnAt: 900 }),
      2_000,
    );
    expect(late).toMatchObject({
      ok: true,
      events: ['dispute.updated'],
      dispute: { status: 'under_review', evidenceDueBy: 9_000, fundsWithdrawnAt: 900 },
    });
    expect(applyDisputeNews(current, facts({ status: 'needs_response', fundsWithdrawnAt: null }), 2_000)).toEqual({
      ok: false,
      reason: 'no_change',
    });
  });

  it('a closed dispute never reopens, and funds once withdrawn or reinstated are never cleared', () => {
    const won = record({ status: 'won', fundsWithdrawnAt: 10, fundsReinstatedAt: 20 });
    expect(
      applyDisputeNews(won, facts({ status: 'lost', fundsWithdrawnAt: null, fundsReinstatedAt: null }), 30),
    ).toEqual({ ok: false, reason: 'no_change' });
  });

  it('a change of amount, reason or deadline with the same status is an update', () => {
    const current = record();
    expect(applyDisputeNews(current, facts({ amount: { minor: 5_000, currency: 'USD' } }), 1_000)).toMatchObject({
      ok: true,
      events: ['dispute.updated'],
      dispute: { amount: { minor: 5_000 }, updatedAt: 1_001 },
    });
    expect(applyDisputeNews(current, facts({ reason: 'duplicate' }), 2_000)).toMatchObject({ ok: true });
    expect(applyDisputeNews(current, facts({ evidenceDueBy: 9_999 }), 2_000)).toMatchObject({ ok: true });
  });
});

describe('dispute properties', () => {
  const news = fc.record({
    status: fc.constantFrom(...DISPUTE_STATUSES),
    amount: fc.record({ minor: fc.integer({ min: 1, max: 1_000 }), currency: fc.constant('USD') }),
    reason: fc.constantFrom(...DISPUTE_REASONS),
    evidenceDueBy: fc.option(fc.nat(), { nil: null }),
    fundsWithdrawnAt: fc.option(fc.nat(), { nil: null }),
    fundsReinstatedAt: fc.option(fc.nat(), { nil: null }),
  });

  it('whatever news arrives in whatever order: one created, at most one closed, no move back, money facts kept', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(news, fc.integer({ min: -10, max: 100 })), { minLength: 1, maxLength: 40 }),
        (feed) => {
          let current: DisputeState | null = null;
          let clock = 0;
          const events: string[] = [];
          for (const [item, dt] of feed) {
            clock += dt;
            const result = applyDisputeNews(current, item, clock);
            if (!result.ok) {
              expect(current).not.toBeNull();
              continue;
            }
            events.push(...result.events);
            if (current) {
              const before: DisputeState = current;
              expect(result.dispute.updatedAt).toBeGreaterThan(before.updatedAt);
              expect(result.dispute.createdAt).toBe(before.createdAt);
              if (result.dispute.status !== before.status)
                expect(canDisputeTransition(before.status, result.dispute.status)).toBe(true);
              if (isDisputeClosed(before.status)) expect(result.dispute.status).toBe(before.status);
              if (before.fundsWithdrawnAt !== null)
                expect(result.dispute.fundsWithdrawnAt).toBe(before.fundsWithdrawnAt);
              if (before.fundsReinstatedAt !== null)
                expect(result.dispute.fundsReinstatedAt).toBe(before.fundsReinstatedAt);
              expect(result.lost).toBe(before.status !== 'lost' && result.dispute.status === 'lost');
            }
            current = result.dispute;
          }
          expect(events.filter((e) => e === 'dispute.created')).toHaveLength(1);
          expect(events[0]).toBe('dispute.created');
          expect(events.filter((e) => e === 'dispute.closed').length).toBe(isDisputeClosed(current!.status) ? 1 : 0);
        },
      ),
      { numRuns: 1000 },
    );
  });
});
