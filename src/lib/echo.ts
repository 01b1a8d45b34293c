/**
 * What an error's `details` repeats of a request (a field path built from the client's own keys, the name
 * of a query parameter) is client text. It leaves bounded and inert: a 9,000-character metadata key, or a
 * body of 10,000 unknown fields, must not come back whole, and a control character or half a surrogate
 * pair must not reach the client's logs and terminals as sent.
 */

/** Longer strings are cut here and marked with an ellipsis. */
export const MAX_ECHO_LENGTH = 200;
/** Longer lists are cut here; `<key>_omitted` says how many items were left out. */
export const MAX_ECHO_ITEMS = 50;

const LONE_SURROGATE = '[\\ud800-\\udbff](?![\\udc00-\\udfff])|(?<![\\ud800-\\udbff])[\\udc00-\\udfff]';
const UNPRINTABLE = new RegExp(`[\\u0000-\\u001f\\u007f-\\u009f]|${LONE_SURROGATE}`, 'g');
const HAS_LONE_SURROGATE = new RegExp(LONE_SURROGATE);

/** Whether a string holds half of a UTF-16 surrogate pair: no UTF-8 text can, so it cannot be stored as sent. */
export const hasLoneSurrogate = (text: string) => HAS_LONE_SURROGATE.test(text);

/** Control characters and lone surrogates become U+FFFD; beyond MAX_ECHO_LENGTH, `…` (never half a pair). */
export function boundedText(text: string): string {
  const clean = text.replace(UNPRINTABLE, '\ufffd');
  if (clean.length <= MAX_ECHO_LENGTH) return clean;
  const cut = /[\ud800-\udbff]/.test(clean[MAX_ECHO_LENGTH - 1]!) ? MAX_ECHO_LENGTH - 1 : MAX_ECHO_LENGTH;
  return `${clean.slice(0, cut)}…`;
}

/** Every string (keys included) bounded, every list cut, at any depth. */
export function boundedDetails(details: Record<string, unknown>): Record<string, unknown> {
  return bounded(details) as Record<string, unknown>;
}

function bounded(value: unknown): unknown {
  if (typeof value === 'string') return boundedText(value);
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.slice(0, MAX_ECHO_ITEMS).map(bounded);
  // fromEntries defines own properties, so even a `__proto__` key stays a plain field.
  return Object.fromEntries(
    Object.entries(value).flatMap(([key, item]) => [
      [boundedText(key), bounded(item)],
      ...(Array.isArray(item) && item.length > MAX_ECHO_ITEMS
        ? [[`${boundedText(key)}_omitted`, item.length - MAX_ECHO_ITEMS]]
        : []),
    ]),
  );
}
