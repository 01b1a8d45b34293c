import { beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.ts';
import { UNAVAILABLE_RETRY_AFTER_SECONDS } from '../../src/middleware/request-context.ts';
import { call, createKey, expectError, type ApiResponse } from '../helpers/api.ts';
import {
  addSandboxMethod,
  linkMethod,
  newReference,
  paymentBody,
  paymentRow,
  paymentRowsByReference,
  postIdempotent,
  SANDBOX_POS,
  setupMerchant,
  type Merchant,
} from '../helpers/merchant.ts';
import { expectIndistinguishable, fieldsOf, withoutRequestId } from '../helpers/methods.ts';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const PAYMENT_FIELDS = [
  'amount',
  'cancel_requested_at',
  'charged_back_at',
  'created_at',
  'description',
  'external_reference',
  'id',
  'metadata',
  'payment_method',
  'processor_reference',
  'settlement',
  'settlement_null_reason',
  'status',
  'updated_at',
  'webhook_url',
];

async function sha256Hex(text: string) {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** The sandbox derives its payment reference from our processor idempotency key. */
const sandboxReferenceFor = async (processorIdempotencyKey: string) =>
  `sbx_pay_${(await sha256Hex(processorIdempotencyKey)).slice(0, 24)}`;

function expectUsualPos(res: ApiResponse) {
  expect(res.status, res.text).toBe(201);
  expect(res.body.data.status).toBe('approved');
  expect(res.body.data.action).toEqual({ type: 'none' });
}

function expectUsualQr(res: ApiResponse) {
  expect(res.status, res.text).toBe(201);
  expect(res.body.data.status).toBe('pending');
  expect(res.body.data.action.type).toBe('display_qr');
  expect(typeof res.body.data.action.qr_data).toBe('string');
  expect(res.body.data.action.qr_data.length).toBeGreaterThan(0);
  expect(Date.parse(res.body.data.action.expires_at)).toBeGreaterThan(Date.parse(res.body.data.created_at));
}

const getPayment = (id: string, token: string) => call('GET', `/v1/payments/${id}`, { token });
const cancel = (id: string, token: string, key: string = crypto.randomUUID()) =>
  postIdempotent(`/v1/payments/${id}/cancel`, token, undefined, key);
const refund = (id: string, token: string, value: string, key: string = crypto.randomUUID(), currency = 'USD') =>
  postIdempotent(`/v1/payments/${id}/refunds`, token, { amount: { value, currency } }, key);

let m: Merchant;
let other: Merchant;

beforeAll(async () => {
  [m, other] = await Promise.all([setupMerchant(), setupMerchant()]);
});

describe('createPayment: transition table and sandbox answers', () => {
  it('POS: the usual answer is approved with action none', async () => {
    const body = paymentBody(m.pos.id, '10.00');
    const res = await m.pay(body);
    expectUsualPos(res);
    const data = res.body.data;
    expect(Object.keys(data).sort()).toEqual([...PAYMENT_FIELDS, 'action'].sort());
    expect(data.amount).toEqual({ value: '10.00', currency: 'USD' });
    // The sandbox's documented fee: 2.9 % + 0.30, the rest net, available two days later at 00:00 UTC.
    expect(data.settlement).toEqual({
      fee: { value: '0.59', currency: 'USD' },
      net: { value: '9.41', currency: 'USD' },
      available_on: expect.stringMatching(/T00:00:00\.000Z$/),
    });
    expect(data.settlement_null_reason).toBeNull();
    expect(data.external_reference).toBe(body.external_reference);
    expect(data.payment_method).toBe(m.pos.id);
    expect(typeof data.processor_reference).toBe('string');
    expect(data.created_at).toMatch(ISO_MS);
    expect(data.updated_at).toMatch(ISO_MS);
    expect(res.headers.get('idempotent-replayed')).toBeNull();
    expect(res.text).not.toContain(m.pos.apiKey);
  });

  it('QR: the usual answer is pending with display_qr and qr_data', async () => {
    const res = await m.pay(paymentBody(m.qr.id, '12.34'));
    expectUsualQr(res);
    expect(res.body.data.processor_reference).toEqual(expect.any(String));
  });

  it('.51: POS declined (201, not an error), QR the usual pending', async () => {
    const pos = await m.pay(paymentBody(m.pos.id, '10.51'));
    expect(pos.status, pos.text).toBe(201);
    expect(pos.body.data.status).toBe('declined');
    expect(pos.body.data.action).toEqual({ type: 'none' });
    expectUsualQr(await m.pay(paymentBody(m.qr.id, '10.51')));
  });

  it.each([
    ['POS', () => m.pos.id, expectUsualPos],
    ['QR', () => m.qr.id, expectUsualQr],
  ] as const)(
    '.52 on %s: 504 processor_timeout, kept pending; a retry with the same key resumes the same attempt',
    async (_, method, expectUsual) => {
      const body = paymentBody(method(), '20.52');
      const key = crypto.randomUUID();
      const first = await m.pay(body, key);
      const error = expectError(first, 504, 'processor_timeout');
      expect(error.retryable).toBe(true);
      expect(error.category).toBe('processor');

      const [kept] = await paymentRowsByReference(body.external_reference);
      expect(kept).toBeDefined();
      expect(kept!.status).toBe('pending');
      expect(kept!.processor_attempts).toBe(1);

      // The attempt is recorded: a new key cannot start a second payment for the same reference.
      expectError(await m.pay(body), 409, 'external_reference_conflict');
      // And the key is bound to its body even though no answer was stored.
      expectError(await m.pay({ ...body, description: 'other' }, key), 409, 'idempotency_key_reused');

      const retry = await m.pay(body, key);
      expectUsual(retry);
      expect(retry.headers.get('idempotent-replayed')).toBeNull();
      expect(retry.body.data.id).toBe(kept!.id);
      const rows = await paymentRowsByReference(body.external_reference);
      expect(rows).toHaveLength(1);
      expect(rows[0]!.processor_idempotency_key).toBe(kept!.processor_idempotency_key);
      expect(rows[0]!.processor_attempts).toBe(2);
      expect(retry.body.data.processor_reference).toBe(await sandboxReferenceFor(kept!.processor_idempotency_key));

      // Now the answer is stored.
      const again = await m.pay(body, key);
      expect(again.status).toBe(201);
      expect(again.text).toBe(retry.text);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
    },
  );

  it.each([
    ['POS', () => m.pos.id, expectUsualPos],
    ['QR', () => m.qr.id, expectUsualQr],
  ] as const)(
    '.53 on %s: 503 processor_unavailable with Retry-After, kept created; a retry with the same key gives the usual answer',
    async (_, method, expectUsual) => {
      const body = paymentBody(method(), '7.53');
      const key = crypto.randomUUID();
      const unavailable = await m.pay(body, key);
      const error = expectError(unavailable, 503, 'processor_unavailable');
      expect(unavailable.headers.get('retry-after')).toBe(String(UNAVAILABLE_RETRY_AFTER_SECONDS));
      expect(error.retryable).toBe(true);
      expect(error.category).toBe('processor');
      const [kept] = await paymentRowsByReference(body.external_reference);
      expect(kept!.status).toBe('created');
      expect(kept!.processor_reference).toBeNull();

      const retry = await m.pay(body, key);
      expectUsual(retry);
      expect(retry.body.data.id).toBe(kept!.id);
      expect(retry.body.data.processor_reference).toBe(await sandboxReferenceFor(kept!.processor_idempotency_key));
      expect(await paymentRowsByReference(body.external_reference)).toHaveLength(1);
    },
  );

  it.each([
    ['POS', () => m.pos.id],
    ['QR', () => m.qr.id],
  ] as const)('.54 on %s: 201 failed', async (_, method) => {
    const res = await m.pay(paymentBody(method(), '3.54'));
    expect(res.status, res.text).toBe(201);
    expect(res.body.data.status).toBe('failed');
    expect(res.body.data.action).toEqual({ type: 'none' });
  });

  it('CLP uses the last two integer digits: "1551" is declined on POS, "1500" approved', async () => {
    const declined = await m.pay({ ...paymentBody(m.pos.id, '1551'), amount: { value: '1551', currency: 'CLP' } });
    expect(declined.status, declined.text).toBe(201);
    expect(declined.body.data.status).toBe('declined');
    expect(declined.body.data.amount).toEqual({ value: '1551', currency: 'CLP' });
    const approved = await m.pay({ ...paymentBody(m.pos.id, '1500'), amount: { value: '1500', currency: 'CLP' } });
    expectUsualPos(approved);
    expect(approved.body.data.amount).toEqual({ value: '1500', currency: 'CLP' });
  });

  it('invalid-credentials: 422 connector_configuration_invalid, stored for the key, payment failed', async () => {
    const broken = await addSandboxMethod(m.session, SANDBOX_POS, 'invalid-credentials');
    await linkMethod(m.session, broken.id, m.key.id);
    const body = paymentBody(broken.id, '10.00');
    const key = crypto.randomUUID();
    const first = await m.pay(body, key);
    const error = expectError(first, 422, 'connector_configuration_invalid');
    expect(error.category).toBe('configuration');
    expect(error.retryable).toBe(false);
    const [row] = await paymentRowsByReference(body.external_reference);
    expect(row!.status).toBe('failed');

    const again = await m.pay(body, key);
    expect(again.status).toBe(422);
    expect(withoutRequestId(again)).toEqual(withoutRequestId(first));
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.error.request_id).toBe(again.headers.get('x-request-id'));
    expect((await paymentRow(row!.id))!.processor_attempts).toBe(1);

    // A failed payment still holds its reference.
    expectError(await m.pay(body), 409, 'external_reference_conflict');
  });

  it('a declined or failed payment keeps its external_reference: a new key gets 409 external_reference_conflict', async () => {
    for (const value of ['10.51', '10.54']) {
      const body = paymentBody(m.pos.id, value);
      expect((await m.pay(body)).status).toBe(201);
      const conflict = expectError(
        await m.pay({ ...body, amount: { value: '10.00', currency: 'USD' } }),
        409,
        'external_reference_conflict',
      );
      expect(conflict.category).toBe('conflict');
      const rows = await paymentRowsByReference(body.external_reference);
      expect(rows).toHaveLength(1);
      expect(conflict.details).toEqual({ payment_id: rows[0]!.id });
    }
  });

  it('after a lost answer, a retry with a fresh key gets the conflict with details.payment_id, and reading it recovers the payment', async () => {
    const body = paymentBody(m.qr.id, '12.00');
    const first = await m.pay(body);
    expect(first.status).toBe(201);
    // The answer never reached the client; it retries with a new Idempotency-Key (the wrong thing, but common).
    const conflict = expectError(await m.pay(body), 409, 'external_reference_conflict');
    expect(conflict.details).toEqual({ payment_id: first.body.data.id });
    const recovered = await call('GET', `/v1/payments/${conflict.details.payment_id}`, { token: m.key.secret });
    expect(recovered.status).toBe(200);
    expect(recovered.body.data).toMatchObject({
      id: first.body.data.id,
      external_reference: body.external_reference,
      status: 'pending',
    });
    // The conflict is not the key's stored answer: nothing was created, so the same fresh key may be used for something else.
    expect(await paymentRowsByReference(body.external_reference)).toHaveLength(1);
  });
});

describe('createPayment: validation', () => {
  it.each(['10', '10.5', '10.50'])('accepts amount.value %j for USD', async (value) => {
    const res = await m.pay(paymentBody(m.pos.id, value));
    expect(res.status, res.text).toBe(201);
    expect(res.body.data.amount.value).toBe(value === '10' ? '10.00' : '10.50');
  });

  it.each<[unknown]>([['10.505'], ['-1'], ['0'], ['0.00'], ['1e3'], [' 1'], ['01'], [10], ['1234567890123'], ['10.']])(
    'refuses amount.value %j with 400 naming amount.value',
    async (value) => {
      const body = { ...paymentBody(m.pos.id, '1'), amount: { value, currency: 'USD' } };
      const res = await m.pay(body);
      expectError(res, 400, 'invalid_request');
      expect(fieldsOf(res)).toContain('amount.value');
      expect(await paymentRowsByReference(body.external_reference)).toHaveLength(0);
    },
  );

  it('refuses fraction digits for CLP', async () => {
    const res = await m.pay({ ...paymentBody(m.pos.id, '1'), amount: { value: '10.5', currency: 'CLP' } });
    expectError(res, 400, 'invalid_request');
    expect(fieldsOf(res)).toContain('amount.value');
  });

  it('refuses a malformed currency with 400 and a well-formed unsupported one with 422 unsupported_currency', async () => {
    for (const currency of ['usd', 'US', 'USDD', '']) {
      const res = await m.pay({ ...paymentBody(m.pos.id, '1'), amount: { value: '10.00', currency } });
      expectError(res, 400, 'invalid_request');
      expect(fieldsOf(res)).toContain('amount.currency');
    }
    for (const currency of ['XYZ', 'JPY']) {
      const body = { ...paymentBody(m.pos.id, '1'), amount: { value: '10.00', currency } };
      const error = expectError(await m.pay(body), 422, 'unsupported_currency');
      expect(error.category).toBe('validation');
      expect(await paymentRowsByReference(body.external_reference)).toHaveLength(0);
    }
  });

  it('a missing Idempotency-Key is 400 idempotency_key_required, even when the body is bad too', async () => {
    const good = await call('POST', '/v1/payments', { token: m.key.secret, body: paymentBody(m.pos.id, '10.00') });
    expectError(good, 400, 'idempotency_key_required');
    const bad = await call('POST', '/v1/payments', { token: m.key.secret, body: { amount: 10, nope: true } });
    expectError(bad, 400, 'idempotency_key_required');
    const empty = await call('POST', '/v1/payments', {
      token: m.key.secret,
      body: paymentBody(m.pos.id, '10.00'),
      headers: { 'Idempotency-Key': '' },
    });
    expectError(empty, 400, 'idempotency_key_required');
  });

  it('Idempotency-Key: 255 printable characters are fine; 256, or a control character, are 400 invalid_request', async () => {
    expect((await m.pay(paymentBody(m.pos.id, '10.00'), 'k'.repeat(255))).status).toBe(201);
    expect((await m.pay(paymentBody(m.pos.id, '10.00'), '!~'.repeat(10))).status).toBe(201);
    for (const key of ['k'.repeat(256), 'ab\tcd', 'ab\x7fcd', 'ab\x01cd', 'caf\u00e9']) {
      const body = paymentBody(m.pos.id, '10.00');
      const res = await m.pay(body, key);
      expectError(res, 400, 'invalid_request');
      expect(fieldsOf(res)).toContain('Idempotency-Key');
      expect(await paymentRowsByReference(body.external_reference)).toHaveLength(0);
    }
  });

  it('payment_method unknown, foreign, inactive, deleted or not linked to the key: identical 404 payment_method_not_found', async () => {
    const merchant = await setupMerchant();
    const inactive = await addSandboxMethod(merchant.session, SANDBOX_POS);
    const deleted = await addSandboxMethod(merchant.session, SANDBOX_POS);
    const unlinked = await addSandboxMethod(merchant.session, SANDBOX_POS);
    await linkMethod(merchant.session, inactive.id, merchant.key.id);
    await linkMethod(merchant.session, deleted.id, merchant.key.id);
    expect(
      (
        await call('PATCH', `/v1/account/payment-methods/${inactive.id}`, {
          token: merchant.session.accessToken,
          body: { enabled: false },
        })
      ).status,
    ).toBe(200);
    expect(
      (await call('DELETE', `/v1/account/payment-methods/${deleted.id}`, { token: merchant.session.accessToken }))
        .status,
    ).toBe(204);

    const reference = newReference();
    const attempt = (method: string, token?: string) =>
      merchant.pay(
        { amount: { value: '10.00', currency: 'USD' }, external_reference: reference, payment_method: method },
        undefined,
        token,
      );
    const unknown = await attempt(crypto.randomUUID());
    const error = expectError(unknown, 404, 'payment_method_not_found');
    expect(error.category).toBe('validation');
    expect(error.retryable).toBe(false);
    expect(error.details).toEqual({});
    for (const method of [other.pos.id, inactive.id, deleted.id, unlinked.id]) {
      const res = await attempt(method);
      expectError(res, 404, 'payment_method_not_found');
      expectIndistinguishable(res, unknown);
    }
    // With the user's own token: foreign, inactive and deleted methods answer the same.
    for (const method of [crypto.randomUUID(), other.pos.id, inactive.id, deleted.id]) {
      expectIndistinguishable(await attempt(method, merchant.session.accessToken), unknown);
    }
    // Nothing was recorded: the reference is still free.
    expect((await attempt(merchant.pos.id)).status).toBe(201);
  });

  it('refuses a non-UUID payment_method, unknown fields, too many metadata keys and a too long description', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ payment_method: 'not-a-uuid' }, 'payment_method'],
      [{ surprise: true }, 'surprise'],
      [{ metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v'])) }, 'metadata'],
      [{ description: 'd'.repeat(1001) }, 'description'],
      [{ external_reference: '' }, 'external_reference'],
      [{ external_reference: 'r'.repeat(129) }, 'external_reference'],
      [{ amount: { value: '10.00', currency: 'USD', extra: 1 } }, 'amount.extra'],
    ];
    for (const [override, field] of cases) {
      const res = await m.pay(paymentBody(m.pos.id, '10.00', override));
      expectError(res, 400, 'invalid_request');
      expect(fieldsOf(res), field).toContain(field);
    }
    for (const field of ['amount', 'external_reference', 'payment_method']) {
      const body: Record<string, unknown> = paymentBody(m.pos.id, '10.00');
      delete body[field];
      const res = await m.pay(body);
      expectError(res, 400, 'invalid_request');
      expect(fieldsOf(res)).toContain(field);
    }
    // The limits themselves are fine.
    const atLimits = await m.pay(
      paymentBody(m.pos.id, '10.00', {
        metadata: Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, 'v'])),
        description: 'd'.repeat(1000),
        external_reference: `r${crypto.randomUUID()}`.padEnd(128, 'r'),
      }),
    );
    expect(atLimits.status, atLimits.text).toBe(201);
    expect(atLimits.body.data.description).toBe('d'.repeat(1000));
  });

  it('an API key without payments:create gets 403 insufficient_scope', async () => {
    const key = await createKey(m.session, ['payments:read']);
    await linkMethod(m.session, m.pos.id, key.id);
    const body = paymentBody(m.pos.id, '10.00');
    const error = expectError(await m.pay(body, undefined, key.secret), 403, 'insufficient_scope');
    expect(error.category).toBe('authorization');
    expect(await paymentRowsByReference(body.external_reference)).toHaveLength(0);
    expectError(await m.pay(body, undefined, 'sk_test_not-a-real-key-000000000000000000000000'), 401, 'unauthorized');
    expectError(
      await call('POST', '/v1/payments', { body, headers: { 'Idempotency-Key': 'k1' } }),
      401,
      'unauthorized',
    );
  });

  it('a user access token can create payments; external_reference is unique per user, apart from the key', async () => {
    const body = paymentBody(m.pos.id, '10.00');
    const byKey = await m.pay(body);
    expect(byKey.status).toBe(201);
    const byUser = await m.pay(body, undefined, m.session.accessToken);
    expect(byUser.status, byUser.text).toBe(201);
    expect(byUser.body.data.status).toBe('approved');
    expect(byUser.body.data.id).not.toBe(byKey.body.data.id);
    // The conflict names the user's own payment, never the key's one with the same reference.
    const conflict = expectError(
      await m.pay(body, undefined, m.session.accessToken),
      409,
      'external_reference_conflict',
    );
    expect(conflict.details).toEqual({ payment_id: byUser.body.data.id });
    // A user token works on its own methods even when they are linked to no key.
    const unlinked = await addSandboxMethod(m.session, SANDBOX_POS);
    expect((await m.pay(paymentBody(unlinked.id, '10.00'), undefined, m.session.accessToken)).status).toBe(201);
  });
});

