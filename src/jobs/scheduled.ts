import { createDeps } from '../deps.ts';
import type { Env } from '../env.ts';
import { errorFields, log } from '../lib/log.ts';
import { expireQrPayments } from './expire-qr-payments.ts';
import { reconcile } from './reconcile.ts';
import { relayOverdueWebhooks } from './relay-webhooks.ts';
import { runTerminalChecks } from './terminal-checks.ts';

/** The cron trigger (every minute). Each job is independent: one failing does not stop the others. */
export async function runScheduledJobs(env: Env, now: number) {
  const deps = createDeps(env);
  const results = await Promise.allSettled([
    expireQrPayments(deps, now),
    reconcile(deps, now),
    relayOverdueWebhooks(deps, now),
    runTerminalChecks(deps, now),
  ]);
  const [expired, reconciled, relayed, terminalChecks] = results.map((r) =>
    r.status === 'fulfilled' ? r.value : null,
  );
  for (const r of results) if (r.status === 'rejected') log('error', 'scheduled_job_failed', errorFields(r.reason));
  log('info', 'scheduled_jobs', { expired, reconciled, relayed, terminal_checks: terminalChecks });
  return { expired, reconciled, relayed, terminalChecks };
}
