import { shardDbOf, depsOfOwner } from '../helpers/shards.ts';
import { beforeAll, describe, expect, it } from 'vitest';
import { reconcile } from '../../src/jobs/reconcile.ts';
import { newId } from '../../src/lib/ids.ts';
import { call, createKey, expectError } from '../helpers/api.ts';
import {
  approvedRefundTotal,
  paymentBody,
  postIdempotent,
  refundRows,
  setupMerchant,
  type Merchant,
  insertPendingRefund,
} from '../helpers/merchant.ts';
import { expectIndistinguishable, fieldsOf } from '../helpers/methods.ts';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const REFUND_FIELDS = [
  'amount',
  'created_at',
  'failure_reason',
  'id',
  'payment_id',
  'processor_reference',
  'reason',
  'settlement',
  'settlement_null_reason',
  'status',
  'updated_at',
];

const getPayment = (id: string, token: string) => call('GET', `/v1/payments/${id}`, { token });
const refund = (id: string, token: string, body: unknown, key: string = crypto.randomUUID()) =>
  postIdempotent(`/v1/payments/${id}/refunds`, token, body, key);
const usd = (value: string, extra: Record<string, unknown> = {}) => ({ amount: { value, currency: 'USD' }, ...extra });

let m: Merchant;
let other: Merchant;

beforeAll(async () => {
  [m, other] = await Promise.all([setupMerchant(), setupMerchant()]);
});

async function approvedPayment(value = '100.00', merchant: Merchant = m): Promise<string> {
  const res = await merchant.pay(paymentBody(merchant.pos.id, value));
  if (res.status !== 201 || res.body.data.status !== 'approved')
    throw new Error(`payment not approved: ${res.status} ${res.text}`);
  return res.body.data.id;
}

