import { dataPlane } from '../helpers/shards.ts';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, expectError } from '../helpers/api.ts';
import { paymentBody, paymentRowsByReference, setupMerchant, type Merchant } from '../helpers/merchant.ts';
import {
  consumeOnce,
  deliveryRow,
  eventIdsOf,
  receiver,
  REFUSED_WEBHOOK_URLS as REFUSED,
  webhookTestSetup,
} from '../helpers/webhooks.ts';

/**
 * Server-side request forgery through `webhook_url` (docs/limits.md, "Webhook URLs"), through the API:
 * every spelling of an address the service must not call is refused on creation (400 naming
 * webhook_url, nothing recorded), and again before each delivery.
 * (The same table is run against webhook endpoints in test/routes/webhook-endpoints.test.ts.)
 */

let m: Merchant;
const hooks = webhookTestSetup();

beforeAll(async () => {
  m = await setupMerchant();
});

describe('webhook_url on POST /v1/payments', () => {
  it.each(REFUSED)('%s → 400 invalid_request naming webhook_url, nothing created', async (url) => {
    const body = paymentBody(m.pos.id, '30.00', { webhook_url: url });
    const res = await m.pay(body);
    const error = expectError(res, 400, 'invalid_request');
    expect((error.details.fields as { field: string }[]).map((f) => f.field)).toContain('webhook_url');
    // The refusal does not echo the URL back.
    expect(res.text).not.toContain(url);
    expect(await paymentRowsByReference(body.external_reference)).toEqual([]);
  });

  it('https://hooks.example.com/webhooks is accepted (201) and stored as given', async () => {
    const res = await m.pay(paymentBody(m.qr.id, '30.00', { webhook_url: 'https://hooks.example.com/webhooks' }));
    expect(res.status, res.text).toBe(201);
    expect(res.body.data.webhook_url).toBe('https://hooks.example.com/webhooks');
  });
});

describe('checked again before each delivery', () => {
  it.each([
    'https://127.1/hook',
    'https://169.254.169.254/latest/meta-data/',
    'http://hooks.example.com/webhooks',
    'https://[::ffff:10.0.0.1]/',
  ])('a stored URL changed to %s: no fetch, attempt recorded as url_refused, delivery dead', async (blocked) => {
    const created = await m.pay(paymentBody(m.qr.id, '31.00', { webhook_url: 'https://hooks.example.com/webhooks' }));
    expect(created.status).toBe(201);
    const [eventId] = await eventIdsOf(created.body.data.id);
    await dataPlane.prepare('UPDATE webhook_deliveries SET url = ? WHERE event_id = ?').bind(blocked, eventId).run();
    hooks.rx = receiver();
    const round = await consumeOnce(hooks.queue.pending.splice(0));
    expect(round.acked).toEqual([eventId]);
    expect(round.retried).toEqual([]);
    expect(hooks.rx.requests).toEqual([]);
    expect(await deliveryRow(eventId!)).toMatchObject({
      status: 'dead',
      attempts: 1,
      last_error: 'url_refused',
      last_status_code: null,
      next_attempt_at: null,
    });
    const listed = await call('GET', `/v1/payments/${created.body.data.id}/events`, { token: m.key.secret });
    expect(listed.body.data[0].delivery).toMatchObject({ status: 'dead', last_error: 'url_refused' });
    expect(listed.body.data[0].delivery.attempt_log).toMatchObject([
      { attempt: 1, status_code: null, error: 'url_refused' },
    ]);
  });
});
