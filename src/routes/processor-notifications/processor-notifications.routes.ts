import { createRoute, z } from '@hono/zod-openapi';
import { dataEnvelope, errorResponses, jsonContent, opaqueId } from '../../lib/openapi.ts';
import { NotificationQuery, ProcessorNotificationBody, ReceiptSchema } from './processor-notifications.schemas.ts';

export const receiveProcessorNotification = createRoute({
  operationId: 'receiveProcessorNotification',
  method: 'post',
  path: '/v1/processor-notifications/{payment_method_id}',
  tags: ['Processor notifications'],
  summary: 'Inbound processor notification (called by processors)',
  description:
    'Configure this URL at the processor for the payment method. The body is verified by the method’s connector with the processor’s own signature scheme and refused when it does not verify (`401`), except for processors that document unsigned news (Mercado Pago: QR notifications are not signed): there a notification that is unsigned or does not verify is answered `200` and not believed, the payment being read from the processor instead. Such unverifiable news costs nothing: about a payment or refund the service does not know it is answered `200` (`unknown_resource`) and not recorded; about a known one, the processor is read at most once per resource every 10 seconds (later news within them: `duplicate`); beyond 60 a minute per payment method it is answered `429 rate_limited` with `Retry-After`, and the processor sends it again later. Duplicates (same processor event id) change nothing.',
  security: [],
  request: {
    params: z.object({
      payment_method_id: opaqueId(
        'payment_method_id',
        '5b0e7c52-3f57-4b8e-9a55-0e4d7c1b2a91',
        'The payment method whose processor sends the notification (a UUID): the URL configured at the processor.',
      ),
    }),
    query: NotificationQuery,
    body: {
      // An empty body is read as `{}` (middleware/json-body.ts): some processors name the resource in the query.
      required: false,
      description: 'The processor’s notification, verified by the method’s connector with the processor’s own scheme.',
      content: { 'application/json': { schema: ProcessorNotificationBody } },
    },
  },
  responses: {
    200: jsonContent(dataEnvelope(ReceiptSchema), 'Received.'),
    ...errorResponses('unauthorized', 'payment_method_not_found', 'concurrent_update', 'rate_limited', 'owner_moving'),
  },
});
