import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { PAYMENT_EVENT_TYPES, PAYMENT_STATUSES } from '../../src/domain/payment-state.ts';
import { DISPUTE_STATUSES } from '../../src/domain/disputes.ts';
import type { TotalQuery } from '../../src/db/paging.ts';
import { disputesTotal, eventsTotal, paymentsTotal } from '../../src/services/counters/totals.ts';
import { reportPayments } from '../../src/services/reports/report-payments.ts';
import { runScheduledJobs } from '../../src/jobs/scheduled.ts';
import { call } from '../helpers/api.ts';
import { paymentBody, postIdempotent, setupMerchant, type Merchant } from '../helpers/merchant.ts';
import { depsOfOwner } from '../helpers/shards.ts';
import { webhookTestSetup } from '../helpers/webhooks.ts';
import { random } from '../helpers/random.ts';

/**
 * The counters (db/schema/counters.ts) equal `COUNT(*)` over the rows they count, for every filter the lists offer and
 * every range, after a seeded burst of everything that moves a payment: creates of every sandbox outcome, partial,
 * full and declined refunds, refund reversals, cancels and voids, QR expiries and declines, disputes opened, won and
 * lost, some of them at once. The report adds up to the same counts.
 */

let m: Merchant;
webhookTestSetup();

beforeAll(async () => {
  m = await setupMerchant();
});

const helper = (path: string, body?: unknown) =>
  call('POST', `/v1/test-helpers/${path}`, { token: m.key.secret, ...(body !== undefined ? { body } : {}) });

async function burst(seed: number) {
  const rand = random(seed);
  const pick = <T>(items: readonly T[]) => items[Math.floor(rand() * items.length)]!;
  const made: { id: string; qr: boolean }[] = [];
  for (let round = 0; round < 6; round++) {
    // Creates of every outcome, on both channels, at once.
    const creates = Array.from({ length: 6 }, () => {
      const qr = rand() < 0.4;
      const cents = pick(['00', '00', '00', '51', '52', '53', '54']);
      return m
        .pay(paymentBody(qr ? m.qr.id : m.pos.id, `${10 + Math.floor(rand() * 40)}.${cents}`))
        .then((res) => (res.body?.data?.id ? made.push({ id: res.body.data.id, qr }) : undefined));
    });
    await Promise.all(creates);
    // Then moves of what exists, some at once.
    const moves = Array.from({ length: 8 }, async () => {
      const payment = pick(made);
      const action = rand();
      if (payment.qr && action < 0.3)
        return helper(`payments/${payment.id}/${pick(['approve', 'approve', 'decline', 'expire', 'fail'])}`);
      if (action < 0.55) {
        const value = pick(['1.00', '5.00', '2.61', '50.00']);
        const res = await postIdempotent(`/v1/payments/${payment.id}/refunds`, m.key.secret, {
          amount: { value, currency: 'USD' },
        });
        if (res.status === 201 && res.body.data.status === 'approved' && rand() < 0.4)
          await helper(`refunds/${res.body.data.id}/fail`);
        return res;
      }
      if (action < 0.7) return postIdempotent(`/v1/payments/${payment.id}/cancel`, m.key.secret);
      if (action < 0.85) {
        const opened = await helper(`payments/${payment.id}/dispute`);
        if (opened.status === 200 && rand() < 0.7)
          await helper(`disputes/${opened.body.data.id}/close`, { outcome: pick(['won', 'lost']) });
        return opened;
      }
      return call('GET', `/v1/payments/${payment.id}`, { token: m.key.secret });
    });
    await Promise.all(moves);
  }
  // Expiries of QR payments past their time, and reconciliation of the timed out ones, by the cron.
  await runScheduledJobs(env, Date.now() + 2 * 3_600_000);
}

async function totalOf(query: TotalQuery): Promise<number> {
  const deps = await depsOfOwner(m.session.user.id);
  const results = await deps.db.batch(query.statements as [never, ...never[]]);
  return query.total(results);
}

async function countRows(table: string, where: string, params: unknown[]): Promise<number> {
  const deps = await depsOfOwner(m.session.user.id);
  const row = await deps.d1
    .prepare(`SELECT count(*) AS n FROM ${table} WHERE owner_id = ? AND environment = 'test' ${where}`)
    .bind(m.session.user.id, ...params)
    .first<{ n: number }>();
  return row!.n;
}

