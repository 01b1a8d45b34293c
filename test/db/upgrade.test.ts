import { applyD1Migrations } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { clearPlacementCache } from '../../src/services/shards/directory.ts';
import { call, expectError } from '../helpers/api.ts';
import { paymentBody, postIdempotent, setupMerchant } from '../helpers/merchant.ts';
import { fetchWith, SHARDS } from '../helpers/shards.ts';
import { captureQueue } from '../helpers/webhooks.ts';

const LEGACY = env.LEGACY_DB;

const tablesOf = async (d1: D1Database) =>
  (
    await d1
      .prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name NOT LIKE 'd1_%' ORDER BY name",
      )
      .all<{ name: string }>()
  ).results.map((r) => r.name);

async function rowsOf(d1: D1Database, table: string) {
  return (await d1.prepare(`SELECT * FROM ${table} ORDER BY rowid`).all<Record<string, unknown>>()).results;
}

/**
 * Copies every row of `table` from `from` into the legacy database, by column name: the columns the table had
 * before shards (those added since hold what the old deployment could not have stored).
 */
async function copyInto(from: D1Database, table: string) {
  const rows = await rowsOf(from, table);
  if (rows.length === 0) return;
  const legacyColumns = new Set(
    (await LEGACY.prepare(`SELECT name FROM pragma_table_info('${table}')`).all<{ name: string }>()).results.map(
      (c) => c.name,
    ),
  );
  await LEGACY.batch(
    rows.map((full) => {
      const row = Object.fromEntries(Object.entries(full).filter(([column]) => legacyColumns.has(column)));
      const columns = Object.keys(row);
      return LEGACY.prepare(
        `INSERT INTO ${table} (${columns.map((c) => `"${c}"`).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
      ).bind(...Object.values(row));
    }),
  );
}

describe('upgrading a single-database deployment', () => {
  it('its database, at the schema before shards and with data, becomes the control plane and SHARD_0, and still serves', async () => {
    // Data made through the API: a merchant with an approved, partly refunded payment and a webhook endpoint.
    const m = await setupMerchant();
    const captured = captureQueue();
    const made = await postIdempotent('/v1/payments', m.key.secret, paymentBody(m.pos.id, '80.00'));
    expect(made.status, made.text).toBe(201);
    const paymentId = made.body.data.id as string;
    await call('POST', `/v1/test-helpers/payments/${paymentId}/approve`, { token: m.key.secret });
    const refund = await postIdempotent(`/v1/payments/${paymentId}/refunds`, m.key.secret, {
      amount: { value: '30.00', currency: 'USD' },
    });
    expect(refund.status, refund.text).toBe(201);
    const endpoint = await call('POST', '/v1/account/webhook-endpoints', {
      token: m.session.accessToken,
      body: { url: 'https://hooks.example.com/up', enabled_events: ['*'] },
    });
    expect(endpoint.status, endpoint.text).toBe(201);
    captured.restore();
    const before = await call('GET', `/v1/payments/${paymentId}`, { token: m.key.secret });

    // Today's single database: the migrations before shards, holding that data (every table it had).
    await applyD1Migrations(LEGACY, env.TEST_LEGACY_MIGRATIONS);
    const legacyTables = await tablesOf(LEGACY);
    expect(legacyTables).not.toContain('owner_placements');
    // Parents before children (foreign keys).
    const order = [
      'users',
      'sessions',
      'refresh_tokens',
      'api_keys',
      'payment_methods',
      'api_key_payment_methods',
      'payments',
    ];
    order.push('refunds', 'payment_events', 'webhook_deliveries', 'webhook_delivery_attempts');
    const ordered = [...order, ...legacyTables.filter((t) => !order.includes(t))];
    expect([...ordered].sort()).toEqual([...legacyTables].sort());
    for (const table of [...order, ...legacyTables.filter((t) => !order.includes(t))]) {
      const source = (await tablesOf(env.DB)).includes(table) ? [env.DB] : SHARDS.map((s) => s.d1);
      for (const d1 of source) await copyInto(d1, table);
    }
    const counts = Object.fromEntries(
      await Promise.all(legacyTables.map(async (t) => [t, (await rowsOf(LEGACY, t)).length] as const)),
    );
    expect(counts.payments).toBeGreaterThan(0);
    expect(counts.refunds).toBeGreaterThan(0);
    expect(counts.webhook_endpoints).toBeGreaterThan(0);

    // The upgrade: both folders applied to it (the shard folder tracked in its own table, as wrangler.toml says).
    await applyD1Migrations(LEGACY, env.TEST_CONTROL_MIGRATIONS);
    await applyD1Migrations(LEGACY, env.TEST_SHARD_MIGRATIONS, 'd1_shard_migrations');
    for (const table of legacyTables) expect((await rowsOf(LEGACY, table)).length, table).toBe(counts[table]);
    const placements = await rowsOf(LEGACY, 'owner_placements');
    expect(placements.map((p) => p.owner_id).sort()).toEqual((await rowsOf(LEGACY, 'users')).map((u) => u.id).sort());
    expect(new Set(placements.map((p) => p.shard))).toEqual(new Set(['SHARD_0']));

    // Served with `DB` and `SHARD_0` both bound to it (and a new, empty SHARD_1).
    clearPlacementCache();
    const upgraded = { ...env, DB: LEGACY, SHARD_0: LEGACY };
    const read = await fetchWith(upgraded, 'GET', `/v1/payments/${paymentId}`, m.key.secret);
    expect(read.status).toBe(200);
    // What the old deployment stored reads back the same (fields added since, such as settlement, read as unknown).
    const kept = ['id', 'status', 'amount', 'refunded_amount', 'external_reference', 'payment_method', 'created_at'];
    const pick = (p: Record<string, unknown>) => Object.fromEntries(kept.map((k) => [k, p[k]]));
    expect(pick(read.body.data)).toEqual(pick(before.body.data));
    expect(read.body.data.status).toBe('partially_refunded');
    const list = await fetchWith(upgraded, 'GET', '/v1/payments', m.key.secret);
    expect(list.body.data.map((p: { id: string }) => p.id)).toContain(paymentId);
    const endpoints = await fetchWith(upgraded, 'GET', '/v1/account/webhook-endpoints', m.session.accessToken);
    expect(endpoints.body.data.map((e: { id: string }) => e.id)).toEqual([endpoint.body.data.id]);
    const added = await fetchWith(upgraded, 'POST', '/v1/account/webhook-endpoints', m.session.accessToken, {
      url: 'https://hooks.example.com/after',
      enabled_events: ['payment.approved'],
    });
    expect(added.status).toBe(201);
    expect(
      await LEGACY.prepare('SELECT 1 FROM webhook_endpoints WHERE id = ?')
        .bind(added.body.id ?? added.body.data.id)
        .first(),
    ).not.toBeNull();
    clearPlacementCache();
    // And the deployment's own databases are untouched by all this.
    expectError(await call('GET', '/v1/payments/pay_nothere', { token: m.key.secret }), 404, 'payment_not_found');
  });
});
