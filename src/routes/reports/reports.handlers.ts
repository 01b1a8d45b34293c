import { ownerScopeOf } from '../../domain/caller.ts';
import type { AppRouteHandler } from '../../lib/openapi.ts';
import { fromIso } from '../../lib/time.ts';
import { reportPayments as report } from '../../services/reports/report-payments.ts';
import type * as routes from './reports.routes.ts';

export const reportPayments: AppRouteHandler<typeof routes.reportPayments> = async (c) => {
  const { created_gte, created_lt, interval, group_by, tz } = c.req.valid('query');
  const deps = c.get('deps');
  const data = await report({
    deps,
    scope: ownerScopeOf(c.get('auth'), deps.environment),
    input: {
      ...(created_gte !== undefined ? { createdFrom: fromIso(created_gte) } : {}),
      ...(created_lt !== undefined ? { createdBefore: fromIso(created_lt) } : {}),
      interval,
      ...(group_by ? { groupBy: group_by } : {}),
      tz,
    },
  });
  return c.json({ data }, 200);
};
