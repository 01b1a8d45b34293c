import { describe, expect, it } from 'vitest';
import { call, expectError, type ApiResponse } from '../helpers/api.ts';
import { paymentBody, postIdempotent, setupMerchant } from '../helpers/merchant.ts';

/**
 * Reads go through a D1 session (read replication). A write answers with a bookmark past its writes; a
 * read sent with it sees them (from any replica that caught up), a read without one goes to the primary.
 */
describe('X-Read-Bookmark', () => {
  it('a create answers with a bookmark; a read sent with it finds the payment and answers a bookmark of its own', async () => {
    const m = await setupMerchant();
    const created = await m.pay(paymentBody(m.pos.id, '17.00'));
    expect(created.status).toBe(201);
    const written = created.headers.get('x-read-bookmark');
    expect(written).toMatch(/^[A-Za-z0-9._:-]+$/);

    const read = await call('GET', `/v1/payments/${created.body.data.id}`, {
      token: m.key.secret,
      headers: { 'X-Read-Bookmark': written! },
    });
    expect(read.status, read.text).toBe(200);
    expect(read.body.data.id).toBe(created.body.data.id);
    expect(read.headers.get('x-read-bookmark')).toMatch(/^[A-Za-z0-9._:-]+$/);
  });

  it('a read without a bookmark reads at the primary: a write just made is there', async () => {
    const m = await setupMerchant();
    const created = await m.pay(paymentBody(m.pos.id, '18.00'));
    const read = await call('GET', `/v1/payments/${created.body.data.id}`, { token: m.key.secret });
    expect(read.status).toBe(200);
    expect(read.headers.get('x-read-bookmark')).toBeTruthy();
  });

  it('a replayed create, refund and cancel answer with a bookmark as a fresh one does; reads sent with it see the writes', async () => {
    const m = await setupMerchant();
    const BOOKMARK = /^[A-Za-z0-9._:-]+$/;
    const replayed = async (send: () => Promise<ApiResponse>) => {
      const fresh = await send();
      expect(fresh.headers.get('idempotent-replayed'), fresh.text).toBeNull();
      expect(fresh.headers.get('x-read-bookmark')).toMatch(BOOKMARK);
      const again = await send();
      expect(again.status).toBe(fresh.status);
      expect(again.text).toBe(fresh.text);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.headers.get('x-read-bookmark')).toMatch(BOOKMARK);
      return again;
    };
    const body = paymentBody(m.pos.id, '19.00');
    const paymentKey = crypto.randomUUID();
    const created = await replayed(() => m.pay(body, paymentKey));
    const paymentId = created.body.data.id;
    const refundKey = crypto.randomUUID();
    const refund = await replayed(() =>
      postIdempotent(
        `/v1/payments/${paymentId}/refunds`,
        m.key.secret,
        { amount: { value: '4.00', currency: 'USD' } },
        refundKey,
      ),
    );
    const read = await call('GET', `/v1/payments/${paymentId}/refunds/${refund.body.data.id}`, {
      token: m.key.secret,
      headers: { 'X-Read-Bookmark': refund.headers.get('x-read-bookmark')! },
    });
    expect(read.status, read.text).toBe(200);

    const qr = await m.pay(paymentBody(m.qr.id, '20.00'));
    const cancelKey = crypto.randomUUID();
    const canceled = await replayed(() =>
      postIdempotent(`/v1/payments/${qr.body.data.id}/cancel`, m.key.secret, undefined, cancelKey),
    );
    const after = await call('GET', `/v1/payments/${qr.body.data.id}`, {
      token: m.key.secret,
      headers: { 'X-Read-Bookmark': canceled.headers.get('x-read-bookmark')! },
    });
    expect(after.body.data.status).toBe('canceled');
  });

  it.each(['', 'not a bookmark', 'x'.repeat(257), '<script>'])(
    'refuses %j with 400 invalid_request naming the header, without echoing it',
    async (bad) => {
      const m = await setupMerchant();
      const res = await call('GET', '/v1/payments', { token: m.key.secret, headers: { 'X-Read-Bookmark': bad } });
      const error = expectError(res, 400, 'invalid_request');
      expect(error.details).toEqual({ fields: [{ field: 'X-Read-Bookmark', issue: expect.any(String) }] });
      if (bad !== '') expect(res.text).not.toContain(bad);
      expect(res.headers.get('x-request-id')).toBe(error.request_id);
    },
  );
});
