import { and, eq, isNull, or } from 'drizzle-orm';
import { ownerPlacements, paymentMethods } from '../../db/schema/index.ts';
import type { ShardName } from '../../db/shards.ts';
import type { Deps } from '../../deps.ts';
import { ServiceError } from '../../lib/errors.ts';
import { DIRECTORY_CACHE_MS, forgetPlacement, type Placement, placeOwner, readPlacement } from './directory.ts';

/**
 * Every table of a shard, with how to find one owner's rows in it and its primary key (the copy's order and the
 * check's). Parents before children, so a copy never inserts a row before the row it references. A shard table
 * missing here would be left behind by a move: test/services/move-owner.test.ts compares this list with the shard
 * schema.
 */
export const OWNER_TABLES = [
  { table: 'payments', owned: 'owner_id = ?1', key: 'id' },
  { table: 'refunds', owned: 'owner_id = ?1', key: 'id' },
  { table: 'disputes', owned: 'owner_id = ?1', key: 'id' },
  { table: 'payment_events', owned: 'owner_id = ?1', key: 'id' },
  { table: 'webhook_deliveries', owned: 'owner_id = ?1', key: 'event_id, destination' },
  {
    table: 'webhook_delivery_attempts',
    owned: 'event_id IN (SELECT id FROM payment_events WHERE owner_id = ?1)',
    key: 'id',
  },
  { table: 'webhook_endpoints', owned: 'owner_id = ?1', key: 'id' },
  { table: 'webhook_secrets', owned: 'owner_id = ?1', key: 'owner_id, environment' },
  // Notifications carry the method, not the owner: the owner's methods come from the control database.
  {
    table: 'processor_notifications',
    owned: 'payment_method_id IN (SELECT value FROM json_each(?2))',
    key: 'payment_method_id, event_id',
  },
] as const;

/** Rows copied per batch: each row is one statement (D1 binds at most 100 values per statement). */
const COPY_BATCH = 50;
/** Copy and check rounds before a move gives up (a job still writing the owner's rows, say). */
const MAX_COPY_ROUNDS = 3;
/**
 * How long a move waits after marking the owner before it copies: every isolate's cached placement has expired by
 * then, so none still writes to the old shard, and an operation already running there (a processor call takes at
 * most 30 s, connectors/http.ts) has ended.
 */
export const MOVE_SETTLE_MS = DIRECTORY_CACHE_MS + 30_000;

export interface MoveOwnerInput {
  ownerId: string;
  to: ShardName;
}

export interface MoveReport {
  placement: Placement;
  from: ShardName;
  /** Rows copied per table (0 for every table when the owner was already there). */
  rows: Record<string, number>;
}

export interface MoveOptions {
  /** Waits for the directory caches (injected by tests, which do not wait real seconds). */
  wait?: (ms: number) => Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Moves an owner's data to another shard: marks it moving (its writes answer a retryable `owner_moving`, its reads
 * keep going to the old shard), waits until no isolate can still write from a stale directory entry, copies every
 * row, checks the copy row by row, flips the directory, waits again for readers of the old copy, and deletes it.
 * Safe to run again after a failure at any step: the copy replaces what an earlier attempt left, and the mark is
 * kept until the flip (an abandoned move is resumed by the same command, or undone by moving back to the old shard).
 */