describe('createRefund', () => {
  it('a partial refund is approved and the payment becomes partially_refunded; the rest makes it refunded', async () => {
    const id = await approvedPayment('100.00');
    const before = await getPayment(id, m.key.secret);
    const partial = await refund(id, m.key.secret, usd('30.00', { reason: 'Returned one item' }));
    expect(partial.status, partial.text).toBe(201);
    expect(Object.keys(partial.body.data).sort()).toEqual(REFUND_FIELDS);
    expect(partial.body.data).toMatchObject({
      payment_id: id,
      status: 'approved',
      amount: { value: '30.00', currency: 'USD' },
      reason: 'Returned one item',
    });
    expect(partial.body.data.processor_reference).toEqual(expect.any(String));
    expect(partial.body.data.created_at).toMatch(ISO_MS);
    expect(partial.text).not.toContain(m.pos.apiKey);

    const afterPartial = await getPayment(id, m.key.secret);
    expect(afterPartial.body.data.status).toBe('partially_refunded');
    expect(Date.parse(afterPartial.body.data.updated_at)).toBeGreaterThan(Date.parse(before.body.data.updated_at));

    const second = await refund(id, m.key.secret, usd('20'));
    expect(second.body.data.status).toBe('approved');
    expect(second.body.data.amount.value).toBe('20.00');
    expect((await getPayment(id, m.key.secret)).body.data.status).toBe('partially_refunded');

    const rest = await refund(id, m.key.secret, usd('50.00'));
    expect(rest.status, rest.text).toBe(201);
    expect(rest.body.data.status).toBe('approved');
    const final = await getPayment(id, m.key.secret);
    expect(final.body.data.status).toBe('refunded');
    expect(Date.parse(final.body.data.updated_at)).toBeGreaterThan(Date.parse(afterPartial.body.data.updated_at));
    expect(await approvedRefundTotal(id)).toBe(10000);

    // A refunded payment is past refunds (docs/states.md: only approved and partially_refunded): 409.
    const nothing = expectError(await refund(id, m.key.secret, usd('0.01')), 409, 'invalid_state_transition');
    expect(nothing.details).toEqual({ status: 'refunded' });
  });

  it('a refund over the balance is 422 refund_exceeds_balance and changes nothing', async () => {
    const id = await approvedPayment('50.00');
    const over = expectError(await refund(id, m.key.secret, usd('50.01')), 422, 'refund_exceeds_balance');
    expect(over.category).toBe('validation');
    expect(over.retryable).toBe(false);
    expect(over.details).toEqual({ refundable_balance: { value: '50.00', currency: 'USD' } });
    expect((await refund(id, m.key.secret, usd('20.00'))).body.data.status).toBe('approved');
    const rest = expectError(await refund(id, m.key.secret, usd('30.01')), 422, 'refund_exceeds_balance');
    expect(rest.details).toEqual({ refundable_balance: { value: '30.00', currency: 'USD' } });
    expect((await getPayment(id, m.key.secret)).body.data.status).toBe('partially_refunded');
    expect(await approvedRefundTotal(id)).toBe(2000);
    expect(await refundRows(id)).toHaveLength(1);
    // A full refund is the whole remaining balance.
    expect((await refund(id, m.key.secret, usd('30.00'))).body.data.status).toBe('approved');
    expect((await getPayment(id, m.key.secret)).body.data.status).toBe('refunded');
  });

  it('a pending, declined, failed or canceled payment cannot be refunded (409 invalid_state_transition)', async () => {
    const pending = await m.pay(paymentBody(m.qr.id, '10.00'));
    const declined = await m.pay(paymentBody(m.pos.id, '10.51'));
    const failed = await m.pay(paymentBody(m.pos.id, '10.54'));
    const canceled = await m.pay(paymentBody(m.pos.id, '10.00'));
    expect((await postIdempotent(`/v1/payments/${canceled.body.data.id}/cancel`, m.key.secret)).body.data.status).toBe(
      'canceled',
    );
    for (const [payment, status] of [
      [pending, 'pending'],
      [declined, 'declined'],
      [failed, 'failed'],
      [canceled, 'canceled'],
    ] as const) {
      const error = expectError(
        await refund(payment.body.data.id, m.key.secret, usd('1.00')),
        409,
        'invalid_state_transition',
      );
      expect(error.category).toBe('conflict');
      expect(error.details).toEqual({ status });
      expect(await refundRows(payment.body.data.id)).toHaveLength(0);
      expect((await getPayment(payment.body.data.id, m.key.secret)).body.data.status).toBe(status);
    }
  });

  it('a currency other than the payment’s is 422 unsupported_currency', async () => {
    const id = await approvedPayment('10.00');
    const error = expectError(
      await refund(id, m.key.secret, { amount: { value: '1.00', currency: 'EUR' } }),
      422,
      'unsupported_currency',
    );
    expect(error.category).toBe('validation');
    expectError(await refund(id, m.key.secret, { amount: { value: '1.00', currency: 'usd' } }), 400, 'invalid_request');
    expect(await refundRows(id)).toHaveLength(0);
  });

  it('refuses malformed amounts with 400 naming amount.value', async () => {
    const id = await approvedPayment('10.00');
    for (const value of ['0', '0.00', '-1', '1.001', '1e1', 1]) {
      const res = await refund(id, m.key.secret, { amount: { value, currency: 'USD' } });
      expectError(res, 400, 'invalid_request');
      expect(JSON.stringify(res.body.error.details)).toContain('amount.value');
    }
    expectError(
      await refund(id, m.key.secret, { amount: { value: '1.00', currency: 'USD' }, extra: 1 }),
      400,
      'invalid_request',
    );
    expectError(await refund(id, m.key.secret, {}), 400, 'invalid_request');
    expect(await refundRows(id)).toHaveLength(0);
  });

  it('.61 is declined (201) and releases its amount: a full refund afterwards is approved', async () => {
    const id = await approvedPayment('100.00');
    const declined = await refund(id, m.key.secret, usd('40.61'));
    expect(declined.status, declined.text).toBe(201);
    expect(declined.body.data.status).toBe('declined');
    expect((await getPayment(id, m.key.secret)).body.data.status).toBe('approved');
    expect(await approvedRefundTotal(id)).toBe(0);

    const full = await refund(id, m.key.secret, usd('100.00'));
    expect(full.status, full.text).toBe(201);
    expect(full.body.data.status).toBe('approved');
    expect((await getPayment(id, m.key.secret)).body.data.status).toBe('refunded');
    expect(await approvedRefundTotal(id)).toBe(10000);
  });

  it('the same key and body replay the refund byte for byte; another body is 409 idempotency_key_reused', async () => {
    const id = await approvedPayment('100.00');
    const key = crypto.randomUUID();
    const first = await refund(id, m.key.secret, usd('10.00'), key);
    expect(first.status).toBe(201);
    const again = await refund(id, m.key.secret, usd('10.00'), key);
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    // Key order does not matter.
    const reordered = await refund(id, m.key.secret, { amount: { currency: 'USD', value: '10.00' } }, key);
    expect(reordered.text).toBe(first.text);

    const reused = expectError(await refund(id, m.key.secret, usd('10.01'), key), 409, 'idempotency_key_reused');
    expect(reused.category).toBe('conflict');
    expect(reused.retryable).toBe(false);
    expectError(await refund(id, m.key.secret, usd('10.00', { reason: 'other' }), key), 409, 'idempotency_key_reused');
    // The same key on another payment is another request (the path is part of it).
    const otherPayment = await approvedPayment('100.00');
    expectError(await refund(otherPayment, m.key.secret, usd('10.00'), key), 409, 'idempotency_key_reused');

    expect(await refundRows(id)).toHaveLength(1);
    expect(await approvedRefundTotal(id)).toBe(1000);
  });

  it('a declined refund is replayed too', async () => {
    const id = await approvedPayment('100.00');
    const key = crypto.randomUUID();
    const first = await refund(id, m.key.secret, usd('1.61'), key);
    expect(first.body.data.status).toBe('declined');
    const again = await refund(id, m.key.secret, usd('1.61'), key);
    expect(again.text).toBe(first.text);
    expect(await refundRows(id)).toHaveLength(1);
  });

  it('needs an Idempotency-Key and refunds:create', async () => {
    const id = await approvedPayment('10.00');
    expectError(
      await call('POST', `/v1/payments/${id}/refunds`, { token: m.key.secret, body: usd('1.00') }),
      400,
      'idempotency_key_required',
    );
    const key = await createKey(m.session, ['payments:read', 'payments:create']);
    expectError(await refund(id, key.secret, usd('1.00')), 403, 'insufficient_scope');
    expect(await refundRows(id)).toHaveLength(0);
  });

  it('a user token refunds its own payment', async () => {
    const id = await approvedPayment('10.00');
    const res = await refund(id, m.session.accessToken, usd('10.00'));
    expect(res.status, res.text).toBe(201);
    expect(res.body.data.status).toBe('approved');
    expect((await getPayment(id, m.key.secret)).body.data.status).toBe('refunded');
  });

  it('another owner’s payment answers exactly like a random id', async () => {
    const foreign = await approvedPayment('10.00', other);
    const random = await refund(newId('pay'), m.key.secret, usd('1.00'));
    const error = expectError(random, 404, 'payment_not_found');
    expect(error.category).toBe('not_found');
    expectIndistinguishable(await refund(foreign, m.key.secret, usd('1.00')), random);
    expectIndistinguishable(await refund(foreign, m.session.accessToken, usd('1.00')), random);
    // Even with a body that would be refused for the own payment.
    expectIndistinguishable(await refund(foreign, m.key.secret, usd('99.00')), random);
    expect(await refundRows(foreign)).toHaveLength(0);
  });
});

