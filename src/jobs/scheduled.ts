import { createDeps } from '../deps.ts';
import type { Env } from '../env.ts';
import { errorFields, log } from '../lib/log.ts';
import { runDisputeChecks } from './dispute-checks.ts';
import { expireQrPayments } from './expire-qr-payments.ts';
import { reconcile } from './reconcile.ts';
import { relayOverdueWebhooks } from './relay-webhooks.ts';
import { runSettlementChecks } from './settlement-checks.ts';
import { runTerminalChecks } from './terminal-checks.ts';
import { resumeMoves } from '../services/shards/move-owner.ts';

/**
 * The cron trigger (every minute): the jobs run on every shard, each with its own bounded work per tick (the
 * jobs' limits are per shard), so a busy shard never starves another. Each job on each shard is independent:
 * one failing does not stop the others.
 */
export async function runScheduledJobs(env: Env, now: number) {
  const base = createDeps(env);
  // Owner moves whose durable job gave up or went silent are started again (services/shards/move-owner.ts).
  const moves = settled('control', resumeMoves(base, now));
  const perShard = await Promise.all(
    base.shards.map(async ({ name }) => {
      const deps = base.withShard(name);
      const [expired, reconciled, relayed, terminalChecks, disputeChecks, settlementChecks] = await Promise.all([
        settled(name, expireQrPayments(deps, now)),
        settled(name, reconcile(deps, now)),
        settled(name, relayOverdueWebhooks(deps, now)),
        settled(name, runTerminalChecks(deps, now)),
        settled(name, runDisputeChecks(deps, now)),
        settled(name, runSettlementChecks(deps, now)),
      ]);
      return { shard: name, expired, reconciled, relayed, terminalChecks, disputeChecks, settlementChecks };
    }),
  );
  log('info', 'scheduled_jobs', { shards: perShard, unfinished_moves: await moves });
  return perShard;
}

/** A job's result, or null when it failed (logged with its shard). */
function settled<T>(shard: string, job: Promise<T>): Promise<T | null> {
  return job.catch((error: unknown) => {
    log('error', 'scheduled_job_failed', { shard, ...errorFields(error) });
    return null;
  });
}
