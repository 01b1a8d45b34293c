import type { AppRouteHandler } from '../../lib/openapi.ts';
import * as notifications from '../../services/payments/processor-notifications.ts';
import type * as routes from './processor-notifications.routes.ts';

export const receiveProcessorNotification: AppRouteHandler<typeof routes.receiveProcessorNotification> = async (c) => {
  const outcome = await notifications.receiveProcessorNotification(
    c.get('deps'),
    c.req.valid('param').payment_method_id,
    {
      headers: c.req.raw.headers,
      // The text as sent, kept by the input gate (middleware/json-body.ts): the signature is checked over it.
      rawBody: c.get('body')?.text ?? '',
      url: c.req.url,
    },
  );
  return c.json({ data: { received: true as const, outcome } }, 200);
};
