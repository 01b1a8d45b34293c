/**
 * Every table of a shard, with how to find one owner's rows in it, its primary key, and which of two copies of a row
 * is the newer (`newer`: an SQL condition over the row being written, `excluded`, and the row in place). Parents
 * before children, so a copy never inserts a row before the row it references and a delete (in reverse) never
 * removes a parent before its children. A shard table missing here would be left behind by a move:
 * test/services/move-owner.test.ts compares this list with the shard schema.
 *
 * `owned` binds `?1` to the owner's id and `?2` to a JSON array of the owner's payment method ids (processor
 * notifications carry the method, not the owner).
 */
export const OWNER_TABLES = [
  { table: 'payments', owned: 'owner_id = ?1', key: ['id'], newer: 'excluded.version > payments.version' },
  { table: 'refunds', owned: 'owner_id = ?1', key: ['id'], newer: 'excluded.updated_at > refunds.updated_at' },
  { table: 'disputes', owned: 'owner_id = ?1', key: ['id'], newer: 'excluded.updated_at > disputes.updated_at' },
  // Events and attempts are written once and never change.
  { table: 'payment_events', owned: 'owner_id = ?1', key: ['id'], newer: null },
  {
    table: 'webhook_deliveries',
    owned: 'owner_id = ?1',
    key: ['event_id', 'destination'],
    newer: 'excluded.updated_at > webhook_deliveries.updated_at',
  },
  {
    table: 'webhook_delivery_attempts',
    owned: 'event_id IN (SELECT id FROM payment_events WHERE owner_id = ?1)',
    key: ['id'],
    newer: null,
  },
  {
    table: 'webhook_endpoints',
    owned: 'owner_id = ?1',
    key: ['id'],
    newer: 'excluded.updated_at > webhook_endpoints.updated_at',
  },
  {
    table: 'webhook_secrets',
    owned: 'owner_id = ?1',
    key: ['owner_id', 'environment'],
    newer:
      'coalesce(excluded.rotated_at, excluded.created_at) > coalesce(webhook_secrets.rotated_at, webhook_secrets.created_at)',
  },
  // The owner's counters move with its rows. They have no version: the origin's count is the truth (nothing changes
  // it while the owner is marked, and the target was cleared before the copy), so a copy round takes it as it is.
  {
    table: 'payment_counters',
    owned: 'owner_id = ?1',
    key: ['owner_id', 'environment', 'span', 'bucket', 'status', 'payment_method_id', 'currency'],
    newer: 'true',
  },
  {
    table: 'event_counters',
    owned: 'owner_id = ?1',
    key: ['owner_id', 'environment', 'span', 'bucket', 'type'],
    newer: 'true',
  },
  { table: 'dispute_counters', owned: 'owner_id = ?1', key: ['owner_id', 'environment', 'status'], newer: 'true' },
  {
    table: 'processor_notifications',
    owned: 'payment_method_id IN (SELECT value FROM json_each(?2))',
    key: ['payment_method_id', 'event_id'],
    newer: null,
  },
] as const satisfies readonly OwnerTable[];

export interface OwnerTable {
  table: string;
  owned: string;
  key: readonly string[];
  newer: string | null;
}

export type OwnerTableName = (typeof OWNER_TABLES)[number]['table'];

/** Whose rows: the owner, and its payment methods' ids as JSON (from the control database). */
export interface Owned {
  ownerId: string;
  methods: string;
}

export const ownerTable = (name: OwnerTableName): OwnerTable => OWNER_TABLES.find((t) => t.table === name)!;

/**
 * Binds `?1` and `?2`, then `extra` as `?3`, `?4`...; without `extra`, `?2` only when the filter uses it (SQLite
 * counts a statement's parameters up to the highest number it names).
 */
export const bindOwned = (statement: D1PreparedStatement, t: OwnerTable, o: Owned, ...extra: unknown[]) =>
  extra.length === 0 && !t.owned.includes('?2')
    ? statement.bind(o.ownerId)
    : statement.bind(o.ownerId, o.methods, ...extra);

/**
 * The owner's rows of one table after `afterRowid`, in rowid order (the order they were written in), at most
 * `limit`. `_rowid` is the cursor of the next page.
 */
export async function readOwnedRows(
  d1: D1Database,
  t: OwnerTable,
  o: Owned,
  afterRowid: number,
  limit: number,
): Promise<Record<string, unknown>[]> {
  const { results } = await bindOwned(
    d1.prepare(`SELECT rowid AS _rowid, * FROM ${t.table} WHERE (${t.owned}) AND rowid > ?3 ORDER BY rowid LIMIT ?4`),
    t,
    o,
    afterRowid,
    limit,
  ).all<Record<string, unknown>>();
  return results;
}

/**
 * Writes `row` unless the same key holds a row at least as new (`newer`): a copy never replaces a newer row with an
 * older one, and rows written once are never rewritten.
 */
export function upsertIfNewer(d1: D1Database, t: OwnerTable, row: Record<string, unknown>): D1PreparedStatement {
  const columns = Object.keys(row);
  const quoted = columns.map((c) => `"${c}"`);
  const conflict = t.newer
    ? `DO UPDATE SET ${columns
        .filter((c) => !t.key.includes(c))
        .map((c) => `"${c}" = excluded."${c}"`)
        .join(', ')} WHERE ${t.newer}`
    : 'DO NOTHING';
  return d1
    .prepare(
      `INSERT INTO ${t.table} (${quoted.join(', ')}) VALUES (${columns.map(() => '?').join(', ')}) ON CONFLICT (${t.key.join(', ')}) ${conflict}`,
    )
    .bind(...Object.values(row));
}

/** The rows of `t` with the keys of `rows` (a page of the source), for the row-by-row check. */
export async function rowsWithKeysOf(
  d1: D1Database,
  t: OwnerTable,
  rows: Record<string, unknown>[],
): Promise<Record<string, unknown>[]> {
  if (rows.length === 0) return [];
  const keys = JSON.stringify(rows.map((r) => t.key.map((k) => r[k])));
  const columns = t.key.map((_k, i) => `json_extract(value, '$[${i}]')`).join(', ');
  const { results } = await d1
    .prepare(`SELECT * FROM ${t.table} WHERE (${t.key.join(', ')}) IN (SELECT ${columns} FROM json_each(?1))`)
    .bind(keys)
    .all<Record<string, unknown>>();
  return results;
}

/** How many rows the owner has in `t` (the check compares both copies' counts). */
export async function countOwned(d1: D1Database, t: OwnerTable, o: Owned): Promise<number> {
  const row = await bindOwned(d1.prepare(`SELECT count(*) AS n FROM ${t.table} WHERE ${t.owned}`), t, o).first<{
    n: number;
  }>();
  return row?.n ?? 0;
}

/** Deletes up to `limit` of the owner's rows of `t`; answers how many went. */
export async function deleteOwnedRows(d1: D1Database, t: OwnerTable, o: Owned, limit: number): Promise<number> {
  const result = await bindOwned(
    d1.prepare(`DELETE FROM ${t.table} WHERE rowid IN (SELECT rowid FROM ${t.table} WHERE ${t.owned} LIMIT ?3)`),
    t,
    o,
    limit,
  ).run();
  return result.meta.changes;
}

/** A row as text that does not depend on column order. */
export const canonicalRow = (row: Record<string, unknown>) =>
  JSON.stringify(
    Object.keys(row)
      .filter((k) => k !== '_rowid')
      .sort()
      .map((k) => [k, row[k]]),
  );
