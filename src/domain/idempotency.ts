import { sha256Hex } from '../lib/encoding.ts';

/**
 * Idempotency keys and request fingerprints. A key names one logical attempt; the fingerprint is what
 * makes two requests "the same": method, path and the body in canonical form (object keys sorted), so
 * a client that re-serializes its body in another key order still replays rather than conflicts.
 */
/** 1 to 255 printable ASCII characters (space included; HTTP trims it at the ends): docs/limits.md. */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;
/** Results are kept at least 24 hours (docs/idempotency.md); the store forgets them a little later. */
export const IDEMPOTENCY_RETENTION_MS = 25 * 60 * 60 * 1000;

export function isValidIdempotencyKey(key: string): boolean {
  return IDEMPOTENCY_KEY_PATTERN.test(key);
}

export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

export function requestFingerprint(method: string, path: string, body: unknown): Promise<string> {
  const text = `${method.toUpperCase()} ${path}\n${canonicalJson(body ?? null)}`;
  return sha256Hex(text);
}

/** The Durable Object name for one (caller key, operation name, Idempotency-Key) triple. */
export function idempotencyScope(callerKey: string, operation: string, key: string): string {
  return `${callerKey}\n${operation}\n${key}`;
}
