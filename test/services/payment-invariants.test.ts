import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, type ApiResponse } from '../helpers/api.ts';
import {
  approvedRefundTotal,
  paymentBody,
  paymentRow,
  postIdempotent,
  refundRows,
  setupMerchant,
  type Merchant,
} from '../helpers/merchant.ts';

/**
 * Random short sequences of operations and processor notifications on one payment, run through the
 * real API (idempotency Durable Object, D1 compare-and-set, sandbox processor, test helpers), with the money and state invariants checked from D1
 * after every step: a final status never changes, approved refunds never exceed the amount, the status
 * matches the refund ledger, and `updated_at` never decreases and strictly increases with the status.
 */

const FINAL = new Set(['declined', 'failed', 'expired', 'canceled', 'refunded']);

/** Minor units to a USD decimal string, without floats. */
const usd = (minor: number) => `${Math.floor(minor / 100)}.${String(minor % 100).padStart(2, '0')}`;

type Start = 'pos_approved' | 'pos_declined' | 'pos_failed' | 'qr_pending' | 'pos_timeout';

type Op =
  | { kind: 'refund'; share: number }
  | { kind: 'refund_declined'; share: number }
  | { kind: 'refund_over' }
  | { kind: 'cancel' }
  | { kind: 'repeat' }
  | { kind: 'get' }
  | { kind: 'notification'; action: NotificationAction }
  | { kind: 'burst'; shares: number[]; withCancel: boolean; notification: NotificationAction | null };

type NotificationAction = 'approve' | 'decline' | 'expire' | 'fail';
const notificationArb = fc.constantFrom<NotificationAction>('approve', 'approve', 'decline', 'expire', 'fail');

const startArb = fc.constantFrom<Start>(
  'pos_approved',
  'pos_approved',
  'pos_approved',
  'pos_declined',
  'pos_failed',
  'qr_pending',
  'pos_timeout',
);
const shareArb = fc.integer({ min: 1, max: 100 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: shareArb.map((share) => ({ kind: 'refund' as const, share })) },
  { weight: 2, arbitrary: shareArb.map((share) => ({ kind: 'refund_declined' as const, share })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'refund_over' as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'cancel' as const }) },
  { weight: 3, arbitrary: fc.constant({ kind: 'repeat' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'get' as const }) },
  { weight: 2, arbitrary: notificationArb.map((action) => ({ kind: 'notification' as const, action })) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('burst' as const),
      shares: fc.array(shareArb, { minLength: 2, maxLength: 4 }),
      withCancel: fc.boolean(),
      notification: fc.option(notificationArb, { nil: null }),
    }),
  },
);
const scenarioArb = fc.record({
  start: startArb,
  // Whole units, so the cents choose the sandbox answer.
  units: fc.integer({ min: 1, max: 500 }),
  ops: fc.array(opArb, { minLength: 3, maxLength: 8 }),
});

interface Sent {
  path: string;
  body: unknown;
  key: string;
  res: ApiResponse;
}

interface Observed {
  status: string;
  updatedAt: number;
}

let m: Merchant;

beforeAll(async () => {
  m = await setupMerchant();
});

async function startPayment(start: Start, units: number): Promise<{ id: string; amount: number }> {
  const cents = { pos_approved: 0, pos_declined: 51, pos_failed: 54, qr_pending: 0, pos_timeout: 52 }[start];
  const method = start === 'qr_pending' ? m.qr.id : m.pos.id;
  const body = paymentBody(method, usd(units * 100 + cents));
  const key = crypto.randomUUID();
  let res = await m.pay(body, key);
  // A timeout leaves the payment pending; the same key and body resume it to the usual answer.
  if (start === 'pos_timeout') {
    expect(res.status).toBe(504);
    res = await m.pay(body, key);
  }
  expect(res.status, res.text).toBe(201);
  return { id: res.body.data.id, amount: units * 100 + cents };
}

async function observe(paymentId: string, amount: number): Promise<Observed> {
  const row = await paymentRow(paymentId);
  expect(row).not.toBeNull();
  const approved = await approvedRefundTotal(paymentId);
  expect(approved).toBeLessThanOrEqual(amount);
  // The status follows the ledger: a refund status exactly when some refund is approved.
  if (approved === amount) expect(row!.status).toBe('refunded');
  else if (approved > 0) expect(row!.status).toBe('partially_refunded');
  else expect(['partially_refunded', 'refunded']).not.toContain(row!.status);
  // Approved plus in-flight refunds never exceed the amount either.
  const reserved = (await refundRows(paymentId)).filter((r) =>
    ['created', 'pending', 'processing', 'approved'].includes(r.status),
  );
  expect(reserved.reduce((sum, r) => sum + r.amount_minor, 0)).toBeLessThanOrEqual(amount);
  return { status: row!.status, updatedAt: row!.updated_at };
}