describe('createRefund under concurrency', () => {
  it('50 refunds of a tenth with distinct keys at once: exactly 10 approved, 40 refused, refunded, balance zero', async () => {
    const id = await approvedPayment('100.00');
    const answers = await Promise.all(Array.from({ length: 50 }, () => refund(id, m.key.secret, usd('10.00'))));
    const approved = answers.filter((a) => a.status === 201);
    const refused = answers.filter((a) => a.status !== 201);
    expect(approved).toHaveLength(10);
    for (const a of approved) expect(a.body.data.status).toBe('approved');
    expect(refused).toHaveLength(40);
    // Decided while the last refunds were still in flight: no balance left (422); decided after the
    // payment became `refunded`: a wrong state (409).
    for (const a of refused) {
      if (a.status === 422) expectError(a, 422, 'refund_exceeds_balance');
      else expectError(a, 409, 'invalid_state_transition');
    }
    expect(new Set(approved.map((a) => a.body.data.id)).size).toBe(10);

    const read = await getPayment(id, m.key.secret);
    expect(read.body.data.status).toBe('refunded');
    expect(await approvedRefundTotal(id)).toBe(10000);
    const rows = await refundRows(id);
    expect(rows).toHaveLength(10);
    expect(rows.every((r) => r.status === 'approved')).toBe(true);
  });

  it('concurrent refunds mixing declines never exceed the amount, and a decline frees its share', async () => {
    const id = await approvedPayment('100.00');
    // 10 x 10.00 approved and 5 x 10.61 declined compete for 100.00.
    const bodies = [
      ...Array.from({ length: 10 }, () => usd('10.00')),
      ...Array.from({ length: 5 }, () => usd('10.61')),
    ];
    const answers = await Promise.all(bodies.map((body) => refund(id, m.key.secret, body)));
    // 409: decided after the payment became `refunded` (see the test above).
    for (const a of answers) expect([201, 409, 422]).toContain(a.status);
    const approved = answers.filter((a) => a.status === 201 && a.body.data.status === 'approved');
    const total = await approvedRefundTotal(id);
    expect(total).toBe(approved.reduce((sum, a) => sum + Number(String(a.body.data.amount.value).replace('.', '')), 0));
    expect(total).toBeLessThanOrEqual(10000);
    // Whatever was refused while a decline held its reservation can be refunded now.
    const remaining = 10000 - total;
    if (remaining > 0) {
      const rest = await refund(
        id,
        m.key.secret,
        usd(`${Math.floor(remaining / 100)}.${String(remaining % 100).padStart(2, '0')}`),
      );
      expect(rest.body.data.status).toBe('approved');
    }
    expect((await getPayment(id, m.key.secret)).body.data.status).toBe('refunded');
    expect(await approvedRefundTotal(id)).toBe(10000);
  });

  it('50 identical concurrent refunds with one key are one refund', async () => {
    const id = await approvedPayment('100.00');
    const key = crypto.randomUUID();
    const answers = await Promise.all(Array.from({ length: 50 }, () => refund(id, m.key.secret, usd('10.00'), key)));
    expect(new Set(answers.map((a) => a.status))).toEqual(new Set([201]));
    expect(new Set(answers.map((a) => a.text)).size).toBe(1);
    expect(await refundRows(id)).toHaveLength(1);
    expect(await approvedRefundTotal(id)).toBe(1000);
  });
});

