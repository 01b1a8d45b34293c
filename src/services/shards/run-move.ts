import type { Deps } from '../../deps.ts';
import { DIRECTORY_CACHE_MS } from './directory.ts';
import { closeMove, type Move, type MoveStatus } from './move-owner.ts';
import {
  beat,
  claimMove,
  clearTarget,
  copyPage,
  deleteOldCopy,
  enterStep,
  failMove,
  finishMove,
  flip,
  holdsMove,
  jobFinished,
  ownedOf,
  removePartialCopy,
  verifyPage,
} from './move-steps.ts';
import { OWNER_TABLES, type Owned } from './owner-tables.ts';

/**
 * How long a move waits after marking the owner before it writes anything: every isolate's cached placement has
 * expired by then, so none still writes to the old shard, an operation already running there (a processor call takes
 * at most 30 s, connectors/http.ts) has ended, and so has any step of an older move still in flight (move-steps.ts).
 */
export const MOVE_SETTLE_MS = DIRECTORY_CACHE_MS + 30_000;
/** Copy and check rounds before a move gives up (rows still changing at the origin). */
const MAX_COPY_ROUNDS = 3;

/**
 * What runs a move's steps: the platform's durable steps (workflows/owner-move.ts: each `do` is retried on failure and
 * its result kept, so a crashed run resumes after the last step it finished), or a test's own runner that stops at
 * every boundary. Step names are unique within a move and depend only on earlier steps' results.
 */
export interface MoveRunner {
  do<T>(name: string, run: () => Promise<T>): Promise<T>;
  sleep(name: string, ms: number): Promise<void>;
}

/**
 * How many runs a move's job may start before the flip (`owner_moves.run`; the cron starts one for every silence of
 * `MOVE_SILENCE_MS` or every give-up) before the move fails instead: about an hour of a job that can never succeed (a
 * step failing at every try, a shard binding gone), during which the owner's writes answer `503 owner_moving`. It then
 * stays where it was, unmarked, and what the runs copied is removed. After the flip the owner is on its new shard and
 * writes freely: the old copy's delete is retried without a cap.
 */
export const MOVE_MAX_RUNS = 12;

/** `superseded`: a newer run of the same job took the move (move-steps.ts) and carries it on. */
export type MoveOutcome = Exclude<MoveStatus, 'running'> | 'unknown' | 'superseded';

/**
 * A move, step by step: settle (wait out the caches) → copy (clear the target, then every table page by page) →
 * verify (row by row; another round if anything differs) → flip (the directory's compare-and-set) → drain (wait out
 * readers of the old copy) → delete the old copy. Each step is fenced by the directory (move-steps.ts); a move whose
 * fence is gone before the flip (canceled, or superseded) removes what it copied and ends.
 */
export async function runMove(runner: MoveRunner, deps: Deps, moveId: string): Promise<MoveOutcome> {
  // A run resumed after a crash gets this step's kept result, and so its own run number; a restarted run takes a new one.
  const move = await runner.do('claim', () => claimMove(deps, moveId));
  if (!move) return 'unknown';
  const beating = heartbeat(runner, deps, move);
  const outcome = await steps(beating, deps, move);
  await beating.do('finished', () => jobFinished(deps, move));
  return outcome;
}

/** Every step first says the job is alive: the cron restarts a job silent too long (move-owner.ts, `resumeMoves`). */
function heartbeat(runner: MoveRunner, deps: Deps, move: Move): MoveRunner {
  return {
    do: (name, run) =>
      runner.do(name, async () => {
        await beat(deps, move);
        return run();
      }),
    sleep: (name, ms) => runner.sleep(name, ms),
  };
}

