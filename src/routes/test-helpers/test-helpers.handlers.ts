import { ownerScopeOf } from '../../domain/caller.ts';
import { ServiceError } from '../../lib/errors.ts';
import type { AppRouteHandler } from '../../lib/openapi.ts';
import { simulateSandboxNotification } from '../../services/test-helpers.ts';
import { toPaymentResource } from '../../services/payments/resources.ts';
import type * as routes from './test-helpers.routes.ts';

export const simulateProcessorNotification: AppRouteHandler<typeof routes.simulateProcessorNotification> = async (
  c,
) => {
  const deps = c.get('deps');
  if (deps.environment !== 'test') throw new ServiceError('not_found');
  const { payment_id, action } = c.req.valid('param');
  const payment = await simulateSandboxNotification(
    deps,
    ownerScopeOf(c.get('auth'), deps.environment),
    payment_id,
    action,
    c.req.url,
  );
  return c.json({ data: toPaymentResource(payment) }, 200);
};
