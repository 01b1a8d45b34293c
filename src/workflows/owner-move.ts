import { WorkflowEntrypoint, type WorkflowEvent, type WorkflowStep, type WorkflowStepConfig } from 'cloudflare:workers';
import { createDeps } from '../deps.ts';
import type { Env } from '../env.ts';
import { runMove, type MoveRunner } from '../services/shards/run-move.ts';

export interface OwnerMoveParams {
  moveId: string;
}

/**
 * A step that fails (a D1 call that timed out, a restarted isolate) is tried again: every step is idempotent and
 * fenced (services/shards/move-steps.ts). After the last try the instance errors with the owner still marked; the
 * cron starts it again (services/shards/move-owner.ts, `resumeMoves`), as it does an instance silent longer than
 * `MOVE_SILENCE_MS` whatever it reports, and so does the same `PUT .../placement`; a move back to the origin cancels it.
 */
const STEP: WorkflowStepConfig = {
  retries: { limit: 8, delay: '5 seconds', backoff: 'exponential' },
  timeout: '10 minutes',
};

/** The durable job of one owner move (wrangler.toml `OWNER_MOVES`); the instance id is the move's id. */
export class OwnerMoveWorkflow extends WorkflowEntrypoint<Env, OwnerMoveParams> {
  override async run(event: WorkflowEvent<OwnerMoveParams>, step: WorkflowStep) {
    const runner: MoveRunner = {
      // Every step's result is a plain object of strings, numbers and booleans, which the platform keeps.
      do: <T>(name: string, run: () => Promise<T>) =>
        step.do(name, STEP, run as () => Promise<Rpc.Serializable<T>>) as Promise<T>,
      sleep: (name, ms) => step.sleep(name, ms),
    };
    return runMove(runner, createDeps(this.env), event.payload.moveId);
  }
}
