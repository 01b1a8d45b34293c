import { env } from 'cloudflare:workers';
import { expect } from 'vitest';
import { call, type ApiResponse, type Session } from './api.ts';

/** Shared by the payment method, API key link and connector tests. */

export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const ACCOUNT_FIELDS = [
  'capabilities',
  'connector_definition_version_id',
  'created_at',
  'display_configuration',
  'enabled',
  'environment',
  'id',
  'name',
  'provider',
  'status',
  'type',
  'updated_at',
  'user_id',
];
export const PUBLIC_FIELDS = [
  'capabilities',
  'created_at',
  'environment',
  'id',
  'metadata',
  'name',
  'provider',
  'status',
  'type',
];

export const POS = 'cnv_sandbox_pos_v1';
export const QR = 'cnv_sandbox_qr_v1';

/** Random, so it cannot collide with an OpenAPI example or any other fixed text of a response. */
export const randomCredential = () => `sbx-${crypto.randomUUID()}`;

export interface CreatedMethod {
  id: string;
  apiKey: string;
  body: Record<string, any>;
}

export async function createMethod(session: Session, overrides: Record<string, unknown> = {}): Promise<CreatedMethod> {
  const apiKey = randomCredential();
  const res = await call('POST', '/v1/account/payment-methods', {
    token: session.accessToken,
    body: {
      connector_definition_version_id: POS,
      name: 'Front counter',
      credentials: { api_key: apiKey },
      ...overrides,
    },
  });
  if (res.status !== 201) throw new Error(`payment method creation failed: ${res.status} ${res.text}`);
  return { id: res.body.data.id, apiKey, body: res.body.data };
}

export async function link(session: Session, methodId: string, apiKeyId: string) {
  const res = await call('POST', `/v1/account/payment-methods/${methodId}/api-keys`, {
    token: session.accessToken,
    body: { api_key_id: apiKeyId },
  });
  if (res.status !== 201) throw new Error(`link failed: ${res.status} ${res.text}`);
  return res.body.data;
}

export function withoutRequestId(res: ApiResponse) {
  const body = structuredClone(res.body);
  if (body?.error) delete body.error.request_id;
  return body;
}

/** Same status, same body but for the request id: nothing tells one case from the other. */
export function expectIndistinguishable(a: ApiResponse, b: ApiResponse) {
  expect(a.status).toBe(b.status);
  expect(withoutRequestId(a)).toEqual(withoutRequestId(b));
}

export function fieldsOf(res: ApiResponse): string[] {
  return [...new Set(((res.body?.error?.details?.fields ?? []) as { field: string }[]).map((f) => f.field))];
}

export async function methodRow(id: string): Promise<Record<string, unknown> | null> {
  return env.DB.prepare('SELECT * FROM payment_methods WHERE id = ?').bind(id).first();
}

export async function linkRows(methodId: string): Promise<{ api_key_id: string; enabled: number }[]> {
  const { results } = await env.DB.prepare('SELECT * FROM api_key_payment_methods WHERE payment_method_id = ?')
    .bind(methodId)
    .all<{ api_key_id: string; enabled: number }>();
  return results;
}

const hexOf = (value: string) =>
  Array.from(new TextEncoder().encode(value), (b) => b.toString(16).padStart(2, '0')).join('');

/** Decodes a token as base64 or base64url (any padding); null when it is not one. */
function decodeBase64Loose(token: string): string | null {
  const std = token.replace(/=+$/, '').replace(/-/g, '+').replace(/_/g, '/');
  if (std.length < 4 || std.length % 4 === 1 || !/^[A-Za-z0-9+/]+$/.test(std)) return null;
  try {
    return atob(std + '='.repeat((4 - (std.length % 4)) % 4));
  } catch {
    return null;
  }
}

/**
 * Asserts that `value` is in no column of a raw row: not as plain text, not hex-encoded, and not inside
 * any base64 / base64url token of it (decoded at every position a token may start, so a value encoded as
 * part of a larger JSON document is found too).
 */
export function expectNoTraceInRow(row: Record<string, unknown>, value: string) {
  for (const [column, cell] of Object.entries(row)) {
    if (typeof cell !== 'string') continue;
    expect(cell, column).not.toContain(value);
    expect(cell.toLowerCase(), column).not.toContain(hexOf(value));
    for (const token of cell.split(/[^A-Za-z0-9+/=_-]+/)) {
      for (let shift = 0; shift < 4; shift++) {
        const decoded = decodeBase64Loose(token.slice(shift));
        if (decoded !== null) expect(decoded, column).not.toContain(value);
      }
    }
  }
}
