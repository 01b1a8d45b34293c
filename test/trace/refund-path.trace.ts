import { beforeAll, expect, it } from 'vitest';
import { paymentBody, postIdempotent, setupMerchant, type Merchant } from '../helpers/merchant.ts';

/**
 * One refund through the API (an API key, the sandbox, an approved payment), with the functions of src/ reporting
 * their files (./vitest.config.ts): prints the files whose code ran between the request and its answer, the Worker's
 * fetch to the response, the idempotency object included (it runs in the same isolate here, as in the suites).
 */

declare global {
  var __refundPathTrace: ((file: string) => void) | undefined;
}

/** Reached only from the Worker's fetch, before the route (as scripts/refund-path.mjs sorts them). */
const BEFORE_ROUTE = [
  'src/index.ts',
  'src/app.ts',
  'src/middleware/request-context.ts',
  'src/middleware/access-log.ts',
  'src/middleware/json-body.ts',
  'src/middleware/error-handler.ts',
  'src/lib/strict-json.ts',
];

let merchant: Merchant;

beforeAll(async () => {
  merchant = await setupMerchant();
});

it('lists the files whose functions a refund runs', async () => {
  const payment = await merchant.pay(paymentBody(merchant.pos.id, '100.00'));
  expect(payment.body.data.status).toBe('approved');
  const ran = new Set<string>();
  globalThis.__refundPathTrace = (file) => ran.add(file);
  try {
    const refund = await postIdempotent(
      `/v1/payments/${payment.body.data.id}/refunds`,
      merchant.key.secret,
      { amount: { value: '10.00', currency: 'USD' } },
      crypto.randomUUID(),
    );
    expect(refund.status, refund.text).toBe(201);
  } finally {
    globalThis.__refundPathTrace = undefined;
  }
  const files = [...ran].sort();
  const route = files.filter((file) => !BEFORE_ROUTE.includes(file));
  const before = files.filter((file) => BEFORE_ROUTE.includes(file));
  console.log(
    [
      ...route,
      '',
      'Before the route:',
      ...before,
      '',
      `${route.length} files from the route, ${before.length} before`,
    ].join('\n'),
  );
});
