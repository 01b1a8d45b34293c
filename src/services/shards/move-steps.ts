import { and, eq, exists, isNotNull, isNull, sql } from 'drizzle-orm';
import { ownerMoves, ownerPlacements, paymentMethods } from '../../db/schema/index.ts';
import type { ShardName } from '../../db/shards.ts';
import type { Deps } from '../../deps.ts';
import { log } from '../../lib/log.ts';
import { changed } from '../../lib/isolate-cache.ts';
import { placementSubject, readPlacement } from './directory.ts';
import { closeMove, loadMove, type Move, type MoveStep, toMove } from './move-owner.ts';
import {
  canonicalRow,
  countOwned,
  deleteOwnedRows,
  OWNER_TABLES,
  type Owned,
  type OwnerTableName,
  ownerTable,
  readOwnedRows,
  rowsWithKeysOf,
  upsertIfNewer,
} from './owner-tables.ts';

/**
 * The steps of a move (run-move.ts puts them in order), each idempotent and fenced by the directory: before the flip a
 * step writes only while the directory still names this move's id, its origin and its target (`ownedByMove`); the
 * flip is a compare-and-set on that state whose result is checked; a copy is deleted only from a shard the directory
 * names neither as the owner's shard nor as a move's target (`unreferenced`).
 *
 * A move's job may run twice at once: the cron restarts a job that went silent (move-owner.ts, `resumeMoves`), and one
 * that was only slow goes on. Each fresh run takes the next `run` number of the move in its first step (`claimMove`),
 * and every later write of the job to the control database, and every fence before the flip, holds only for the run
 * that has the move's current number (`heldBy`): the older run then writes nothing more that a move id alone would
 * let through (clearing the target after the newer run verified it, flipping, closing or finishing the record).
 *
 * A fence is read from the control database and the write goes to a shard, so the two are not one transaction: a
 * step that read its fence may still write once after the directory changed. Every write of a step is one D1 batch of
 * at most `ROWS_PER_BATCH` rows, over in well under a second, and a move waits `MOVE_SETTLE_MS` after marking before it
 * writes anything: a step of an older move still in flight when a newer move marks the owner has ended long before
 * the newer one writes.
 */

/** Rows per D1 batch: each row is one statement. */
const ROWS_PER_BATCH = 50;
/** Rows per step of the durable job: a step's result is kept by the platform, and a move has at most 10,000 steps. */
export const ROWS_PER_STEP = 2_000;

export interface Fenced<T> {
  /** False when the directory no longer names this move: nothing was written. */
  fenced: boolean;
  value?: T;
}

const lost = { fenced: false } as const;

/** The owner's rows and its payment methods (processor notifications are kept by method). */
export async function ownedOf(deps: Deps, ownerId: string): Promise<Owned> {
  const methods = await deps.control
    .select({ id: paymentMethods.id })
    .from(paymentMethods)
    .where(eq(paymentMethods.userId, ownerId))
    .all();
  return { ownerId, methods: JSON.stringify(methods.map((m) => m.id)) };
}

const database = (deps: Deps, name: ShardName) => {
  const shard = deps.shards.find((s) => s.name === name);
  if (!shard) throw new Error(`No binding for shard ${name} (wrangler.toml).`);
  return shard.d1;
};

/** The move's record is held by this run of its job (the latest to start). */
const heldBy = (move: Move) => and(eq(ownerMoves.id, move.id), eq(ownerMoves.run, move.run));

/** The directory's row still marks the owner moving under this move (the condition of the flip and of a failure). */
const markedBy = (move: Move) =>
  and(
    eq(ownerPlacements.ownerId, move.ownerId),
    eq(ownerPlacements.moveId, move.id),
    eq(ownerPlacements.shard, move.from),
    eq(ownerPlacements.movingTo, move.to),
  );

/** `heldBy`, in a statement on the directory: this run still holds the move. */
const runHolds = (deps: Deps, move: Move) =>
  exists(deps.control.select({ id: ownerMoves.id }).from(ownerMoves).where(heldBy(move)));

/**
 * Before the flip: the directory still marks the owner moving from `from` to `to` under this move's id, and this run
 * of the job holds the move.
 */
async function ownedByMove(deps: Deps, move: Move): Promise<boolean> {
  const row = await deps.control
    .select({ moveId: ownerPlacements.moveId })
    .from(ownerPlacements)
    .where(and(markedBy(move), runHolds(deps, move)))
    .get();
  return row !== undefined;
}

/**
 * The job's first step: this run takes the next run number of the move (the move as it is, with that number). A
 * finished move is left as it is, its number unchanged: what a run of it still does is fenced by the move's status and
 * `finished_at`, not by the number.
 */