function expectStep(before: Observed, after: Observed) {
  if (FINAL.has(before.status)) expect(after.status).toBe(before.status);
  expect(after.updatedAt).toBeGreaterThanOrEqual(before.updatedAt);
  if (after.status !== before.status) expect(after.updatedAt).toBeGreaterThan(before.updatedAt);
}

/** A refund amount from a share (1..100 %) of the amount, at least one cent. */
const shareOf = (amount: number, share: number) => Math.max(1, Math.floor((amount * share) / 100));

describe('payment invariants under random operation sequences', () => {
  it('hold after every step', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async ({ start, units, ops }) => {
        const { id, amount } = await startPayment(start, units);
        const token = m.key.secret;
        let state = await observe(id, amount);
        let last: Sent | null = null;

        const send = async (path: string, body: unknown, key: string = crypto.randomUUID()): Promise<Sent> => {
          const res = await postIdempotent(path, token, body, key);
          expect(res.status, res.text).toBeLessThan(500);
          return { path, body, key, res };
        };
        const refund = (minor: number) =>
          send(`/v1/payments/${id}/refunds`, { amount: { value: usd(minor), currency: 'USD' } });
        const cancel = () => send(`/v1/payments/${id}/cancel`, undefined);
        // The processor's asynchronous notification, through the sandbox test helper (a signed notification).
        const notify = async (action: NotificationAction) => {
          const res = await call('POST', `/v1/test-helpers/payments/${id}/${action}`, { token });
          expect(res.status, res.text).toBe(200);
          return res;
        };

        for (const op of ops) {
          switch (op.kind) {
            case 'refund':
              last = await refund(shareOf(amount, op.share));
              break;
            case 'refund_declined': {
              // An amount ending in .61 that fits the payment: the sandbox declines it.
              const whole = Math.floor(shareOf(amount, op.share) / 100);
              last = await refund(whole * 100 + 61 <= amount ? whole * 100 + 61 : 61);
              if (last.res.status === 201) expect(last.res.body.data.status).toBe('declined');
              break;
            }
            case 'refund_over':
              last = await refund(amount + 1);
              expect([409, 422]).toContain(last.res.status);
              break;
            case 'cancel':
              last = await cancel();
              if (last.res.status === 200) expect(last.res.body.data.status).toBe('canceled');
              else expect(last.res.body.error.code).toBe('invalid_state_transition');
              break;
            case 'repeat': {
              if (!last) break;
              const again = await send(last.path, last.body, last.key);
              // A stored answer comes back byte for byte; an error that was not kept may differ now.
              if (last.res.status < 300) {
                expect(again.res.status).toBe(last.res.status);
                expect(again.res.text).toBe(last.res.text);
                expect(again.res.headers.get('idempotent-replayed')).toBe('true');
              }
              break;
            }
            case 'get': {
              const read = await call('GET', `/v1/payments/${id}`, { token });
              expect(read.status).toBe(200);
              expect(read.body.data.status).toBe(state.status);
              expect(Date.parse(read.body.data.updated_at)).toBe(state.updatedAt);
              break;
            }
            case 'notification':
              await notify(op.action);
              break;
            case 'burst': {
              const requests = op.shares.map((share) => refund(shareOf(amount, share)));
              if (op.withCancel) requests.push(cancel());
              const [answers] = await Promise.all([
                Promise.all(requests),
                op.notification ? notify(op.notification) : null,
              ]);
              for (const a of answers) expect([200, 201, 409, 422]).toContain(a.res.status);
              last = answers[0]!;
              break;
            }
          }
          const next = await observe(id, amount);
          expectStep(state, next);
          state = next;
        }

        // The public view agrees with D1 at the end.
        const read = await call('GET', `/v1/payments/${id}`, { token });
        expect(read.body.data.status).toBe(state.status);
        expect(Date.parse(read.body.data.updated_at)).toBe(state.updatedAt);
      }),
      { numRuns: 15 },
    );
  }, 180_000);
});
