import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_ECHO_ITEMS, MAX_ECHO_LENGTH } from '../../src/lib/echo.ts';
import { call, expectError, type ApiResponse } from '../helpers/api.ts';
import { paymentBody, setupMerchant, type Merchant } from '../helpers/merchant.ts';

/**
 * The JSON body gate (middleware/json-body.ts): a lone surrogate is refused with 400 naming it. And what
 * an error repeats of the request is bounded (lib/echo.ts).
 */

let m: Merchant;

beforeAll(async () => {
  m = await setupMerchant();
});

const fieldsOf = (res: ApiResponse) => (res.body.error.details.fields as Array<{ field: string; issue: string }>) ?? [];

describe('a lone UTF-16 surrogate', () => {
  it('is refused anywhere in a body, naming its key path; a whole pair is taken', async () => {
    const body = (metadata: string) =>
      `{"amount":{"value":"3.00","currency":"USD"},"external_reference":"order-${crypto.randomUUID()}","payment_method":"${m.pos.id}","metadata":${metadata}}`;
    const pay = (rawBody: string) =>
      call('POST', '/v1/payments', {
        token: m.key.secret,
        rawBody,
        headers: { 'Content-Type': 'application/json', 'Idempotency-Key': crypto.randomUUID() },
      });
    for (const [metadata, field] of [
      ['{"note":"x\\ud800y"}', 'metadata.note'],
      ['{"note":"\\udfff"}', 'metadata.note'],
      ['{"x\\udbff":"y"}', 'metadata.x\ufffd'],
    ] as const) {
      const res = await pay(body(metadata));
      const error = expectError(res, 400, 'invalid_request');
      expect(error.details, metadata).toEqual({ fields: [{ field, issue: 'Lone surrogate' }] });
    }
    const pair = await pay(body('{"note":"x\\ud83d\\ude00y"}'));
    expect(pair.status, pair.text).toBe(201);
    expect(pair.body.data.metadata).toEqual({ note: 'x😀y' });
    expect(
      (await call('GET', `/v1/payments/${pair.body.data.id}`, { token: m.key.secret })).body.data.metadata,
    ).toEqual({ note: 'x😀y' });
  });
});

describe('what an error repeats of the request', () => {
  it('is cut: a 9,000-character metadata key comes back as its first 200 characters and an ellipsis', async () => {
    const key = `k${'x'.repeat(8999)}`;
    const res = await m.pay(paymentBody(m.pos.id, '3.00', { metadata: { [key]: 'v' } }));
    expectError(res, 400, 'invalid_request');
    const [issue] = fieldsOf(res);
    expect(issue!.field).toBe(`${`metadata.${key}`.slice(0, MAX_ECHO_LENGTH)}…`);
    expect(res.text).not.toContain('x'.repeat(MAX_ECHO_LENGTH));
    expect(res.text.length).toBeLessThan(2_000);
  });

  it('is a bounded list: 2,000 unknown fields are named up to 50, with how many more', async () => {
    const body = Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [`unknown_${i}`, i]));
    const res = await call('POST', '/v1/auth/login', { body });
    const error = expectError(res, 400, 'invalid_request');
    expect((error.details.fields as unknown[]).length).toBe(MAX_ECHO_ITEMS);
    expect(error.details.fields_omitted).toBeGreaterThanOrEqual(2_000 - MAX_ECHO_ITEMS);
  });
});