export async function claimMove(deps: Deps, moveId: string): Promise<Move | null> {
  const now = Date.now();
  const [, rows] = await deps.control.batch([
    deps.control
      .update(ownerMoves)
      .set({ run: sql`${ownerMoves.run} + 1`, heartbeatAt: now })
      .where(and(eq(ownerMoves.id, moveId), isNull(ownerMoves.finishedAt))),
    deps.control.select().from(ownerMoves).where(eq(ownerMoves.id, moveId)),
  ]);
  return rows[0] ? toMove(rows[0]) : null;
}

/** The job is alive (`owner_moves.heartbeat_at`, read by `resumeMoves`): written while this run holds the move. */
export async function beat(deps: Deps, move: Move): Promise<void> {
  await deps.control
    .update(ownerMoves)
    .set({ heartbeatAt: Date.now() })
    .where(and(heldBy(move), isNull(ownerMoves.finishedAt)))
    .run();
}

/** After `abandon`'s close: whether this run still holds the move (false once a newer run took it). */
export async function holdsMove(deps: Deps, move: Move): Promise<boolean> {
  const row = await deps.control.select({ id: ownerMoves.id }).from(ownerMoves).where(heldBy(move)).get();
  return row !== undefined;
}

/** A shard neither holding the owner's live data nor the target of a running move: its copy is only a leftover. */
async function unreferenced(deps: Deps, ownerId: string, shard: ShardName): Promise<boolean> {
  const placement = await readPlacement(deps, ownerId);
  return placement !== null && placement.shard !== shard && placement.movingTo !== shard;
}

/**
 * Deletes one page of the owner's rows on `d1` (children before parents), each page only while `fenced` still holds.
 * `done` once nothing of the owner is left there.
 */
async function deletePage(
  d1: D1Database,
  owned: Owned,
  fenced: () => Promise<boolean>,
): Promise<Fenced<{ done: boolean }>> {
  for (const t of [...OWNER_TABLES].reverse()) {
    if (!(await fenced())) return lost;
    if ((await deleteOwnedRows(d1, t, owned, ROWS_PER_STEP)) > 0) return { fenced: true, value: { done: false } };
  }
  return { fenced: true, value: { done: true } };
}

/** Records how far the move got (shown by `GET .../placement`), while it runs. */
export async function enterStep(deps: Deps, move: Move, step: MoveStep): Promise<void> {
  await deps.control
    .update(ownerMoves)
    .set({ step, updatedAt: Date.now() })
    .where(and(heldBy(move), eq(ownerMoves.status, 'running')))
    .run();
}

/**
 * The target holds nothing of the owner before the copy: a move canceled or failed earlier may have left rows there,
 * and they would otherwise pass for this copy's (rows deleted at the origin since, or older versions). One page of at
 * most `ROWS_PER_STEP` rows per call; `done` once the target is clear.
 */
export function clearTarget(deps: Deps, move: Move, owned: Owned): Promise<Fenced<{ done: boolean }>> {
  return deletePage(database(deps, move.to), owned, () => ownedByMove(deps, move));
}

/**
 * Copies one page of the owner's rows of `table` (after `afterRowid`, in the order they were written) from the origin
 * to the target, never over a newer row (`upsertIfNewer`). `next` is the cursor of the next page, null at the end.
 */
export async function copyPage(
  deps: Deps,
  move: Move,
  owned: Owned,
  table: OwnerTableName,
  afterRowid: number,
): Promise<Fenced<{ copied: number; next: number | null }>> {
  const t = ownerTable(table);
  const source = database(deps, move.from);
  const target = database(deps, move.to);
  const rows = await readOwnedRows(source, t, owned, afterRowid, ROWS_PER_STEP);
  for (let i = 0; i < rows.length; i += ROWS_PER_BATCH) {
    if (!(await ownedByMove(deps, move))) return lost;
    const batch = rows.slice(i, i + ROWS_PER_BATCH).map(({ _rowid, ...row }) => upsertIfNewer(target, t, row));
    await target.batch(batch);
  }
  const next = rows.length === ROWS_PER_STEP ? Number(rows.at(-1)!._rowid) : null;
  return { fenced: true, value: { copied: rows.length, next } };
}

/**
 * Checks one page of the copy of `table` row by row: every origin row of the page is in the target, equal. At the end
 * of the table (`next` null) both copies must also hold as many rows, so the target has nothing the origin lacks.
 */
