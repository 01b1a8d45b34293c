import { PAYMENT_EVENT_TYPES } from './payment-state.ts';

/**
 * Account webhook endpoints: which events an endpoint receives, and when one that keeps
 * failing is switched off. Pure rules; the service applies them.
 */

/** `enabled_events: ["*"]`: every event type, including types added later. */
export const ALL_EVENTS = '*';

/** At most this many endpoints per owner and environment. */
export const MAX_ENDPOINTS_PER_OWNER = 16;

/**
 * An endpoint whose attempts have all failed for this long is disabled. Three days is also how long one
 * event is retried (domain/webhook-schedule.ts), so an endpoint is disabled only after at least one
 * event's whole retry window was spent on it without a single success.
 */
export const AUTO_DISABLE_AFTER_MS = 3 * 24 * 3600 * 1000;

/** Where an event is delivered: the payment's own `webhook_url`, or one of the owner's endpoints. */
export const PAYMENT_URL_DESTINATION = 'payment_url';

export function subscribes(enabledEvents: readonly string[], eventType: string): boolean {
  return enabledEvents.includes(ALL_EVENTS) || enabledEvents.includes(eventType);
}

export type EnabledEventsResult = { ok: true; events: string[] } | { ok: false; issue: string };

/**
 * A subscription as stored: known types only, each once, in the order given; `*` stands alone (with
 * other types next to it, it would be unclear whether the list was meant to narrow it).
 */
export function normalizeEnabledEvents(requested: readonly string[]): EnabledEventsResult {
  if (requested.length === 0) return { ok: false, issue: 'List at least one event type, or ["*"] for all' };
  const unique = [...new Set(requested)];
  if (unique.includes(ALL_EVENTS)) {
    return unique.length === 1
      ? { ok: true, events: [ALL_EVENTS] }
      : { ok: false, issue: '"*" already means every event type: send it alone' };
  }
  const unknown = unique.filter((type) => !(PAYMENT_EVENT_TYPES as readonly string[]).includes(type));
  if (unknown.length > 0) return { ok: false, issue: `Unknown event type: ${unknown.join(', ')}` };
  return { ok: true, events: unique };
}

/** What an endpoint's health becomes after one delivery attempt. */
export interface FailureStreak {
  /** When the current run of failures began; null after a success. */
  failingSince: number | null;
  /** True when this failure completes three days of nothing but failures: disable the endpoint now. */
  disable: boolean;
}

export function afterAttempt(failingSince: number | null, succeeded: boolean, now: number): FailureStreak {
  if (succeeded) return { failingSince: null, disable: false };
  const since = failingSince ?? now;
  return { failingSince: since, disable: now - since >= AUTO_DISABLE_AFTER_MS };
}