describe('createPayment: idempotency', () => {
  it('the same key and body replay the stored answer byte for byte', async () => {
    for (const method of [m.pos.id, m.qr.id]) {
      const body = paymentBody(method, '15.00');
      const key = crypto.randomUUID();
      const first = await m.pay(body, key);
      expect(first.status).toBe(201);
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      const again = await m.pay(body, key);
      expect(again.status).toBe(201);
      expect(again.text).toBe(first.text);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.headers.get('content-type')).toMatch(/^application\/json/);
      expect(again.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'));
      expect(await paymentRowsByReference(body.external_reference)).toHaveLength(1);
    }
  });

  it('a declined answer is replayed too', async () => {
    const body = paymentBody(m.pos.id, '10.51');
    const key = crypto.randomUUID();
    const first = await m.pay(body, key);
    const again = await m.pay(body, key);
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
  });

  it('the same key with another body is 409 idempotency_key_reused', async () => {
    const body = paymentBody(m.pos.id, '15.00');
    const key = crypto.randomUUID();
    expect((await m.pay(body, key)).status).toBe(201);
    for (const changed of [
      { ...body, amount: { value: '15.01', currency: 'USD' } },
      { ...body, description: 'changed' },
      { ...body, external_reference: newReference() },
      { ...body, payment_method: m.qr.id },
    ]) {
      const error = expectError(await m.pay(changed, key), 409, 'idempotency_key_reused');
      expect(error.category).toBe('conflict');
      expect(error.retryable).toBe(false);
    }
    expect(await paymentRowsByReference(body.external_reference)).toHaveLength(1);
  });

  it('keys in another order are the same body (canonical fingerprint)', async () => {
    const reference = newReference();
    const key = crypto.randomUUID();
    const first = await m.pay(
      {
        amount: { value: '9.99', currency: 'USD' },
        external_reference: reference,
        payment_method: m.pos.id,
        metadata: { a: '1', b: '2' },
      },
      key,
    );
    expect(first.status).toBe(201);
    const reordered = await m.pay(
      {
        metadata: { b: '2', a: '1' },
        payment_method: m.pos.id,
        external_reference: reference,
        amount: { currency: 'USD', value: '9.99' },
      },
      key,
    );
    expect(reordered.status).toBe(201);
    expect(reordered.text).toBe(first.text);
    expect(reordered.headers.get('idempotent-replayed')).toBe('true');
  });

  it('the key is scoped per credential: another API key, or the user token, using the same key string is independent', async () => {
    const second = await createKey(m.session);
    await linkMethod(m.session, m.pos.id, second.id);
    const body = paymentBody(m.pos.id, '15.00');
    const key = `shared-${crypto.randomUUID()}`;
    const a = await m.pay(body, key);
    const b = await m.pay(body, key, second.secret);
    const c = await m.pay(body, key, m.session.accessToken);
    for (const res of [a, b, c]) {
      expect(res.status, res.text).toBe(201);
      expect(res.headers.get('idempotent-replayed')).toBeNull();
    }
    expect(new Set([a.body.data.id, b.body.data.id, c.body.data.id]).size).toBe(3);
    // A different body under the same key string is fine for a credential that never used it.
    const third = await createKey(m.session);
    await linkMethod(m.session, m.pos.id, third.id);
    expect((await m.pay(paymentBody(m.pos.id, '1.00'), key, third.secret)).status).toBe(201);
  });

  it('the operation is part of the scope: one key string serves a create, a cancel and a refund', async () => {
    const key = crypto.randomUUID();
    const created = await m.pay(paymentBody(m.pos.id, '40.00'), key);
    expect(created.status).toBe(201);
    const refunded = await refund(created.body.data.id, m.key.secret, '1.00', key);
    expect(refunded.status, refunded.text).toBe(201);
    const canceled = await cancel(created.body.data.id, m.key.secret, key);
    expectError(canceled, 409, 'invalid_state_transition');
  });

  it('50 identical concurrent creates with one key are one payment and one processor call, and every answer is the same', async () => {
    for (const method of [m.pos.id, m.qr.id]) {
      const body = paymentBody(method, '25.00');
      const key = crypto.randomUUID();
      const answers = await Promise.all(Array.from({ length: 50 }, () => m.pay(body, key)));
      const rows = await paymentRowsByReference(body.external_reference);
      expect(rows).toHaveLength(1);
      expect(rows[0]!.processor_attempts).toBe(1);
      expect(new Set(answers.map((a) => a.status))).toEqual(new Set([201]));
      expect(new Set(answers.map((a) => a.text)).size).toBe(1);
      expect(answers[0]!.body.data.id).toBe(rows[0]!.id);
      expect(answers.filter((a) => a.headers.get('idempotent-replayed') === null)).toHaveLength(1);
    }
  });

  it('50 concurrent creates of a timing-out payment with one key: one payment, and the retries resume it', async () => {
    const body = paymentBody(m.pos.id, '25.52');
    const key = crypto.randomUUID();
    const answers = await Promise.all(Array.from({ length: 50 }, () => m.pay(body, key)));
    const rows = await paymentRowsByReference(body.external_reference);
    expect(rows).toHaveLength(1);
    // The first answer is the timeout; the one after it resumed the attempt and was stored.
    expect(answers.filter((a) => a.status === 504)).toHaveLength(1);
    const ok = answers.filter((a) => a.status === 201);
    expect(ok).toHaveLength(49);
    expect(new Set(ok.map((a) => a.text)).size).toBe(1);
    expect(ok[0]!.body.data.id).toBe(rows[0]!.id);
    expect(ok[0]!.body.data.status).toBe('approved');
    expect(rows[0]!.processor_attempts).toBe(2);
  });
});

