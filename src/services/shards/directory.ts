import { and, count, eq, isNotNull, isNull, notInArray, or, type SQL } from 'drizzle-orm';
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core';
import { ownerMoves, ownerPlacements } from '../../db/schema/index.ts';
import { isShardName, type ShardName } from '../../db/shards.ts';
import type { Deps } from '../../deps.ts';
import { chooseShard } from '../../domain/shard-policy.ts';
import { IsolateCache } from '../../lib/isolate-cache.ts';

/** Where an owner's data lives (db/schema/owner-placements.ts). */
export interface Placement {
  ownerId: string;
  shard: ShardName;
  /** Set while the owner is being moved there: its writes answer `owner_moving` until the directory flips. */
  movingTo: ShardName | null;
  /** The latest move (move-owner.ts): running while `movingTo` is set; its id fences every step of it. */
  moveId: string | null;
  placedAt: number;
  updatedAt: number;
}

/**
 * How long an isolate trusts a placement it read (like the API keys, lib/isolate-cache.ts): every request reads
 * it, so a D1 round trip per request would double a read's cost. A move (run-move.ts) waits longer than this after
 * marking the owner before it copies, so that no isolate still writes to the old shard from a stale entry.
 */
export const DIRECTORY_CACHE_MS = 10_000;

const cache = new IsolateCache<Placement>(DIRECTORY_CACHE_MS, 10_000, (p) => [placementSubject(p.ownerId)]);

/** What a placement is read from, as `changed` names it: a move that changes it says so (move-owner.ts, move-steps.ts). */
export const placementSubject = (ownerId: string) => `placement:${ownerId}`;

/** The owner's placement, placing it by the policy (domain/shard-policy.ts) the first time it is seen. */
export async function placementOf(deps: Deps, ownerId: string, now = Date.now()): Promise<Placement> {
  const cached = cache.get(ownerId, now);
  if (cached) return cached;
  const placement = (await readPlacement(deps, ownerId)) ?? (await placeOwner(deps, ownerId, undefined, now));
  cache.set(ownerId, placement, now);
  return placement;
}

/** The directory's row as it is now, bypassing the cache (admin reads, the move). */
export async function readPlacement(deps: Deps, ownerId: string): Promise<Placement | null> {
  const row = await deps.control.select().from(ownerPlacements).where(eq(ownerPlacements.ownerId, ownerId)).get();
  return row ? toPlacement(row) : null;
}

/**
 * Places an owner not placed yet: on `shard` (an admin's choice) or by the policy. A placement that exists wins
 * (two first requests of a new owner at once agree on the first one written), so this never moves an owner.
 */
export async function placeOwner(
  deps: Deps,
  ownerId: string,
  shard: ShardName | undefined,
  now = Date.now(),
): Promise<Placement> {
  const target = shard ?? chooseShard(deps.shards, await ownersPerShard(deps)).name;
  const [, row] = await deps.control.batch([
    deps.control
      .insert(ownerPlacements)
      .values({ ownerId, shard: target, movingTo: null, moveId: null, placedAt: now, updatedAt: now })
      .onConflictDoNothing(),
    deps.control.select().from(ownerPlacements).where(eq(ownerPlacements.ownerId, ownerId)),
  ]);
  const placement = toPlacement(row[0]!);
  cache.set(ownerId, placement, now);
  return placement;
}

/** How many owners each shard holds (the policy's input; the admin placement view shows it too). */
export async function ownersPerShard(deps: Deps): Promise<Map<string, number>> {
  const rows = await deps.control
    .select({ shard: ownerPlacements.shard, owners: count() })
    .from(ownerPlacements)
    .groupBy(ownerPlacements.shard)
    .all();
  return new Map(rows.map((r) => [r.shard, r.owners]));
}

/** For tests: every isolate-cached placement dropped. */
export function clearPlacementCache(): void {
  cache.clear();
}

function toPlacement(row: typeof ownerPlacements.$inferSelect): Placement {
  if (!isShardName(row.shard) || (row.movingTo !== null && !isShardName(row.movingTo))) {
    throw new Error(`The directory names a shard that is not a shard binding name: ${row.shard}/${row.movingTo}`);
  }
  return {
    ownerId: row.ownerId,
    shard: row.shard,
    movingTo: row.movingTo as ShardName | null,
    moveId: row.moveId,
    placedAt: row.placedAt,
    updatedAt: row.updatedAt,
  };
}

/**
 * Owners whose rows on this shard the scheduled jobs leave alone: a move's job from or to it has not finished (the copy
 * must not change under the move, and an old or partial copy is not the owner's data; a finished job leaves neither).
 * Their jobs run on the directory's shard once the move's job has finished. Few rows, read through
 * `owner_moves_unfinished_idx`.
 */
export async function ownersAway(deps: Deps): Promise<string[]> {
  const [moving, marked] = await deps.control.batch([
    deps.control
      .select({ ownerId: ownerMoves.ownerId })
      .from(ownerMoves)
      .where(
        and(
          isNull(ownerMoves.finishedAt),
          or(eq(ownerMoves.fromShard, deps.shard), eq(ownerMoves.toShard, deps.shard)),
        ),
      ),
    // A mark without a running move: left by a release before moves were durable.
    deps.control
      .select({ ownerId: ownerPlacements.ownerId })
      .from(ownerPlacements)
      .where(
        and(
          isNotNull(ownerPlacements.movingTo),
          or(eq(ownerPlacements.shard, deps.shard), eq(ownerPlacements.movingTo, deps.shard)),
        ),
      ),
  ]);
  return [...new Set([...moving, ...marked].map((r) => r.ownerId))];
}

/** A job's condition on its rows' owner: none of `away` (`ownersAway`). */
export const notAway = (ownerId: SQLiteColumn, away: readonly string[]): SQL | undefined =>
  away.length === 0 ? undefined : notInArray(ownerId, [...away]);
