import { describe, expect, it } from 'vitest';
import { boundedDetails, boundedText, MAX_ECHO_ITEMS, MAX_ECHO_LENGTH } from '../../src/lib/echo.ts';

/** What an error's `details` may repeat of a request (src/lib/echo.ts); the answers themselves: test/middleware. */
describe('boundedText', () => {
  it('keeps short printable text as it is', () => {
    expect(boundedText('metadata.order_id')).toBe('metadata.order_id');
    expect(boundedText('x'.repeat(MAX_ECHO_LENGTH))).toBe('x'.repeat(MAX_ECHO_LENGTH));
  });

  it('cuts longer text to its first 200 characters and an ellipsis, never inside a surrogate pair', () => {
    expect(boundedText('x'.repeat(9_000))).toBe(`${'x'.repeat(MAX_ECHO_LENGTH)}…`);
    const emoji = `${'x'.repeat(MAX_ECHO_LENGTH - 1)}😀tail`;
    expect(boundedText(emoji)).toBe(`${'x'.repeat(MAX_ECHO_LENGTH - 1)}…`);
  });

  it('shows control characters and lone surrogates as U+FFFD', () => {
    expect(boundedText('a\u001b[31m\nb\u007f\u0085c\ud800d\udfffe😀')).toBe(
      'a\ufffd[31m\ufffdb\ufffd\ufffdc\ufffdd\ufffde😀',
    );
  });
});

describe('boundedDetails', () => {
  it('bounds every string and key at any depth and cuts lists, saying how many items were left out', () => {
    const long = 'k'.repeat(500);
    const details = boundedDetails({
      fields: Array.from({ length: 70 }, (_, i) => ({ field: `${long}${i}`, issue: 'Unknown field' })),
      nested: { [long]: [long] },
      limit: 16,
    });
    const fields = details.fields as Array<{ field: string }>;
    expect(fields).toHaveLength(MAX_ECHO_ITEMS);
    expect(fields[0]!.field).toBe(`${'k'.repeat(MAX_ECHO_LENGTH)}…`);
    expect(details.fields_omitted).toBe(70 - MAX_ECHO_ITEMS);
    expect(details.nested).toEqual({ [`${'k'.repeat(MAX_ECHO_LENGTH)}…`]: [`${'k'.repeat(MAX_ECHO_LENGTH)}…`] });
    expect(details.limit).toBe(16);
  });

  it('keeps a `__proto__` key a plain field', () => {
    const details = boundedDetails(JSON.parse('{"__proto__":{"polluted":true}}'));
    expect(Object.getPrototypeOf(details)).toBe(Object.prototype);
    expect(Object.keys(details)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