export async function verifyPage(
  deps: Deps,
  move: Move,
  owned: Owned,
  table: OwnerTableName,
  afterRowid: number,
): Promise<Fenced<{ equal: boolean; next: number | null }>> {
  if (!(await ownedByMove(deps, move))) return lost;
  const t = ownerTable(table);
  const source = database(deps, move.from);
  const target = database(deps, move.to);
  const rows = await readOwnedRows(source, t, owned, afterRowid, ROWS_PER_STEP);
  const copies = new Set((await rowsWithKeysOf(target, t, rows)).map(canonicalRow));
  let equal = rows.every((row) => copies.has(canonicalRow(row)));
  const next = rows.length === ROWS_PER_STEP ? Number(rows.at(-1)!._rowid) : null;
  if (equal && next === null) equal = (await countOwned(source, t, owned)) === (await countOwned(target, t, owned));
  return { fenced: true, value: { equal, next } };
}

/**
 * The directory names the target, in one compare-and-set on the move's id, origin and target; the move's record
 * says it flipped in the same batch (only if the flip applied). True as well when this move's flip was already
 * applied: the platform runs a step again when its answer was lost after its write, and that flip stands. False when
 * the directory was no longer this move's.
 */
export async function flip(deps: Deps, move: Move, rowsCopied: Record<string, number>): Promise<boolean> {
  const now = Date.now();
  const flippedHere = sql`exists (select 1 from ${ownerPlacements} where ${ownerPlacements.ownerId} = ${move.ownerId} and ${ownerPlacements.moveId} = ${move.id} and ${ownerPlacements.shard} = ${move.to} and ${ownerPlacements.movingTo} is null)`;
  const [, , record] = await deps.control.batch([
    deps.control
      .update(ownerPlacements)
      .set({ shard: move.to, movingTo: null, updatedAt: now })
      .where(and(markedBy(move), runHolds(deps, move))),
    deps.control
      .update(ownerMoves)
      .set({ step: 'drain', flippedAt: now, rowsCopied: JSON.stringify(rowsCopied), updatedAt: now })
      .where(and(heldBy(move), eq(ownerMoves.status, 'running'), isNull(ownerMoves.flippedAt), flippedHere)),
    // Whether the directory names the target under this move, and the record says so: by this run or an earlier one.
    deps.control
      .select({ flippedAt: ownerMoves.flippedAt })
      .from(ownerMoves)
      .where(and(eq(ownerMoves.id, move.id), isNotNull(ownerMoves.flippedAt), flippedHere)),
  ]);
  changed(placementSubject(move.ownerId));
  const flipped = record.length === 1;
  if (flipped) log('info', 'owner_move_flipped', { move_id: move.id, owner_id: move.ownerId });
  return flipped;
}

/**
 * Deletes one page of the owner's old copy on `shard`: only after this move's flip was recorded, and only while the
 * directory names that shard neither as the owner's shard nor as a running move's target (a move back there clears
 * it itself). `done` once nothing of the owner is left there.
 */
export async function deleteOldCopy(deps: Deps, move: Move, owned: Owned): Promise<Fenced<{ done: boolean }>> {
  const record = await loadMove(deps, move.id);
  if (record?.flippedAt === null || record === null) return lost;
  return deletePage(database(deps, move.from), owned, () => unreferenced(deps, move.ownerId, move.from));
}

/**
 * After a cancel (or a failure): what this move copied to its target goes, if the directory names that shard for
 * nothing (another move there clears it before copying anyway). `done` once clear.
 */
export function removePartialCopy(deps: Deps, move: Move, owned: Owned): Promise<Fenced<{ done: boolean }>> {
  return deletePage(database(deps, move.to), owned, () => unreferenced(deps, move.ownerId, move.to));
}

/** A move that cannot complete (its copy kept differing): the owner stays where it was, unmarked. */
export async function failMove(deps: Deps, move: Move, reason: string): Promise<void> {
  await deps.control
    .update(ownerPlacements)
    .set({ movingTo: null, updatedAt: Date.now() })
    .where(and(markedBy(move), runHolds(deps, move)))
    .run();
  changed(placementSubject(move.ownerId));
  await closeMove(deps, move.id, 'failed', reason, { run: move.run });
  log('error', 'owner_move_failed', { move_id: move.id, owner_id: move.ownerId, reason });
}

/** The move ended: its record says so (a canceled move's record was closed by the request that canceled it). */
export async function finishMove(deps: Deps, move: Move): Promise<void> {
  await closeMove(deps, move.id, 'done', null, { step: 'done', run: move.run });
  log('info', 'owner_move_done', { move_id: move.id, owner_id: move.ownerId });
}

/** The job's last step, after its last write: the owner's rows on both shards are the scheduled jobs' again. */
export async function jobFinished(deps: Deps, move: Move): Promise<void> {
  const now = Date.now();
  await deps.control
    .update(ownerMoves)
    .set({ finishedAt: now, heartbeatAt: now, updatedAt: now })
    .where(and(heldBy(move), isNull(ownerMoves.finishedAt)))
    .run();
}
