import { ownerScopeOf } from '../../domain/caller.ts';
import { ServiceError } from '../../lib/errors.ts';
import { pageOf, paginationOf, type AppRouteHandler } from '../../lib/openapi.ts';
import { fromIso } from '../../lib/time.ts';
import { findPayment } from '../../services/payments/store.ts';
import {
  findEventOfPayment,
  listEvents as listOwnEvents,
  listPaymentEvents as listEventsOfPayment,
  redeliverEvent,
  webhookBodyOf,
  withDeliveries,
} from '../../services/webhooks/events.ts';
import type * as routes from './events.routes.ts';

export const listEvents: AppRouteHandler<typeof routes.listEvents> = async (c) => {
  const query = c.req.valid('query');
  const { type, payment_id, created_gte, created_lt } = query;
  const page = pageOf(query);
  const filters = {
    type,
    paymentId: payment_id,
    createdFrom: created_gte === undefined ? undefined : fromIso(created_gte),
    createdBefore: created_lt === undefined ? undefined : fromIso(created_lt),
  };
  const deps = c.get('deps');
  const scope = ownerScopeOf(c.get('auth'), deps.environment);
  const listed = await listOwnEvents(deps, scope, filters, page);
  return c.json({ data: listed.rows.map(webhookBodyOf), pagination: paginationOf(page, listed) }, 200);
};

export const listPaymentEvents: AppRouteHandler<typeof routes.listPaymentEvents> = async (c) => {
  const deps = c.get('deps');
  const page = pageOf(c.req.valid('query'));
  const payment = await findPayment(
    deps,
    ownerScopeOf(c.get('auth'), deps.environment),
    c.req.valid('param').payment_id,
  );
  if (!payment) throw new ServiceError('payment_not_found');
  const listed = await listEventsOfPayment(deps, payment.id, page);
  return c.json({ data: await withDeliveries(deps, listed.rows), pagination: paginationOf(page, listed) }, 200);
};

export const redeliverPaymentEvent: AppRouteHandler<typeof routes.redeliverPaymentEvent> = async (c) => {
  const deps = c.get('deps');
  const { payment_id, event_id } = c.req.valid('param');
  const payment = await findPayment(deps, ownerScopeOf(c.get('auth'), deps.environment), payment_id);
  if (!payment) throw new ServiceError('payment_not_found');
  const event = await findEventOfPayment(deps, payment.id, event_id);
  if (!event) throw new ServiceError('payment_not_found', 'No such event for this payment.');
  const redelivered = await redeliverEvent(deps, event, c.req.valid('query').destination);
  if (!redelivered.ok) {
    throw new ServiceError(
      'invalid_state_transition',
      redelivered.reason === 'endpoint_disabled'
        ? 'That webhook endpoint is disabled or deleted; enable it to receive new events.'
        : 'This event has no delivery to redeliver (the payment has no webhook_url and no endpoint took the event, or not to that destination).',
    );
  }
  const [view] = await withDeliveries(deps, [event]);
  return c.json({ data: view! }, 202);
};
