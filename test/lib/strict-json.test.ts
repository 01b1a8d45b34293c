import { describe, expect, it } from 'vitest';
import { parseStrictJson } from '../../src/lib/strict-json.ts';

/** The strict reading of request bodies (src/lib/strict-json.ts); the gate's answers are in test/middleware. */
describe('parseStrictJson: lone UTF-16 surrogates', () => {
  it('refuses a string escaping half of a surrogate pair, as a value, a key or a list item, naming its path', () => {
    const cases: Array<[string, string]> = [
      ['{"a":"x\\ud800y"}', 'a'],
      ['{"a":{"b":"\\udc00"}}', 'a.b'],
      ['{"a":["ok","\\udbff"]}', 'a.1'],
      ['{"a":{"k\\udfff":1}}', 'a.k\udfff'],
      // Two halves in two strings are two lone surrogates, not a pair.
      ['{"a":"\\ud83d","b":"\\ude00"}', 'a'],
      ['"\\ud800"', '(body)'],
    ];
    for (const [text, field] of cases) {
      // Compared as JSON (which escapes lone surrogates): a failure message holding one could not be reported.
      expect(JSON.stringify(parseStrictJson(text)), text).toBe(
        JSON.stringify({ ok: false, issue: { kind: 'lone_surrogate', field } }),
      );
    }
  });

  it('takes whole pairs, escaped or not, and other escapes', () => {
    for (const text of ['{"a":"\\ud83d\\ude00"}', '{"a":"😀"}', '{"\\ud83d\\ude00":"\\u00e9\\n"}']) {
      expect(parseStrictJson(text), text).toEqual({ ok: true, value: JSON.parse(text) });
    }
  });
});