describe('the counters after a burst of everything that moves a payment', () => {
  it('equal COUNT(*) for every payments filter and range, every events filter and range, every disputes filter', async () => {
    const before = Date.now();
    await burst(20261127);
    const after = Date.now();
    const deps = await depsOfOwner(m.session.user.id);
    const scope = { ownerId: m.session.user.id, environment: 'test' as const };
    expect(await countRows('payments', '', [])).toBeGreaterThan(30);

    // Ranges: none, open at either end, and bounds at arbitrary milliseconds inside the burst.
    const middle = Math.floor((before + after) / 2);
    const ranges: { createdFrom?: number; createdBefore?: number }[] = [
      {},
      { createdFrom: middle },
      { createdBefore: middle },
      { createdFrom: before - 7, createdBefore: middle + 3 },
      { createdFrom: middle - 1_234, createdBefore: after + 86_400_000 },
      { createdFrom: before - 3 * 86_400_000, createdBefore: before - 86_400_000 },
    ];
    const rangeSql = (r: (typeof ranges)[number]) =>
      [
        `${r.createdFrom !== undefined ? 'AND created_at >= ?' : ''} ${r.createdBefore !== undefined ? 'AND created_at < ?' : ''}`,
        [
          ...(r.createdFrom !== undefined ? [r.createdFrom] : []),
          ...(r.createdBefore !== undefined ? [r.createdBefore] : []),
        ],
      ] as const;

    for (const range of ranges) {
      const [rangeWhere, rangeParams] = rangeSql(range);
      for (const status of [undefined, ...PAYMENT_STATUSES]) {
        for (const method of [undefined, m.pos.id, m.qr.id]) {
          const where = `${status ? 'AND status = ?' : ''} ${method ? 'AND payment_method_id = ?' : ''} ${rangeWhere}`;
          const params = [...(status ? [status] : []), ...(method ? [method] : []), ...rangeParams];
          const counted = await totalOf(
            paymentsTotal(deps.db, scope, {
              ...range,
              ...(status ? { status } : {}),
              ...(method ? { paymentMethodId: method } : {}),
            }),
          );
          expect(counted, JSON.stringify({ status, method, range })).toBe(await countRows('payments', where, params));
        }
      }
      for (const type of [undefined, ...PAYMENT_EVENT_TYPES]) {
        const counted = await totalOf(eventsTotal(deps.db, scope, { ...range, ...(type ? { type } : {}) }));
        const where = `${type ? 'AND type = ?' : ''} ${rangeWhere}`;
        expect(counted, JSON.stringify({ type, range })).toBe(
          await countRows('payment_events', where, [...(type ? [type] : []), ...rangeParams]),
        );
      }
    }
    for (const status of [undefined, ...DISPUTE_STATUSES]) {
      const counted = await totalOf(disputesTotal(deps.db, scope, status ? { status } : {}));
      expect(counted, status).toBe(await countRows('disputes', status ? 'AND status = ?' : '', status ? [status] : []));
    }

    // The report, by day in two zones and by hour, adds up to the same counts, per status and method.
    for (const [interval, tz] of [
      ['day', 'UTC'],
      ['day', 'Asia/Kathmandu'],
      ['hour', 'America/Sao_Paulo'],
    ] as const) {
      const rows = await reportPayments({
        deps,
        scope,
        input: { createdFrom: before - 5, createdBefore: after + 5, interval, groupBy: 'payment_method', tz },
      });
      for (const status of PAYMENT_STATUSES) {
        for (const method of [m.pos.id, m.qr.id]) {
          const reported = rows
            .filter((r) => r.status === status && r.payment_method === method)
            .reduce((n, r) => n + r.count, 0);
          expect(reported, `${interval} ${tz} ${status}`).toBe(
            await countRows(
              'payments',
              'AND status = ? AND payment_method_id = ? AND created_at >= ? AND created_at < ?',
              [status, method, before - 5, after + 5],
            ),
          );
        }
      }
    }
  }, 180_000);
});