describe('getPayment', () => {
  it('returns the own payment; action only while a QR payment is pending', async () => {
    const pos = await m.pay(paymentBody(m.pos.id, '11.00'));
    const read = await getPayment(pos.body.data.id, m.key.secret);
    expect(read.status).toBe(200);
    expect(Object.keys(read.body.data).sort()).toEqual([...PAYMENT_FIELDS].sort());
    const { action: _action, ...rest } = pos.body.data;
    expect(read.body.data).toEqual(rest);

    const qr = await m.pay(paymentBody(m.qr.id, '11.00'));
    const qrRead = await getPayment(qr.body.data.id, m.key.secret);
    expect(qrRead.status).toBe(200);
    expect(qrRead.body.data.action).toEqual(qr.body.data.action);

    const declined = await m.pay(paymentBody(m.pos.id, '11.51'));
    expect((await getPayment(declined.body.data.id, m.key.secret)).body.data).not.toHaveProperty('action');

    expect((await cancel(qr.body.data.id, m.key.secret)).status).toBe(200);
    const afterCancel = await getPayment(qr.body.data.id, m.key.secret);
    expect(afterCancel.body.data.status).toBe('canceled');
    expect(afterCancel.body.data).not.toHaveProperty('action');

    // The user token reads it too.
    expect((await getPayment(pos.body.data.id, m.session.accessToken)).body.data).toEqual(read.body.data);
  });

  it('another owner’s payment answers exactly like a random id', async () => {
    const foreign = await other.pay(paymentBody(other.pos.id, '11.00'));
    expect(foreign.status).toBe(201);
    const random = await getPayment(newId('pay'), m.key.secret);
    const error = expectError(random, 404, 'payment_not_found');
    expect(error.category).toBe('not_found');
    const res = await getPayment(foreign.body.data.id, m.key.secret);
    expectIndistinguishable(res, random);
    expectIndistinguishable(await getPayment(foreign.body.data.id, m.session.accessToken), random);
    expectIndistinguishable(await getPayment(crypto.randomUUID(), m.key.secret), random);
  });

  it('needs payments:read', async () => {
    const created = await m.pay(paymentBody(m.pos.id, '11.00'));
    const key = await createKey(m.session, ['payments:create']);
    expectError(await getPayment(created.body.data.id, key.secret), 403, 'insufficient_scope');
    expectError(await call('GET', `/v1/payments/${created.body.data.id}`), 401, 'unauthorized');
  });

  it('never carries credentials or processor internals', async () => {
    for (const method of [m.pos, m.qr]) {
      const created = await m.pay(paymentBody(method.id, '11.00'));
      const read = await getPayment(created.body.data.id, m.key.secret);
      for (const res of [created, read]) {
        expect(res.text).not.toContain(method.apiKey);
        expect(res.text).not.toMatch(
          /credential|secret|processor_status|processor_idempotency|processor_attempts|owner_id|api_key|version/i,
        );
      }
    }
  });
});

