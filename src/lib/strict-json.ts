import { parse as parseTree, type ValueNode } from '@humanwhocodes/momoa';
import { hasLoneSurrogate } from './echo.ts';

/**
 * Strict JSON for request bodies: a text must mean one thing to every reader. `JSON.parse` lets the last
 * of two equal keys win, while a proxy, a log or a signature check in front of us may read the first; and
 * a `__proto__` key is dropped or turned into a prototype by code that copies objects (zod's records
 * included). A string escaping half of a UTF-16 surrogate pair (`"x\ud800y"`) is read by JSON.parse, but no
 * UTF-8 text can hold it: it would be answered as sent and stored as U+FFFD. So, besides being RFC 8259
 * JSON, a body may repeat no key in an object, hold no `__proto__` key and no lone surrogate at any depth.
 *
 * `JSON.parse` (native, no recursion limit) judges the syntax and the depth first; then Momoa
 * (@humanwhocodes/momoa, the parser of ESLint's JSON support), which keeps every member of every
 * object, finds repeated and forbidden keys and lone surrogates with their path. Momoa's parser recurses, so it only sees
 * texts already known to be at most MAX_JSON_DEPTH deep.
 */

/** Objects and arrays nested deeper than this are refused; no body of the API comes near it. */
export const MAX_JSON_DEPTH = 64;

const FORBIDDEN_KEYS = new Set(['__proto__']);

export type StrictJsonIssue =
  | { kind: 'malformed' }
  | { kind: 'too_deep' }
  | { kind: 'duplicate_key'; field: string }
  | { kind: 'forbidden_key'; field: string }
  | { kind: 'lone_surrogate'; field: string };

export type StrictJsonResult = { ok: true; value: unknown } | { ok: false; issue: StrictJsonIssue };

export function parseStrictJson(text: string): StrictJsonResult {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, issue: { kind: 'malformed' } };
  }
  if (depthOf(value) > MAX_JSON_DEPTH) return { ok: false, issue: { kind: 'too_deep' } };
  let tree: ReturnType<typeof parseTree>;
  try {
    tree = parseTree(text, { mode: 'json', ranges: false, tokens: false });
  } catch {
    // Both parsers follow RFC 8259; a text only one of them accepts is not one to guess about.
    return { ok: false, issue: { kind: 'malformed' } };
  }
  const issue = issueOf(tree.body);
  return issue ? { ok: false, issue } : { ok: true, value };
}

/** Nesting depth of a parsed value (a scalar is 0), walked without recursion. */
function depthOf(root: unknown): number {
  let max = 0;
  const stack: Array<[unknown, number]> = [[root, 0]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (value === null || typeof value !== 'object') continue;
    const inner = depth + 1;
    if (inner > max) max = inner;
    if (max > MAX_JSON_DEPTH) return max;
    for (const child of Array.isArray(value) ? value : Object.values(value)) stack.push([child, inner]);
  }
  return max;
}

/**
 * A repeated or forbidden key or a lone surrogate, with its path (an object's own keys are judged before
 * its children's). The path is client text: lib/echo.ts bounds it where it is answered.
 */
function issueOf(root: ValueNode): StrictJsonIssue | null {
  const stack: Array<{ node: ValueNode; path: string[] }> = [{ node: root, path: [] }];
  while (stack.length > 0) {
    const { node, path } = stack.pop()!;
    if (node.type === 'String' && hasLoneSurrogate(node.value)) return { kind: 'lone_surrogate', field: fieldOf(path) };
    if (node.type === 'Array') {
      for (let i = node.elements.length - 1; i >= 0; i--)
        stack.push({ node: node.elements[i]!.value, path: [...path, String(i)] });
      continue;
    }
    if (node.type !== 'Object') continue;
    const seen = new Set<string>();
    for (const member of node.members) {
      // Momoa decodes the name, so `"\u0061"` and `"a"` are the same key, as they are to JSON.parse.
      const name = member.name.type === 'String' ? member.name.value : member.name.name;
      if (FORBIDDEN_KEYS.has(name)) return { kind: 'forbidden_key', field: fieldOf([...path, name]) };
      if (hasLoneSurrogate(name)) return { kind: 'lone_surrogate', field: fieldOf([...path, name]) };
      if (seen.has(name)) return { kind: 'duplicate_key', field: fieldOf([...path, name]) };
      seen.add(name);
    }
    for (let i = node.members.length - 1; i >= 0; i--) {
      const member = node.members[i]!;
      const name = member.name.type === 'String' ? member.name.value : member.name.name;
      stack.push({ node: member.value, path: [...path, name] });
    }
  }
  return null;
}

const fieldOf = (path: string[]) => (path.length > 0 ? path.join('.') : '(body)');
