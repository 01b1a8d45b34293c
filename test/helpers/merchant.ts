import { newId } from '../../src/lib/ids.ts';
import { dataPlane } from './shards.ts';
import type { Scope } from '../../src/domain/scopes.ts';
import { BUSINESS_SCOPES } from '../../src/domain/scopes.ts';
import { createMethod } from './methods.ts';
import { call, createKey, seedSession, type ApiResponse, type Session } from './api.ts';

/**
 * A merchant ready to take payments: a client user with a session, a sandbox POS and a sandbox QR
 * method (random credentials), and an API key with both methods linked. Every request goes through
 * `call`, so the leak scan sees it.
 */

export const SANDBOX_POS = 'cnv_sandbox_pos_v1';
export const SANDBOX_QR = 'cnv_sandbox_qr_v1';

/** Random, so it cannot collide with any fixed text of a response. */
export const sandboxCredential = () => `sbx-${crypto.randomUUID()}`;

export interface MerchantMethod {
  id: string;
  apiKey: string;
}

export interface Merchant {
  session: Session;
  key: { id: string; secret: string };
  pos: MerchantMethod;
  qr: MerchantMethod;
  /** POST /v1/payments with the merchant's API key (or `token`) and an Idempotency-Key (random unless given). */
  pay: (body: unknown, idempotencyKey?: string, token?: string) => Promise<ApiResponse>;
}

export interface MerchantOptions {
  /** Scopes of the API key; all five business scopes by default. */
  scopes?: Scope[];
}

export async function addSandboxMethod(
  session: Session,
  versionId: string,
  apiKey = sandboxCredential(),
  extra: Record<string, unknown> = {},
): Promise<MerchantMethod> {
  const created = await createMethod(session, {
    connector_definition_version_id: versionId,
    name: versionId === SANDBOX_QR ? 'Counter QR' : 'Front counter',
    credentials: { api_key: apiKey },
    ...extra,
  });
  return { id: created.id, apiKey };
}

export async function linkMethod(session: Session, methodId: string, apiKeyId: string) {
  const res = await call('POST', `/v1/account/payment-methods/${methodId}/api-keys`, {
    token: session.accessToken,
    body: { api_key_id: apiKeyId },
  });
  if (res.status !== 201) throw new Error(`link failed: ${res.status} ${res.text}`);
}

export async function setupMerchant(options: MerchantOptions = {}): Promise<Merchant> {
  const session = await seedSession();
  const pos = await addSandboxMethod(session, SANDBOX_POS);
  const qr = await addSandboxMethod(session, SANDBOX_QR);
  const created = await createKey(session, options.scopes ?? [...BUSINESS_SCOPES]);
  const key = { id: created.id, secret: created.secret };
  await linkMethod(session, pos.id, key.id);
  await linkMethod(session, qr.id, key.id);
  const pay = (body: unknown, idempotencyKey: string = crypto.randomUUID(), token: string = key.secret) =>
    call('POST', '/v1/payments', { token, body, headers: { 'Idempotency-Key': idempotencyKey } });
  return { session, key, pos, qr, pay };
}

/** A fresh external reference. */
export const newReference = () => `order-${crypto.randomUUID()}`;

/** A payment body for `method`, with a fresh external reference unless given. */
export function paymentBody(method: string, value: string, overrides: Record<string, unknown> = {}) {
  return {
    amount: { value, currency: 'USD' },
    external_reference: newReference(),
    payment_method: method,
    ...overrides,
  };
}

/** POST with an Idempotency-Key through `call`. */
export function postIdempotent(
  path: string,
  token: string,
  body?: unknown,
  idempotencyKey: string = crypto.randomUUID(),
) {
  return call('POST', path, {
    token,
    ...(body !== undefined ? { body } : {}),
    headers: { 'Idempotency-Key': idempotencyKey },
  });
}

export interface PaymentDbRow {
  id: string;
  status: string;
  amount_minor: number;
  currency: string;
  external_reference: string;
  processor_reference: string | null;
  processor_idempotency_key: string;
  processor_attempts: number;
  version: number;
  expires_at: number | null;
  cancel_requested_at: number | null;
  created_at: number;
  updated_at: number;
}

export async function paymentRowsByReference(externalReference: string): Promise<PaymentDbRow[]> {
  const { results } = await dataPlane
    .prepare('SELECT * FROM payments WHERE external_reference = ?')
    .bind(externalReference)
    .all<PaymentDbRow>();
  return results;
}

export async function paymentRow(id: string): Promise<PaymentDbRow | null> {
  return dataPlane.prepare('SELECT * FROM payments WHERE id = ?').bind(id).first<PaymentDbRow>();
}

export interface RefundDbRow {
  id: string;
  payment_id: string;
  status: string;
  amount_minor: number;
}

export async function refundRows(paymentId: string): Promise<RefundDbRow[]> {
  const { results } = await dataPlane
    .prepare('SELECT * FROM refunds WHERE payment_id = ?')
    .bind(paymentId)
    .all<RefundDbRow>();
  return results;
}

export async function approvedRefundTotal(paymentId: string): Promise<number> {
  const row = await dataPlane
    .prepare("SELECT COALESCE(SUM(amount_minor), 0) AS total FROM refunds WHERE payment_id = ? AND status = 'approved'")
    .bind(paymentId)
    .first<{ total: number }>();
  return row?.total ?? 0;
}

/**
 * A refund the processor has not answered for yet (as a timeout leaves it), written straight into the shard as the
 * service reserves one: the refund row and its payment's running totals in one batch.
 */
export async function insertPendingRefund(
  d1: D1Database,
  refund: { paymentId: string; ownerId: string; amountMinor: number; processorReference: string | null; at: number },
  id = newId('ref'),
): Promise<string> {
  await d1.batch([
    d1
      .prepare(
        `INSERT INTO refunds (id, payment_id, owner_id, amount_minor, currency, status, reason, processor_reference, processor_idempotency_key, processor_attempts, processor_status, created_at, updated_at)
         VALUES (?, ?, ?, ?, 'USD', 'pending', NULL, ?, ?, 1, 'timeout', ?, ?)`,
      )
      .bind(
        id,
        refund.paymentId,
        refund.ownerId,
        refund.amountMinor,
        refund.processorReference,
        id,
        refund.at,
        refund.at,
      ),
    d1
      .prepare(
        'UPDATE payments SET amount_reserved = amount_reserved + ?, refund_count = refund_count + 1, version = version + 1 WHERE id = ?',
      )
      .bind(refund.amountMinor, refund.paymentId),
  ]);
  return id;
}