async function steps(runner: MoveRunner, deps: Deps, move: Move): Promise<MoveOutcome> {
  const owned = await runner.do('owned', () => ownedOf(deps, move.ownerId));
  // A run restarted after its flip (a failed delete) goes on deleting; one whose move already ended does nothing.
  if (move.status !== 'running' && move.flippedAt === null) return abandon(runner, deps, move, owned);
  if (move.flippedAt === null) {
    if (move.run > MOVE_MAX_RUNS) {
      await runner.do('give up', () =>
        failMove(deps, move, `The move's job started ${move.run} runs without reaching the flip.`),
      );
      await removeCopy(runner, deps, move, owned);
      return 'failed';
    }
    const copied = await copyAndVerify(runner, deps, move, owned);
    if (copied === 'fence_lost') return abandon(runner, deps, move, owned);
    if (copied === 'differing') {
      await runner.do('fail', () => failMove(deps, move, 'The copy kept differing from the origin.'));
      await removeCopy(runner, deps, move, owned);
      return 'failed';
    }
    await runner.do('step flip', () => enterStep(deps, move, 'flip'));
    if (!(await runner.do('flip', () => flip(deps, move, copied)))) return abandon(runner, deps, move, owned);
  }
  await runner.sleep('drain', DIRECTORY_CACHE_MS);
  await runner.do('step delete', () => enterStep(deps, move, 'delete'));
  for (let page = 0; ; page++) {
    const deleted = await runner.do(`delete ${page}`, () => deleteOldCopy(deps, move, owned));
    // Not fenced: a newer move targets the old shard and clears it before copying there.
    if (!deleted.fenced || deleted.value!.done) break;
  }
  await runner.do('done', () => finishMove(deps, move));
  return 'done';
}

async function copyAndVerify(
  runner: MoveRunner,
  deps: Deps,
  move: Move,
  owned: Owned,
): Promise<Record<string, number> | 'fence_lost' | 'differing'> {
  await runner.sleep('settle', MOVE_SETTLE_MS);
  await runner.do('step copy', () => enterStep(deps, move, 'copy'));
  for (let page = 0; ; page++) {
    const cleared = await runner.do(`clear target ${page}`, () => clearTarget(deps, move, owned));
    if (!cleared.fenced) return 'fence_lost';
    if (cleared.value!.done) break;
  }
  for (let round = 1; round <= MAX_COPY_ROUNDS; round++) {
    const rows: Record<string, number> = {};
    for (const { table } of OWNER_TABLES) {
      rows[table] = 0;
      for (let after = 0; ; ) {
        const page = await runner.do(`copy ${round} ${table} ${after}`, () =>
          copyPage(deps, move, owned, table, after),
        );
        if (!page.fenced) return 'fence_lost';
        rows[table] += page.value!.copied;
        if (page.value!.next === null) break;
        after = page.value!.next;
      }
    }
    await runner.do(`step verify ${round}`, () => enterStep(deps, move, 'verify'));
    let equal = true;
    for (const { table } of OWNER_TABLES) {
      for (let after = 0; equal; ) {
        const page = await runner.do(`verify ${round} ${table} ${after}`, () =>
          verifyPage(deps, move, owned, table, after),
        );
        if (!page.fenced) return 'fence_lost';
        equal = page.value!.equal;
        if (page.value!.next === null) break;
        after = page.value!.next;
      }
      if (!equal) break;
    }
    if (equal) return rows;
  }
  return 'differing';
}

/**
 * The fence is gone before the flip: the directory no longer names this move (canceled, or superseded by a newer
 * move), or a newer run of this job holds it, which carries the move on and is left to it.
 */
async function abandon(runner: MoveRunner, deps: Deps, move: Move, owned: Owned): Promise<MoveOutcome> {
  const held = await runner.do('abandoned', async () => {
    await closeMove(deps, move.id, 'canceled', 'The directory no longer names this move (canceled or superseded).', {
      run: move.run,
    });
    return holdsMove(deps, move);
  });
  if (!held) return 'superseded';
  await removeCopy(runner, deps, move, owned);
  return 'canceled';
}

async function removeCopy(runner: MoveRunner, deps: Deps, move: Move, owned: Owned): Promise<void> {
  for (let page = 0; ; page++) {
    const removed = await runner.do(`remove copy ${page}`, () => removePartialCopy(deps, move, owned));
    if (!removed.fenced || removed.value!.done) return;
  }
}
