import { beforeAll, describe, expect, it } from 'vitest';
import { call, createKey, expectError } from '../helpers/api.ts';
import { paymentBody, setupMerchant, type Merchant } from '../helpers/merchant.ts';

let m: Merchant;
let other: Merchant;

beforeAll(async () => {
  m = await setupMerchant();
  other = await setupMerchant();
});

const report = (query: string, token = m.key.secret) => call('GET', `/v1/reports/payments${query}`, { token });

describe('GET /v1/reports/payments', () => {
  it('counts and sums the payments per day, status and currency; rows without payments left out; adds up to the list', async () => {
    const start = new Date().toISOString();
    for (const value of ['10.00', '15.00', '20.51', '7.54']) {
      const res = await m.pay(paymentBody(m.pos.id, value));
      expect(res.status, res.text).toBe(201);
    }
    await other.pay(paymentBody(other.pos.id, '99.00'));
    const end = new Date(Date.now() + 1).toISOString();
    const range = `created_gte=${encodeURIComponent(start)}&created_lt=${encodeURIComponent(end)}`;
    const res = await report(`?${range}`);
    expect(res.status, res.text).toBe(200);
    const byStatus = Object.fromEntries(res.body.data.map((r: { status: string }) => [r.status, r]));
    expect(byStatus.approved).toMatchObject({ currency: 'USD', count: 2, amount: { value: '25.00', currency: 'USD' } });
    expect(byStatus.declined).toMatchObject({ count: 1, amount: { value: '20.51', currency: 'USD' } });
    expect(byStatus.failed).toMatchObject({ count: 1, amount: { value: '7.54', currency: 'USD' } });
    expect(res.body.data.every((r: { count: number }) => r.count > 0)).toBe(true);
    expect(res.body.data[0].start).toBe(start);
    // The counts add up to the list's total over the same range.
    const list = await call('GET', `/v1/payments?${range}`, { token: m.key.secret });
    expect(res.body.data.reduce((n: number, r: { count: number }) => n + r.count, 0)).toBe(list.body.pagination.total);

    const grouped = await report(`?${range}&group_by=payment_method&interval=hour&tz=Asia/Kolkata`);
    expect(grouped.status, grouped.text).toBe(200);
    expect(grouped.body.data.every((r: { payment_method: string }) => r.payment_method === m.pos.id)).toBe(true);
    // With a user token too.
    expect((await report(`?${range}`, m.session.accessToken)).body.data).toEqual(res.body.data);
  });

  it('defaults to the last 30 days by day in UTC', async () => {
    const res = await report('');
    expect(res.status, res.text).toBe(200);
    expect(Array.isArray(res.body.data)).toBe(true);
  });

  it('refuses ranges too long, hourly ranges past 48 hours, empty ranges and unknown zones, naming the parameter', async () => {
    const at = (days: number) => encodeURIComponent(new Date(Date.UTC(2026, 0, 1) + days * 86_400_000).toISOString());
    const cases: [string, string][] = [
      [`?created_gte=${at(0)}&created_lt=${at(367)}`, 'created_gte'],
      [`?created_gte=${at(0)}&created_lt=${at(3)}&interval=hour`, 'interval'],
      [`?created_gte=${at(2)}&created_lt=${at(1)}`, 'created_lt'],
      ['?tz=Mars%2FOlympus_Mons', 'tz'],
      ['?interval=week', 'query.interval'],
      ['?group_by=status', 'query.group_by'],
      ['?currency=USD', 'query.currency'],
    ];
    for (const [query, field] of cases) {
      const error = expectError(await report(query), 400, 'invalid_request');
      expect(JSON.stringify(error.details), query).toContain(field);
    }
  });

  it('needs payments:read, and counts only the caller’s own payments', async () => {
    const key = await createKey(m.session, ['payments:create']);
    expectError(await report('', key.secret), 403, 'insufficient_scope');
    expectError(await report('', 'sk_test_nope'), 401, 'unauthorized');
    const mine = (await report('')).body.data.reduce((n: number, r: { count: number }) => n + r.count, 0);
    const theirs = (await report('', other.key.secret)).body.data.reduce(
      (n: number, r: { count: number }) => n + r.count,
      0,
    );
    expect(mine).toBeGreaterThanOrEqual(4);
    expect(theirs).toBe(1);
  });
});
