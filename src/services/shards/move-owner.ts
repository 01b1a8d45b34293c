import { and, desc, eq, isNull, sql } from 'drizzle-orm';
import { insertRowIf } from '../../db/conditional-insert.ts';
import { ownerMoves, ownerPlacements, type OwnerMoveRow } from '../../db/schema/index.ts';
import { isShardName, type ShardName } from '../../db/shards.ts';
import type { Deps } from '../../deps.ts';
import { ServiceError } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { errorFields, log } from '../../lib/log.ts';
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
  /** The job's last sign of life (`updated_at` for a move from before heartbeats). */
  heartbeatAt: number;
  /** The run of the job that holds the move (db/schema/owner-placements.ts): its writes are fenced by it. */
  run: number;
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
        heartbeatAt: now,
        run: 0,
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

/**
 * Ends a move's record if it is still running (its job ends by itself at its next fenced step). `run`: only while
 * that run of the job holds the move (the job's own closes; an operator's request closes whichever run holds it).
 */
export async function closeMove(
  deps: Deps,
  id: string,
  status: Exclude<MoveStatus, 'running'>,
  reason: string | null,
  { step, run }: { step?: MoveStep; run?: number } = {},
): Promise<void> {
  await deps.control
    .update(ownerMoves)
    .set({ status, reason, ...(step ? { step } : {}), updatedAt: Date.now() })
    .where(
      and(
        eq(ownerMoves.id, id),
        eq(ownerMoves.status, 'running'),
        run === undefined ? undefined : eq(ownerMoves.run, run),
      ),
    )
    .run();
}

/**
 * The move's durable job exists: created with the move's id as its instance id, so a second create of the same move
 * (a joined request, a retry after a failed create) finds the first. Its instance if it existed before, null if this
 * call created it.
 */
async function existingJob(deps: Deps, id: string): Promise<WorkflowInstance | null> {
  try {
    await deps.ownerMoves.create({ id, params: { moveId: id } });
    return null;
  } catch (error) {
    // Created before (a joined request, or a retry after a crash): the instance exists unless creating failed.
    try {
      return await deps.ownerMoves.get(id);
    } catch {
      throw error;
    }
  }
}

/** The move's job exists, and runs again if it gave up (every try of a step failed): its steps are idempotent and fenced. */
export async function ensureJob(deps: Deps, id: string): Promise<void> {
  const instance = await existingJob(deps, id);
  if (!instance) return;
  const { status } = await instance.status();
  if (status === 'errored' || status === 'terminated') await instance.restart();
}

/** The move's job starts again from its first step, whatever its instance reports (`resumeMoves`). */
async function restartJob(deps: Deps, id: string): Promise<void> {
  await (await existingJob(deps, id))?.restart();
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

export function toMove(row: OwnerMoveRow): Move {
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
    heartbeatAt: row.heartbeatAt ?? row.updatedAt,
    run: row.run,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

/**
 * How long a move's job may go without a heartbeat (`owner_moves.heartbeat_at`, written by its every step) before the
 * cron starts it again. A healthy job beats far more often: its longest silence is a sleep (`MOVE_SETTLE_MS`, 40 s)
 * followed by one step (a page of at most 2,000 rows, written in batches of 50: seconds). What outlasts 5 minutes is
 * a dead process (a `running` instance that nothing runs: wrangler dev's local Workflows after a restart, docs/SCALE.md)
 * or a step failing again and again (the 6th try waits 160 s, workflows/owner-move.ts); starting the latter again only
 * resets its tries.
 */
export const MOVE_SILENCE_MS = 5 * 60_000;

/**
 * Moves whose job has not finished are started again (the cron, every minute) when their job gave up (`errored`,
 * `terminated`) or has been silent longer than `MOVE_SILENCE_MS`, whatever its instance reports: a move's job always
 * ends, and until it does the scheduled jobs leave the owner's rows on both shards alone (`ownersAway`).
 *
 * Starting a job that was only slow is safe: every step is idempotent and fenced (move-steps.ts), and the restarted
 * run takes the next `run` number in its first step, so every later write of the older run (the directory's flip
 * included, a compare-and-set whose result is checked) finds its fence gone and writes nothing; a write of the older run
 * already past its fence is over before the new run writes, which first waits `MOVE_SETTLE_MS` (run-move.ts).
 * test/services/move-model.test.ts runs a second run of the same move from every boundary of the first.
 * A restart is claimed by a compare-and-set on the heartbeat it read, which it also renews: two crons at once restart
 * a job once, and the restarted run has the whole `MOVE_SILENCE_MS` to show its first sign of life.
 */
export async function resumeMoves(deps: Deps, now = Date.now()): Promise<number> {
  const unfinished = await deps.control
    .select({ id: ownerMoves.id, heartbeatAt: ownerMoves.heartbeatAt, updatedAt: ownerMoves.updatedAt })
    .from(ownerMoves)
    .where(isNull(ownerMoves.finishedAt))
    .limit(100)
    .all();
  for (const move of unfinished) {
    // One job the platform cannot start now must not keep the cron from the others. It is tried again at a later run:
    // the next minute's, or, when its restart was claimed (the heartbeat renewed), once it is silent that long again.
    try {
      const silentMs = now - (move.heartbeatAt ?? move.updatedAt);
      if (silentMs > MOVE_SILENCE_MS && (await claimRestart(deps, move.id, move.heartbeatAt, now))) {
        log('warn', 'owner_move_restarted', { move_id: move.id, silent_ms: silentMs });
        await restartJob(deps, move.id);
      } else {
        await ensureJob(deps, move.id);
      }
    } catch (error) {
      log('error', 'owner_move_resume_failed', { move_id: move.id, ...errorFields(error) });
    }
  }
  return unfinished.length;
}

/** The move's heartbeat is still the one read (no step and no other cron since): renewed, and the restart is ours. */
async function claimRestart(deps: Deps, id: string, heartbeatAt: number | null, now: number): Promise<boolean> {
  const claimed = await deps.control
    .update(ownerMoves)
    .set({ heartbeatAt: now })
    .where(
      and(
        eq(ownerMoves.id, id),
        isNull(ownerMoves.finishedAt),
        heartbeatAt === null ? isNull(ownerMoves.heartbeatAt) : eq(ownerMoves.heartbeatAt, heartbeatAt),
      ),
    )
    .run();
  return claimed.meta.changes === 1;
}
