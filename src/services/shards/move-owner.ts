import { and, desc, eq, isNull, sql } from 'drizzle-orm';
import { insertRowIf } from '../../db/conditional-insert.ts';
import { ownerMoves, ownerPlacements, type OwnerMoveRow } from '../../db/schema/index.ts';
import { isShardName, type ShardName } from '../../db/shards.ts';
import type { Deps } from '../../deps.ts';
import { ServiceError } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { log } from '../../lib/log.ts';
import { changed } from '../../lib/isolate-cache.ts';
import { type Placement, placeOwner, placementSubject, readPlacement } from './directory.ts';

/**
 * An operator's request to put an owner's data on a shard (`PUT /v1/users/{user_id}/placement`). A move is a durable
 * job (workflows/owner-move.ts running services/shards/run-move.ts): this only decides, with compare-and-sets on the
 * directory, whether one starts, is joined, or is canceled, and answers at once.
 */

export type MoveStep = OwnerMoveRow['step'];
export type MoveStatus = OwnerMoveRow['status'];

export interface Move {
  id: string;
  ownerId: string;
  from: ShardName;
  to: ShardName;
  step: MoveStep;
  status: MoveStatus;
  reason: string | null;
  rowsCopied: Record<string, number> | null;
  flippedAt: number | null;
  finishedAt: number | null;
  createdAt: number;
  updatedAt: number;
}

export type MoveRequestResult =
  /** A new owner, placed on the shard asked for. */
  | { kind: 'placed'; placement: Placement; move: null }
  /** Already there, no move running: nothing to do (the latest move, if any, for information). */
  | { kind: 'unchanged'; placement: Placement; move: Move | null }
  /** A move started. */
  | { kind: 'started'; placement: Placement; move: Move }
  /** The same move was running: this request joins it. */
  | { kind: 'joined'; placement: Placement; move: Move }
  /** A move back to where the data still is, before the flip: the running move is canceled. */
  | { kind: 'canceled'; placement: Placement; move: Move };

/** Tries of the directory's compare-and-set when another request changed the owner's row meanwhile. */
const REQUEST_ATTEMPTS = 4;

export async function requestMove({
  deps,
  input,
}: {
  deps: Deps;
  input: { ownerId: string; to: string };
}): Promise<MoveRequestResult> {
  const { ownerId } = input;
  const to = input.to;
  if (!isShardName(to) || !deps.shards.some((s) => s.name === to)) {
    throw new ServiceError('invalid_request', `No shard named ${to} in this deployment.`, {
      details: { fields: [{ field: 'shard', issue: `one of ${deps.shards.map((s) => s.name).join(', ')}` }] },
    });
  }
  for (let attempt = 0; attempt < REQUEST_ATTEMPTS; attempt++) {
    const current = await readPlacement(deps, ownerId);
    if (!current) return { kind: 'placed', placement: await placeOwner(deps, ownerId, to), move: null };
    const latest = current.moveId ? await loadMove(deps, current.moveId) : null;
    if (current.movingTo === null) {
      if (current.shard === to) return { kind: 'unchanged', placement: current, move: latest };
      const started = await startMove(deps, current, to);
      if (started) return started;
      continue;
    }
    if (current.movingTo === to && latest && latest.status === 'running') {
      await ensureJob(deps, latest.id);
      return { kind: 'joined', placement: current, move: latest };
    }
    if (current.movingTo === to) {
      // Marked by a move that left no running record (a release before moves were durable): start one.
      const started = await startMove(deps, current, to);
      if (started) return started;
      continue;
    }
    if (current.shard === to) {
      const canceled = await cancelMove(deps, current);
      if (canceled) return canceled;
      continue;
    }
    throw new ServiceError('invalid_state_transition', `The owner is being moved to ${current.movingTo}.`, {
      details: { moving_to: current.movingTo, move_id: current.moveId },
    });
  }
  throw new ServiceError('concurrent_update', 'The placement kept changing under this request; send it again.');
}

/** Marks the owner moving under a new move id, if its row is still as read (the mark's compare-and-set). */
async function startMove(deps: Deps, current: Placement, to: ShardName): Promise<MoveRequestResult | null> {
  const now = Date.now();
  const id = newId('mov');
  const [marked] = await deps.control.batch([
    deps.control
      .update(ownerPlacements)
      .set({ movingTo: to, moveId: id, updatedAt: now })
      .where(
        and(
          eq(ownerPlacements.ownerId, current.ownerId),
          eq(ownerPlacements.shard, current.shard),
          current.movingTo === null ? isNull(ownerPlacements.movingTo) : eq(ownerPlacements.movingTo, current.movingTo),
          current.moveId === null ? isNull(ownerPlacements.moveId) : eq(ownerPlacements.moveId, current.moveId),
        ),
      ),
    insertRowIf(
      deps.control,
      ownerMoves,
      {
        id,
        ownerId: current.ownerId,
        fromShard: current.shard,
        toShard: to,
        step: 'mark',
        status: 'running',
        reason: null,
        rowsCopied: null,
        flippedAt: null,
        finishedAt: null,
        createdAt: now,
        updatedAt: now,
      },
      sql`exists (select 1 from ${ownerPlacements} where ${ownerPlacements.ownerId} = ${current.ownerId} and ${ownerPlacements.moveId} = ${id})`,
    ),
  ]);
  if (marked.meta.changes !== 1) return null;
  changed(placementSubject(current.ownerId));
  if (current.moveId) await closeMove(deps, current.moveId, 'canceled', 'superseded by a new move');
  log('info', 'owner_move_started', { move_id: id, owner_id: current.ownerId, from: current.shard, to });
  await ensureJob(deps, id);
  const placement = (await readPlacement(deps, current.ownerId))!;
  return { kind: 'started', placement, move: (await loadMove(deps, id))! };
}