describe('listRefunds and getRefund', () => {
  const listRefunds = (paymentId: string, token: string, query = '') =>
    call('GET', `/v1/payments/${paymentId}/refunds${query ? `?${query}` : ''}`, { token });
  const getRefund = (paymentId: string, refundId: string, token: string) =>
    call('GET', `/v1/payments/${paymentId}/refunds/${refundId}`, { token });

  /** A refund the processor has not settled yet, as a timeout leaves it (the reconciliation job settles it). */
  async function pendingRefund(paymentId: string, amountMinor: number, at: number) {
    const id = newId('ref');
    const ownerId = m.session.user.id;
    const d1 = await shardDbOf(ownerId);
    return insertPendingRefund(d1, { paymentId, ownerId, amountMinor, processorReference: `sbx_ref_${id}`, at }, id);
  }

  it('lists a payment’s refunds newest first, each as createRefund answered it, paged', async () => {
    const id = await approvedPayment('100.00');
    const made = [];
    for (const value of ['10.00', '10.61', '20.00'])
      made.push((await refund(id, m.key.secret, usd(value, { reason: `r ${value}` }))).body.data);
    const res = await listRefunds(id, m.key.secret);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      data: [...made].reverse(),
      pagination: { limit: 50, offset: 0, total: 3, has_more: false },
    });
    expect(res.body.data.map((r: { status: string }) => r.status)).toEqual(['approved', 'declined', 'approved']);
    const page = await listRefunds(id, m.key.secret, 'limit=1&offset=1');
    expect(page.body).toEqual({ data: [made[1]], pagination: { limit: 1, offset: 1, total: 3, has_more: true } });
    expect((await listRefunds(id, m.key.secret, 'offset=10')).body).toEqual({
      data: [],
      pagination: { limit: 50, offset: 10, total: 3, has_more: false },
    });
    // A payment with no refund: an empty page, not an error.
    const untouched = await approvedPayment('5.00');
    expect((await listRefunds(untouched, m.session.accessToken)).body).toEqual({
      data: [],
      pagination: { limit: 50, offset: 0, total: 0, has_more: false },
    });
    for (const query of ['limit=0', 'limit=101', 'offset=-1']) {
      const bad = await listRefunds(id, m.key.secret, query);
      expectError(bad, 400, 'invalid_request');
      expect(fieldsOf(bad)).toEqual([`query.${query.split('=')[0]}`]);
    }
  });

  it('reads one refund; a pending one is followed to its outcome', async () => {
    const id = await approvedPayment('100.00');
    const created = (await refund(id, m.key.secret, usd('30.00'))).body.data;
    const read = await getRefund(id, created.id, m.key.secret);
    expect(read.status, read.text).toBe(200);
    expect(read.body).toEqual({ data: created });
    expect((await getRefund(id, created.id, m.session.accessToken)).body).toEqual({ data: created });

    const pending = await pendingRefund(id, 2000, Date.now() - 3_600_000);
    const before = await getRefund(id, pending, m.key.secret);
    expect(before.body.data).toMatchObject({
      id: pending,
      payment_id: id,
      status: 'pending',
      amount: { value: '20.00', currency: 'USD' },
    });
    await reconcile(await depsOfOwner(m.session.user.id), Date.now(), 10_000);
    const after = await getRefund(id, pending, m.key.secret);
    expect(after.body.data.status).toBe('approved');
    expect(Date.parse(after.body.data.updated_at)).toBeGreaterThan(Date.parse(before.body.data.updated_at));
    // Created an hour before the other: listed after it.
    expect((await listRefunds(id, m.key.secret)).body.data.map((r: { id: string }) => r.id)).toEqual([
      created.id,
      pending,
    ]);
  });

  it('a payment that is missing or another owner’s is 404 payment_not_found, alike', async () => {
    const mine = await approvedPayment('50.00');
    const myRefund = (await refund(mine, m.key.secret, usd('1.00'))).body.data.id as string;
    const theirs = await approvedPayment('50.00', other);
    const theirRefund = (await refund(theirs, other.key.secret, usd('1.00'))).body.data.id as string;
    const randomPayment = newId('pay');

    const randomList = await listRefunds(randomPayment, m.key.secret);
    expectError(randomList, 404, 'payment_not_found');
    expectIndistinguishable(await listRefunds(theirs, m.key.secret), randomList);
    expectIndistinguishable(await listRefunds(theirs, m.session.accessToken), randomList);

    const randomGet = await getRefund(randomPayment, myRefund, m.key.secret);
    expectError(randomGet, 404, 'payment_not_found');
    expectIndistinguishable(await getRefund(theirs, theirRefund, m.key.secret), randomGet);
    expectIndistinguishable(await getRefund(theirs, newId('ref'), m.key.secret), randomGet);
  });

  it('a refund that is missing or not of that payment is 404 refund_not_found, alike', async () => {
    const mine = await approvedPayment('50.00');
    const sibling = await approvedPayment('50.00');
    const siblingRefund = (await refund(sibling, m.key.secret, usd('1.00'))).body.data.id as string;
    const theirs = await approvedPayment('50.00', other);
    const theirRefund = (await refund(theirs, other.key.secret, usd('1.00'))).body.data.id as string;

    const random = await getRefund(mine, newId('ref'), m.key.secret);
    const error = expectError(random, 404, 'refund_not_found');
    expect(error).toMatchObject({ category: 'not_found', retryable: false, details: {} });
    // Another payment's refund (same owner), and another owner's refund, under my payment.
    expectIndistinguishable(await getRefund(mine, siblingRefund, m.key.secret), random);
    expectIndistinguishable(await getRefund(mine, theirRefund, m.key.secret), random);
    expectIndistinguishable(await getRefund(mine, 'x'.repeat(128), m.key.secret), random);
  });

  it('needs payments:read with an API key', async () => {
    const id = await approvedPayment('20.00');
    const created = (await refund(id, m.key.secret, usd('1.00'))).body.data.id as string;
    const refunder = await createKey(m.session, ['refunds:create']);
    for (const res of [await listRefunds(id, refunder.secret), await getRefund(id, created, refunder.secret)]) {
      expect(expectError(res, 403, 'insufficient_scope').details).toEqual({ required_scope: 'payments:read' });
    }
    expectError(await call('GET', `/v1/payments/${id}/refunds`), 401, 'unauthorized');
    expectError(await call('GET', `/v1/payments/${id}/refunds/${created}`), 401, 'unauthorized');
  });
});
