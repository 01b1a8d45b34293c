import { applyD1Migrations } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { expect, it } from 'vitest';
import { DISPUTE_CHECK_MAX_GAP_MS, DISPUTE_CHECK_MIN_GAP_MS } from '../../src/domain/dispute-checks.ts';

/**
 * What the unreleased shard migrations write into rows that existed before them (0002 `dispute_check_at`, 0003
 * `voided_at`), on a database of its own brought to the schema before them, then upgraded.
 */

const DAY = 86_400_000;
const db = env.MIGRATION_DB;

async function insert(
  id: string,
  status: string,
  processorStatus: string | null,
  createdAt: number,
  updatedAt = createdAt,
) {
  await db
    .prepare(
      `INSERT INTO payments (id, owner_id, environment, payment_method_id, reference_scope, external_reference,
       amount_minor, currency, status, version, processor_idempotency_key, processor_attempts, processor_status,
       created_at, updated_at) VALUES (?, 'usr_1', 'test', 'pm_1', 'scope', ?, 1000, 'USD', ?, 1, ?, 1, ?, ?, ?)`,
    )
    .bind(id, `ref-${id}`, status, `key-${id}`, processorStatus, createdAt, updatedAt)
    .run();
}

it('payments voided by refund within 30 days are dated; due dispute reads are spread by the job’s cadence', async () => {
  const [before, after] = [2, env.TEST_SHARD_MIGRATIONS.length];
  expect(env.TEST_SHARD_MIGRATIONS[before]!.name).toMatch(/^0002_/);
  await applyD1Migrations(db, env.TEST_SHARD_MIGRATIONS.slice(0, before));
  const now = Date.now();
  await insert('voided_recent', 'canceled', 'refunded', now - 20 * DAY, now - 5 * DAY);
  await insert('voided_old', 'canceled', 'refunded', now - 50 * DAY, now - 40 * DAY);
  await insert('canceled_open', 'canceled', 'canceled', now - 2 * DAY);
  const ages = [30 * 60_000, 3 * 3_600_000, 2 * DAY, 10 * DAY, 30 * DAY, 31 * DAY + 7_777, 100 * DAY, 119.9 * DAY];
  for (const [n, age] of ages.entries()) await insert(`approved_${n}`, 'approved', 'succeeded', now - age);
  await insert('approved_past', 'approved', 'succeeded', now - 130 * DAY);
  await applyD1Migrations(db, env.TEST_SHARD_MIGRATIONS.slice(0, after));

  const rows = Object.fromEntries(
    (
      await db
        .prepare('SELECT id, created_at, updated_at, voided_at, void_refund_reference, dispute_check_at FROM payments')
        .all<{
          id: string;
          created_at: number;
          updated_at: number;
          voided_at: number | null;
          void_refund_reference: string | null;
          dispute_check_at: number | null;
        }>()
    ).results.map((r) => [r.id, r]),
  );
  expect(rows.voided_recent).toMatchObject({ voided_at: rows.voided_recent!.updated_at, void_refund_reference: null });
  expect(rows.voided_old!.voided_at).toBeNull();
  expect(rows.canceled_open!.voided_at).toBeNull();

  expect(rows.approved_past!.dispute_check_at).toBeNull();
  const slots = ages.map((age, n) => {
    const row = rows[`approved_${n}`]!;
    const at = row.dispute_check_at!;
    // Within the gap the job itself would leave (a quarter of the age, 1 hour to 3 days), never past the window.
    const gap = Math.min(DISPUTE_CHECK_MAX_GAP_MS, Math.max(DISPUTE_CHECK_MIN_GAP_MS, age / 4));
    expect(at, `age ${age}`).toBeGreaterThanOrEqual(now - 5_000);
    expect(at, `age ${age}`).toBeLessThanOrEqual(now + gap + 5_000);
    expect(at, `age ${age}`).toBeLessThanOrEqual(row.created_at + 120 * DAY);
    return at;
  });
  // Not one instant for all: the reads fall due over the coming days. Two rows may share an instant when their
  // creation times sit at the same point of their gaps (3 hours and 100 days old do, for an hour every 3 days:
  // this check failed at 00:09 UTC on 2026-11-25), so most instants differ, not necessarily all.
  expect(new Set(slots).size).toBeGreaterThan(slots.length / 2);
  expect(Math.max(...slots) - Math.min(...slots)).toBeGreaterThan(DISPUTE_CHECK_MIN_GAP_MS);
});
