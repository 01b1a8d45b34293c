import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../env.ts';
import { D1_STATS_HEADER, d1StatsEnabled, formatD1Stats, withD1Stats } from '../lib/d1-stats.ts';

/**
 * Under `npm run bench` only (BENCH_D1_STATS=true): the request runs on a metered `env.DB` and answers
 * with its D1 totals in `X-D1-Stats`, the idempotency object's share included (see runIdempotent).
 * Otherwise it only passes the request on.
 */
export const d1StatsHeader: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (!d1StatsEnabled(c.env)) return next();
  const metered = withD1Stats(c.env);
  c.env = metered.env;
  if (metered.stats) c.set('d1Stats', metered.stats);
  await next();
  const value = formatD1Stats(metered.stats!);
  try {
    c.res.headers.set(D1_STATS_HEADER, value);
  } catch {
    // Immutable headers (a response passed through from a binding): copy it once.
    c.res = new Response(c.res.body, c.res);
    c.res.headers.set(D1_STATS_HEADER, value);
  }
};
