import { env } from 'cloudflare:workers';
import { expect } from 'vitest';
import { bindOwned, OWNER_TABLES } from '../../src/services/shards/owner-tables.ts';
import { call, createKey, type Session } from './api.ts';
import { addSandboxMethod, linkMethod, paymentBody, postIdempotent, SANDBOX_POS } from './merchant.ts';

/** A merchant created through the API by `admin` (so placed by the policy), with a sandbox POS method and a key. */
export async function newOwner(admin: Session) {
  const email = `${crypto.randomUUID()}@example.com`;
  const password = 'correct-horse-battery-staple';
  const created = await call('POST', '/v1/users', {
    token: admin.accessToken,
    body: { email, name: 'Shop', password },
  });
  expect(created.status, created.text).toBe(201);
  const login = await call('POST', '/v1/auth/login', { body: { email, password } });
  expect(login.status, login.text).toBe(201);
  const session = {
    user: { ...created.body.data, password },
    accessToken: login.body.data.access_token,
    refreshToken: login.body.data.refresh_token,
  } as Session;
  const pos = await addSandboxMethod(session, SANDBOX_POS);
  const key = await createKey(session);
  await linkMethod(session, pos.id, key.id);
  return { id: created.body.data.id as string, session, pos, key };
}

export type Owner = Awaited<ReturnType<typeof newOwner>>;

/** A sandbox POS payment approved at once (201 approved). */
export async function approvedPayment(owner: Owner, value = '40.00') {
  const res = await postIdempotent('/v1/payments', owner.key.secret, paymentBody(owner.pos.id, value));
  expect(res.status, res.text).toBe(201);
  expect(res.body.data.status).toBe('approved');
  return res.body.data.id as string;
}

/** Every row of the owner in one shard database, per table, in key order. */
export async function ownerRows(d1: D1Database, ownerId: string): Promise<Record<string, Record<string, unknown>[]>> {
  const methods = JSON.stringify(
    (
      await env.DB.prepare('SELECT id FROM payment_methods WHERE user_id = ?').bind(ownerId).all<{ id: string }>()
    ).results.map((m) => m.id),
  );
  const rows: Record<string, Record<string, unknown>[]> = {};
  for (const t of OWNER_TABLES) {
    const statement = d1.prepare(`SELECT * FROM ${t.table} WHERE ${t.owned} ORDER BY ${t.key.join(', ')}`);
    rows[t.table] = (await bindOwned(statement, t, { ownerId, methods }).all<Record<string, unknown>>()).results;
  }
  return rows;
}

export const countRows = (rows: Record<string, unknown[]>) => Object.values(rows).reduce((n, r) => n + r.length, 0);
