import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PAYMENT_EVENT_TYPES } from '../../src/domain/payment-state.ts';
import {
  afterAttempt,
  ALL_EVENTS,
  AUTO_DISABLE_AFTER_MS,
  normalizeEnabledEvents,
  subscribes,
} from '../../src/domain/webhook-endpoints.ts';

describe('subscribes', () => {
  it('["*"] takes every type, including ones added later; a list takes its own types only', () => {
    for (const type of [...PAYMENT_EVENT_TYPES, 'payment.future_type'])
      expect(subscribes([ALL_EVENTS], type)).toBe(true);
    expect(subscribes(['payment.approved', 'payment.refunded'], 'payment.refunded')).toBe(true);
    expect(subscribes(['payment.approved'], 'payment.pending')).toBe(false);
    expect(subscribes(['payment.approved'], 'ping')).toBe(false);
  });
});

describe('normalizeEnabledEvents', () => {
  it('keeps known types once, in order; "*" alone; refuses empty lists, unknown types and "*" with others', () => {
    expect(normalizeEnabledEvents(['payment.approved', 'payment.pending', 'payment.approved'])).toEqual({
      ok: true,
      events: ['payment.approved', 'payment.pending'],
    });
    expect(normalizeEnabledEvents(['*', '*'])).toEqual({ ok: true, events: ['*'] });
    expect(normalizeEnabledEvents([])).toMatchObject({ ok: false });
    expect(normalizeEnabledEvents(['payment.approved', 'payment.nope'])).toEqual({
      ok: false,
      issue: 'Unknown event type: payment.nope',
    });
    expect(normalizeEnabledEvents(['*', 'payment.approved'])).toMatchObject({ ok: false });
  });
});

describe('afterAttempt (the auto-disable rule)', () => {
  const t0 = Date.UTC(2030, 0, 1);

  it('a failure starts a streak; 3 days of failures disable; a success ends the streak', () => {
    expect(afterAttempt(null, false, t0)).toEqual({ failingSince: t0, disable: false });
    expect(afterAttempt(t0, false, t0 + AUTO_DISABLE_AFTER_MS - 1)).toEqual({ failingSince: t0, disable: false });
    expect(afterAttempt(t0, false, t0 + AUTO_DISABLE_AFTER_MS)).toEqual({ failingSince: t0, disable: true });
    expect(afterAttempt(t0, true, t0 + AUTO_DISABLE_AFTER_MS)).toEqual({ failingSince: null, disable: false });
    expect(AUTO_DISABLE_AFTER_MS).toBe(3 * 24 * 3600 * 1000);
  });

  it('over any run of attempts: disabled exactly when the last success (or the first failure) is 3 days behind', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ gap: fc.integer({ min: 0, max: 2 * AUTO_DISABLE_AFTER_MS }), ok: fc.boolean() }), {
          minLength: 1,
          maxLength: 30,
        }),
        (attempts) => {
          let now = t0;
          let failingSince: number | null = null;
          let firstFailureOfRun: number | null = null;
          for (const { gap, ok } of attempts) {
            now += gap;
            const result = afterAttempt(failingSince, ok, now);
            firstFailureOfRun = ok ? null : (firstFailureOfRun ?? now);
            if (result.disable !== (!ok && now - firstFailureOfRun! >= AUTO_DISABLE_AFTER_MS)) return false;
            if (result.disable) return true;
            failingSince = result.failingSince;
          }
          return true;
        },
      ),
    );
  });
});
