import { callerOf, ownerScopeOf } from '../../domain/caller.ts';
import type { RefundFailureReason } from '../../domain/reversals.ts';
import type { AppRouteHandler } from '../../lib/openapi.ts';
import {
  closeSandboxDisputeOf,
  failSandboxRefund,
  openSandboxDisputeOf,
  simulateSandboxNotification,
} from '../../services/test-helpers.ts';
import { toDisputeResource, toPaymentResource, toRefundResource } from '../../services/payments/resources.ts';
import { setSandboxTerminal } from '../../services/terminals.ts';
import type * as routes from './test-helpers.routes.ts';

// Routed in `test` deployments only (app.ts): a live deployment has no simulator.

export const simulateProcessorNotification: AppRouteHandler<typeof routes.simulateProcessorNotification> = async (
  c,
) => {
  const deps = c.get('deps');
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
  const { refund_id } = c.req.valid('param');
  // The body is optional: without one there is nothing to validate.
  const body: { reason?: RefundFailureReason } | undefined = c.req.valid('json');
  const scope = ownerScopeOf(c.get('auth'), deps.environment);
  const refund = await failSandboxRefund(deps, scope, refund_id, body?.reason, c.req.url);
  return c.json({ data: toRefundResource(refund) }, 200);
};

export const simulateDispute: AppRouteHandler<typeof routes.simulateDispute> = async (c) => {
  const deps = c.get('deps');
  const { payment_id } = c.req.valid('param');
  // The body is optional: without one, the payment's whole amount is disputed as `fraudulent`.
  const body: routes.OpenDisputeInput | undefined = c.req.valid('json');
  const scope = ownerScopeOf(c.get('auth'), deps.environment);
  const dispute = await openSandboxDisputeOf(deps, scope, payment_id, body ?? {}, c.req.url);
  return c.json({ data: toDisputeResource(dispute) }, 200);
};

export const simulateDisputeClose: AppRouteHandler<typeof routes.simulateDisputeClose> = async (c) => {
  const deps = c.get('deps');
  const { dispute_id } = c.req.valid('param');
  const { outcome } = c.req.valid('json');
  const scope = ownerScopeOf(c.get('auth'), deps.environment);
  const dispute = await closeSandboxDisputeOf(deps, scope, dispute_id, outcome, c.req.url);
  return c.json({ data: toDisputeResource(dispute) }, 200);
};

export const simulateTerminalStatus: AppRouteHandler<typeof routes.simulateTerminalStatus> = async (c) => {
  const deps = c.get('deps');
  const { payment_method_id } = c.req.valid('param');
  const { status } = c.req.valid('json');
  return c.json({ data: await setSandboxTerminal(deps, callerOf(c.get('auth')), payment_method_id, status) }, 200);
};
