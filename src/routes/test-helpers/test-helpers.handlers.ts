import { ownerScopeOf } from '../../domain/caller.ts';
import type { RefundFailureReason } from '../../domain/reversals.ts';
import { ServiceError } from '../../lib/errors.ts';
import type { AppRouteHandler } from '../../lib/openapi.ts';
import { failSandboxRefund, simulateSandboxNotification } from '../../services/test-helpers.ts';
import { toPaymentResource, toRefundResource } from '../../services/payments/resources.ts';
import { setSandboxTerminal } from '../../services/terminals.ts';
import { callerOf } from '../../domain/caller.ts';
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

export const simulateRefundFailure: AppRouteHandler<typeof routes.simulateRefundFailure> = async (c) => {
  const deps = c.get('deps');
  if (deps.environment !== 'test') throw new ServiceError('not_found');
  const { refund_id } = c.req.valid('param');
  // The body is optional: without one there is nothing to validate.
  const body: { reason?: RefundFailureReason } | undefined = c.req.valid('json');
  const scope = ownerScopeOf(c.get('auth'), deps.environment);
  const refund = await failSandboxRefund(deps, scope, refund_id, body?.reason, c.req.url);
  return c.json({ data: toRefundResource(refund) }, 200);
};

export const simulateTerminalStatus: AppRouteHandler<typeof routes.simulateTerminalStatus> = async (c) => {
  const deps = c.get('deps');
  if (deps.environment !== 'test') throw new ServiceError('not_found');
  const { payment_method_id } = c.req.valid('param');
  const { status } = c.req.valid('json');
  return c.json({ data: await setSandboxTerminal(deps, callerOf(c.get('auth')), payment_method_id, status) }, 200);
};