/**
 * Ends the running move before its flip (the owner stays where its data is): the directory's compare-and-set on the
 * move's id. The job notices at its next step, and removes what it had copied.
 */
async function cancelMove(deps: Deps, current: Placement): Promise<MoveRequestResult | null> {
  const now = Date.now();
  const [unmarked] = await deps.control.batch([
    deps.control
      .update(ownerPlacements)
      .set({ movingTo: null, updatedAt: now })
      .where(
        and(
          eq(ownerPlacements.ownerId, current.ownerId),
          eq(ownerPlacements.shard, current.shard),
          eq(ownerPlacements.movingTo, current.movingTo!),
          current.moveId === null ? isNull(ownerPlacements.moveId) : eq(ownerPlacements.moveId, current.moveId),
        ),
      ),
  ]);
  if (unmarked.meta.changes !== 1) return null;
  changed(placementSubject(current.ownerId));
  if (current.moveId) await closeMove(deps, current.moveId, 'canceled', 'moved back to its origin before the flip');
  log('info', 'owner_move_canceled', { move_id: current.moveId, owner_id: current.ownerId });
  const placement = (await readPlacement(deps, current.ownerId))!;
  const move = current.moveId ? await loadMove(deps, current.moveId) : null;
  if (!move) return { kind: 'unchanged', placement, move: null };
  return { kind: 'canceled', placement, move };
}

/** Ends a move's record if it is still running (its job ends by itself at its next fenced step). */
export async function closeMove(
  deps: Deps,
  id: string,
  status: Exclude<MoveStatus, 'running'>,
  reason: string | null,
  step?: MoveStep,
): Promise<void> {
  await deps.control
    .update(ownerMoves)
    .set({ status, reason, ...(step ? { step } : {}), updatedAt: Date.now() })
    .where(and(eq(ownerMoves.id, id), eq(ownerMoves.status, 'running')))
    .run();
}

/**
 * The move's durable job exists: created with the move's id as its instance id, so a second create of the same move
 * (a joined request, a retry after a failed create) finds the first.
 */
export async function ensureJob(deps: Deps, id: string): Promise<void> {
  try {
    await deps.ownerMoves.create({ id, params: { moveId: id } });
    return;
  } catch (error) {
    // Created before (a joined request, or a retry after a crash): the instance exists unless creating failed.
    let instance: WorkflowInstance;
    try {
      instance = await deps.ownerMoves.get(id);
    } catch {
      throw error;
    }
    // A job that gave up (every try of a step failed) starts again: its steps are idempotent and fenced.
    const { status } = await instance.status();
    if (status === 'errored' || status === 'terminated') await instance.restart();
  }
}

export async function loadMove(deps: Deps, id: string): Promise<Move | null> {
  const row = await deps.control.select().from(ownerMoves).where(eq(ownerMoves.id, id)).get();
  return row ? toMove(row) : null;
}

/** The owner's latest move, running or not. */
export async function latestMove(deps: Deps, ownerId: string): Promise<Move | null> {
  const row = await deps.control
    .select()
    .from(ownerMoves)
    .where(eq(ownerMoves.ownerId, ownerId))
    .orderBy(desc(ownerMoves.createdAt), desc(ownerMoves.id))
    .limit(1)
    .get();
  return row ? toMove(row) : null;
}

function toMove(row: OwnerMoveRow): Move {
  if (!isShardName(row.fromShard) || !isShardName(row.toShard)) {
    throw new Error(`A move names a shard that is not a shard binding name: ${row.fromShard}/${row.toShard}`);
  }
  return {
    id: row.id,
    ownerId: row.ownerId,
    from: row.fromShard,
    to: row.toShard,
    step: row.step,
    status: row.status,
    reason: row.reason,
    rowsCopied: row.rowsCopied ? (JSON.parse(row.rowsCopied) as Record<string, number>) : null,
    flippedAt: row.flippedAt,
    finishedAt: row.finishedAt,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

/**
 * Moves whose job has not finished are started again when their job gave up (the cron, every minute): a move's job
 * always ends, and until it does the scheduled jobs leave the owner's rows on both shards alone (`ownersAway`).
 */
export async function resumeMoves(deps: Deps): Promise<number> {
  const unfinished = await deps.control
    .select({ id: ownerMoves.id })
    .from(ownerMoves)
    .where(isNull(ownerMoves.finishedAt))
    .limit(100)
    .all();
  for (const { id } of unfinished) await ensureJob(deps, id);
  return unfinished.length;
}