describe('cancelPayment', () => {
  it('cancels a pending QR payment', async () => {
    const created = await m.pay(paymentBody(m.qr.id, '13.00'));
    const res = await cancel(created.body.data.id, m.key.secret);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.status).toBe('canceled');
    expect(res.body.data.id).toBe(created.body.data.id);
    expect(Date.parse(res.body.data.updated_at)).toBeGreaterThan(Date.parse(created.body.data.updated_at));
  });

  it('voids an approved payment with no refund', async () => {
    const created = await m.pay(paymentBody(m.pos.id, '13.00'));
    const res = await cancel(created.body.data.id, m.key.secret);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.status).toBe('canceled');
    expect((await getPayment(created.body.data.id, m.key.secret)).body.data.status).toBe('canceled');
  });

  it('cancels a payment left created by an unavailable processor; the create retry then answers with it', async () => {
    const body = paymentBody(m.pos.id, '13.53');
    const key = crypto.randomUUID();
    expectError(await m.pay(body, key), 503, 'processor_unavailable');
    const [row] = await paymentRowsByReference(body.external_reference);
    const res = await cancel(row!.id, m.key.secret);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.status).toBe('canceled');
    const retry = await m.pay(body, key);
    expect(retry.status).toBe(201);
    expect(retry.body.data.status).toBe('canceled');
    expect((await paymentRow(row!.id))!.processor_attempts).toBe(1);
  });

  it('a canceled payment: a new key is 409 invalid_state_transition, the same key replays the 200', async () => {
    const created = await m.pay(paymentBody(m.qr.id, '13.00'));
    const key = crypto.randomUUID();
    const first = await cancel(created.body.data.id, m.key.secret, key);
    expect(first.status).toBe(200);
    const error = expectError(await cancel(created.body.data.id, m.key.secret), 409, 'invalid_state_transition');
    expect(error.category).toBe('conflict');
    expect(error.retryable).toBe(false);
    const replay = await cancel(created.body.data.id, m.key.secret, key);
    expect(replay.status).toBe(200);
    expect(replay.text).toBe(first.text);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
  });

  it('is 409 from declined, failed, refunded, and after a partial refund', async () => {
    const declined = await m.pay(paymentBody(m.pos.id, '13.51'));
    const failed = await m.pay(paymentBody(m.pos.id, '13.54'));
    const refunded = await m.pay(paymentBody(m.pos.id, '13.00'));
    expect((await refund(refunded.body.data.id, m.key.secret, '13.00')).status).toBe(201);
    const partial = await m.pay(paymentBody(m.pos.id, '13.00'));
    expect((await refund(partial.body.data.id, m.key.secret, '1.00')).status).toBe(201);
    for (const [payment, status] of [
      [declined, 'declined'],
      [failed, 'failed'],
      [refunded, 'refunded'],
      [partial, 'partially_refunded'],
    ] as const) {
      const res = await cancel(payment.body.data.id, m.key.secret);
      const error = expectError(res, 409, 'invalid_state_transition');
      expect(error.details).toEqual({ status });
      expect((await getPayment(payment.body.data.id, m.key.secret)).body.data.status).toBe(status);
    }
  });

  it('is 409 after a declined refund too: a void needs no refund at all', async () => {
    const created = await m.pay(paymentBody(m.pos.id, '13.00'));
    const declined = await refund(created.body.data.id, m.key.secret, '1.61');
    expect(declined.body.data.status).toBe('declined');
    expectError(await cancel(created.body.data.id, m.key.secret), 409, 'invalid_state_transition');
  });

  it('needs an Idempotency-Key and payments:cancel', async () => {
    const created = await m.pay(paymentBody(m.qr.id, '13.00'));
    expectError(
      await call('POST', `/v1/payments/${created.body.data.id}/cancel`, { token: m.key.secret }),
      400,
      'idempotency_key_required',
    );
    const key = await createKey(m.session, ['payments:read']);
    expectError(await cancel(created.body.data.id, key.secret), 403, 'insufficient_scope');
    expect((await getPayment(created.body.data.id, m.key.secret)).body.data.status).toBe('pending');
  });

  it('another owner’s payment answers exactly like a random id', async () => {
    const foreign = await other.pay(paymentBody(other.qr.id, '13.00'));
    const random = await cancel(newId('pay'), m.key.secret);
    expectError(random, 404, 'payment_not_found');
    expectIndistinguishable(await cancel(foreign.body.data.id, m.key.secret), random);
    expectIndistinguishable(await cancel(foreign.body.data.id, m.session.accessToken), random);
    expect((await getPayment(foreign.body.data.id, other.key.secret)).body.data.status).toBe('pending');
  });

  it('a user token cancels its own payment', async () => {
    const created = await m.pay(paymentBody(m.qr.id, '13.00'));
    const res = await cancel(created.body.data.id, m.session.accessToken);
    expect(res.status).toBe(200);
    expect(res.body.data.status).toBe('canceled');
  });
});