export async function moveOwner({
  deps,
  input,
  options = {},
}: {
  deps: Deps;
  input: MoveOwnerInput;
  options?: MoveOptions;
}): Promise<MoveReport> {
  const wait = options.wait ?? sleep;
  const { ownerId, to } = input;
  if (!deps.shards.some((s) => s.name === to)) {
    throw new ServiceError('invalid_request', `No shard named ${to} in this deployment.`, {
      details: { fields: [{ field: 'shard', issue: `one of ${deps.shards.map((s) => s.name).join(', ')}` }] },
    });
  }
  const current = await readPlacement(deps, ownerId);
  if (!current) return { placement: await placeOwner(deps, ownerId, to), from: to, rows: emptyCounts() };
  if (current.shard === to && current.movingTo === null) return { placement: current, from: to, rows: emptyCounts() };
  if (current.movingTo !== null && current.movingTo !== to && current.shard !== to) {
    throw new ServiceError('invalid_state_transition', `The owner is being moved to ${current.movingTo}.`, {
      details: { moving_to: current.movingTo },
    });
  }
  const from = current.shard;

  // Mark (or, moving back to where the data is, end an abandoned move: nothing was deleted there).
  await deps.control
    .update(ownerPlacements)
    .set({ movingTo: to === from ? null : to, updatedAt: Date.now() })
    .where(
      and(
        eq(ownerPlacements.ownerId, ownerId),
        or(isNull(ownerPlacements.movingTo), eq(ownerPlacements.movingTo, current.movingTo ?? to)),
      ),
    )
    .run();
  forgetPlacement(ownerId);
  if (to === from) return { placement: (await readPlacement(deps, ownerId))!, from, rows: emptyCounts() };
  await wait(MOVE_SETTLE_MS);

  const database = (name: ShardName) => deps.shards.find((s) => s.name === name)!.d1;
  const source = database(from);
  const target = database(to);
  const methods = JSON.stringify(
    (
      await deps.control
        .select({ id: paymentMethods.id })
        .from(paymentMethods)
        .where(eq(paymentMethods.userId, ownerId))
        .all()
    ).map((m) => m.id),
  );
  const owned = { ownerId, methods };

  let rows = emptyCounts();
  let differing: string[] = [];
  for (let round = 0; round < MAX_COPY_ROUNDS; round++) {
    rows = await copyOwner(source, target, owned);
    differing = await compareOwner(source, target, owned);
    if (differing.length === 0) break;
  }
  if (differing.length > 0) {
    throw new ServiceError('internal_error', 'The copy kept differing from the source; the owner stays where it was.', {
      details: { tables: differing },
    });
  }

  await deps.control
    .update(ownerPlacements)
    .set({ shard: to, movingTo: null, updatedAt: Date.now() })
    .where(and(eq(ownerPlacements.ownerId, ownerId), eq(ownerPlacements.movingTo, to)))
    .run();
  forgetPlacement(ownerId);
  // Isolates that cached the placement before the flip still read the old copy until their entry expires.
  await wait(DIRECTORY_CACHE_MS);
  await deleteOwner(source, owned);
  return { placement: (await readPlacement(deps, ownerId))!, from, rows };
}

interface Owned {
  ownerId: string;
  methods: string;
}

const bindOwned = (statement: D1PreparedStatement, owned: string, o: Owned) =>
  owned.includes('?2') ? statement.bind(o.ownerId, o.methods) : statement.bind(o.ownerId);

const emptyCounts = () => Object.fromEntries(OWNER_TABLES.map((t) => [t.table, 0]));

/** Copies every row of the owner, replacing what the target has under the same key (a resumed move). */
async function copyOwner(source: D1Database, target: D1Database, o: Owned): Promise<Record<string, number>> {
  const counts = emptyCounts();
  for (const { table, owned } of OWNER_TABLES) {
    let after = 0;
    for (;;) {
      // ?2 is bound whether or not this table's filter uses it: the parameters are numbered up to ?4.
      const { results } = await source
        .prepare(`SELECT rowid AS _rowid, * FROM ${table} WHERE (${owned}) AND rowid > ?3 ORDER BY rowid LIMIT ?4`)
        .bind(o.ownerId, o.methods, after, COPY_BATCH)
        .all<Record<string, unknown>>();
      if (results.length === 0) break;
      await target.batch(
        results.map(({ _rowid, ...row }) => {
          const columns = Object.keys(row);
          return target
            .prepare(
              `INSERT OR REPLACE INTO ${table} (${columns.map((c) => `"${c}"`).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
            )
            .bind(...Object.values(row));
        }),
      );
      counts[table] = (counts[table] ?? 0) + results.length;
      after = Number(results.at(-1)!._rowid);
    }
  }
  return counts;
}

/** The tables whose owner rows differ between the two databases, compared row by row in key order. */
async function compareOwner(source: D1Database, target: D1Database, o: Owned): Promise<string[]> {
  const differing: string[] = [];
  for (const { table, owned, key } of OWNER_TABLES) {
    const read = (d1: D1Database) =>
      bindOwned(d1.prepare(`SELECT * FROM ${table} WHERE ${owned} ORDER BY ${key}`), owned, o).all<
        Record<string, unknown>
      >();
    const [a, b] = await Promise.all([read(source), read(target)]);
    if (canonical(a.results) !== canonical(b.results)) differing.push(table);
  }
  return differing;
}

/** Rows as text that does not depend on column order (the old single database added columns over time). */
const canonical = (rows: Record<string, unknown>[]) =>
  JSON.stringify(
    rows.map((row) =>
      Object.keys(row)
        .sort()
        .map((k) => [k, row[k]]),
    ),
  );

/** Deletes the owner's old copy, children before parents. */
async function deleteOwner(source: D1Database, o: Owned): Promise<void> {
  await source.batch(
    [...OWNER_TABLES]
      .reverse()
      .map(({ table, owned }) => bindOwned(source.prepare(`DELETE FROM ${table} WHERE ${owned}`), owned, o)),
  );
}
