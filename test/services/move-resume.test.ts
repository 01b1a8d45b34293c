import { env } from 'cloudflare:workers';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { ownerMoves } from '../../src/db/schema/index.ts';
import { createDeps } from '../../src/deps.ts';
import { newId } from '../../src/lib/ids.ts';
import { MOVE_SILENCE_MS, resumeMoves } from '../../src/services/shards/move-owner.ts';
import { beat, claimMove, jobFinished } from '../../src/services/shards/move-steps.ts';

/**
 * The cron's resumption of moves (`resumeMoves`): which jobs it starts again. The platform's instances are replaced by
 * `jobs`, which reports the status a test gives each and records every restart; the moves are rows of `owner_moves`
 * as a job leaves them.
 */

const statuses = new Map<string, string>();
const restarted: string[] = [];
const jobs = {
  create: async ({ id }: { id: string }) => {
    if (statuses.has(id)) throw new Error('instance.already_exists');
    statuses.set(id, 'queued');
    return { id };
  },
  get: async (id: string) => {
    const status = statuses.get(id);
    if (status === undefined) throw new Error('instance.not_found');
    return {
      id,
      status: async () => ({ status }),
      restart: async () => {
        if (status === 'unrestartable') throw new Error('the platform refused the restart');
        restarted.push(id);
      },
    };
  },
};
const deps = createDeps({ ...env, OWNER_MOVES: jobs } as unknown as typeof env);

/** A move whose job last beat at `heartbeatAt` and whose instance reports `status`. */
async function moveWith({
  heartbeatAt,
  status,
  finishedAt = null,
  updatedAt = heartbeatAt,
}: {
  heartbeatAt: number;
  status: string;
  finishedAt?: number | null;
  updatedAt?: number;
}): Promise<string> {
  const id = newId('mov');
  await deps.control
    .insert(ownerMoves)
    .values({
      id,
      ownerId: newId('usr'),
      fromShard: 'SHARD_0',
      toShard: 'SHARD_1',
      step: 'copy',
      status: finishedAt === null ? 'running' : 'done',
      reason: null,
      rowsCopied: null,
      flippedAt: null,
      finishedAt,
      heartbeatAt,
      run: 1,
      createdAt: updatedAt,
      updatedAt,
    })
    .run();
  statuses.set(id, status);
  return id;
}

const restartsOf = (id: string) => restarted.filter((r) => r === id).length;
const rowOf = async (id: string) => (await deps.control.select().from(ownerMoves).where(eq(ownerMoves.id, id)).get())!;

describe('resumeMoves', () => {
  it('restarts the job of a move silent longer than MOVE_SILENCE_MS though its instance reports running, once', async () => {
    const now = Date.now();
    const silent = await moveWith({ heartbeatAt: now - MOVE_SILENCE_MS - 1, status: 'running' });
    // Two cron runs at once: the restart is claimed by a compare-and-set on the heartbeat they both read.
    await Promise.all([resumeMoves(deps, now), resumeMoves(deps, now)]);
    expect(restartsOf(silent)).toBe(1);
    // The claim renewed the heartbeat: the restarted run has a whole MOVE_SILENCE_MS to beat, and the next cron waits.
    expect((await rowOf(silent)).heartbeatAt).toBe(now);
    await resumeMoves(deps, now + 60_000);
    expect(restartsOf(silent)).toBe(1);
  });

  it('leaves a running job with a fresh heartbeat alone until it has been silent longer than MOVE_SILENCE_MS', async () => {
    const now = Date.now();
    // The heartbeat decides, not when the record last changed (a copy beats at every page without changing it).
    const beating = await moveWith({ heartbeatAt: now, updatedAt: now - 60 * 60_000, status: 'running' });
    await resumeMoves(deps, now);
    await resumeMoves(deps, now + MOVE_SILENCE_MS);
    expect(restartsOf(beating)).toBe(0);
    await resumeMoves(deps, now + MOVE_SILENCE_MS + 1);
    expect(restartsOf(beating)).toBe(1);
  });

  it('never restarts a finished move, whatever its instance reports; unfinished ones beside it are', async () => {
    const now = Date.now();
    const long = now - 60 * 60_000;
    const finished = [
      await moveWith({ heartbeatAt: long, status: 'running', finishedAt: long }),
      await moveWith({ heartbeatAt: long, status: 'errored', finishedAt: long }),
      await moveWith({ heartbeatAt: long, status: 'complete', finishedAt: long }),
    ];
    // Silent, its instance complete (a run that ended without finishing the move); and one that gave up just now,
    // restarted at once as before heartbeats.
    const unfinished = [
      await moveWith({ heartbeatAt: long, status: 'complete' }),
      await moveWith({ heartbeatAt: now, status: 'errored' }),
    ];
    await resumeMoves(deps, now);
    for (const id of finished) expect(restartsOf(id), id).toBe(0);
    for (const id of unfinished) expect(restartsOf(id), id).toBe(1);
  });

  it('goes on to the other moves when one job cannot be restarted, and tries that one again at the next run', async () => {
    const now = Date.now();
    const silentSince = now - MOVE_SILENCE_MS - 1;
    const refused = await moveWith({ heartbeatAt: silentSince, status: 'unrestartable' });
    const after = await moveWith({ heartbeatAt: silentSince, status: 'running' });
    await resumeMoves(deps, now);
    expect(restartsOf(after)).toBe(1);
    statuses.set(refused, 'running');
    await resumeMoves(deps, now + MOVE_SILENCE_MS + 1);
    expect(restartsOf(refused)).toBe(1);
  });

  it("a job's heartbeat and its finish are written only by the run that holds the move", async () => {
    const now = Date.now();
    const id = await moveWith({ heartbeatAt: now - MOVE_SILENCE_MS - 1, status: 'running' });
    const older = (await claimMove(deps, id))!;
    const newer = (await claimMove(deps, id))!;
    expect(newer.run).toBe(older.run + 1);
    // A heartbeat the older run's would be told from whatever the clock says.
    const held = now - 1;
    await deps.control.update(ownerMoves).set({ heartbeatAt: held }).where(eq(ownerMoves.id, id)).run();
    await beat(deps, older);
    await jobFinished(deps, older);
    expect(await rowOf(id)).toMatchObject({ heartbeatAt: held, finishedAt: null });
    await jobFinished(deps, newer);
    expect((await rowOf(id)).finishedAt).not.toBeNull();
  });
});
