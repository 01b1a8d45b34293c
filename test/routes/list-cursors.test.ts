import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { createDeps } from '../../src/deps.ts';
import type { Page, PageStatements } from '../../src/db/paging.ts';
import { apiKeyListStatements } from '../../src/services/api-keys.ts';
import { disputeListStatements, type DisputeFilters } from '../../src/services/disputes/list-disputes.ts';
import { paymentDisputeListStatements } from '../../src/services/disputes/list-payment-disputes.ts';
import {
  accountPaymentMethodListStatements,
  publicPaymentMethodListStatements,
} from '../../src/services/payment-methods/store.ts';
import { refundListStatements } from '../../src/services/payments/reads.ts';
import { userListStatements } from '../../src/services/users.ts';
import { endpointListStatements } from '../../src/services/webhooks/endpoints/store.ts';
import { paymentEventListStatements } from '../../src/services/webhooks/events.ts';
import { call, createKey, expectError, seedSession, type ApiResponse, type Session } from '../helpers/api.ts';
import { paymentBody, postIdempotent, setupMerchant, type Merchant } from '../helpers/merchant.ts';
import { createMethod, expectIndistinguishable, fieldsOf, link } from '../helpers/methods.ts';
import { expectEveryFilterCombinationIndexed, expectPageIndexed, PAGE_KINDS } from '../helpers/query-plans.ts';
import { createEndpoint } from '../helpers/webhooks.ts';

/**
 * Cursor paging on every list but `GET /v1/payments` (test/routes/payments-list.test.ts walks that one while
 * payments are made): each list walked forward with `starting_after` and back with `ending_before` gives its items
 * once each, in its order; an id the caller cannot see answers as a random one; both cursors, a cursor with an
 * offset, and an offset past 10,000 are refused. And every list's statements are explained, by offset and by cursor.
 */

interface CursorList {
  /** The list's path, with its required query (`?user_id=`) if any. */
  path: string;
  token: () => string;
  /** Ids of items the caller cannot see in this list (another owner's, another payment's...). */
  foreign: () => string[];
  /** The list holds at least this many items (a walk crosses pages). */
  atLeast: number;
}

const withQuery = (path: string, query: string) => `${path}${path.includes('?') ? '&' : '?'}${query}`;
const ids = (res: ApiResponse) => (res.body.data as Array<{ id: string }>).map((item) => item.id);
const randomId = () => `x_${crypto.randomUUID().replaceAll('-', '')}`;

async function page(list: CursorList, query: string) {
  const res = await call('GET', withQuery(list.path, query), { token: list.token() });
  expect(res.status, `${list.path} ${query}: ${res.text}`).toBe(200);
  return res;
}

/** Pages of one item, from the first (or from `from`), following the cursor while `has_more`. */
async function walk(list: CursorList, direction: 'starting_after' | 'ending_before', from?: string) {
  const walked: string[][] = [];
  let query = from === undefined ? 'limit=1' : `limit=1&${direction}=${from}`;
  for (;;) {
    const res = await page(list, query);
    expect(res.body.pagination.offset).toBe(0);
    walked.push(ids(res));
    if (!res.body.pagination.has_more) return walked;
    query = `limit=1&${direction}=${direction === 'starting_after' ? ids(res).at(-1) : ids(res)[0]}`;
  }
}

async function expectCursorPaging(list: CursorList) {
  const whole = ids(await page(list, 'limit=100'));
  expect(whole.length).toBeGreaterThanOrEqual(list.atLeast);
  // Forward from the first page, one item a page: every item once, in the list's order.
  const forward = await walk(list, 'starting_after');
  expect(forward.flat()).toEqual(whole);
  expect(forward.every((items) => items.length === 1)).toBe(true);
  // Back from the last item: the items before it, newest last in the walk.
  const back = await walk(list, 'ending_before', whole.at(-1));
  expect(back.reverse().flat()).toEqual(whole.slice(0, -1));
  // After the last and before the first: nothing more.
  expect((await page(list, `starting_after=${whole.at(-1)}`)).body.data).toEqual([]);
  expect((await page(list, `ending_before=${whole[0]}`)).body.pagination.has_more).toBe(false);

  for (const parameter of ['starting_after', 'ending_before']) {
    const random = await call('GET', withQuery(list.path, `${parameter}=${randomId()}`), { token: list.token() });
    expectError(random, 400, 'invalid_request');
    expect(fieldsOf(random)).toEqual([`query.${parameter}`]);
    for (const id of list.foreign()) {
      const foreign = await call('GET', withQuery(list.path, `${parameter}=${id}`), { token: list.token() });
      expectIndistinguishable(foreign, random);
    }
    const withOffset = await call('GET', withQuery(list.path, `${parameter}=${whole[0]}&offset=1`), {
      token: list.token(),
    });
    expectError(withOffset, 400, 'invalid_request');
    expect(fieldsOf(withOffset)).toEqual(['query.offset']);
  }
  const both = await call('GET', withQuery(list.path, `starting_after=${whole[0]}&ending_before=${whole[1]}`), {
    token: list.token(),
  });
  expectError(both, 400, 'invalid_request');
  expect(fieldsOf(both)).toEqual(['query.starting_after', 'query.ending_before']);
  const deep = await call('GET', withQuery(list.path, 'offset=10001'), { token: list.token() });
  expect(expectError(deep, 400, 'invalid_request').message).toContain('starting_after');
  expect(fieldsOf(deep)).toEqual(['query.offset', 'query.starting_after']);
  expect((await page(list, 'offset=10000')).body.data).toEqual([]);
  // A credential first: no cursor is looked at without one.
  expectError(await call('GET', withQuery(list.path, `starting_after=${whole[0]}`)), 401, 'unauthorized');
}

let m: Merchant;
let other: Merchant;

beforeAll(async () => {
  [m, other] = await Promise.all([setupMerchant(), setupMerchant()]);
});

async function approvedPayment(merchant: Merchant, value = '30.00') {
  const res = await merchant.pay(paymentBody(merchant.pos.id, value));
  expect(res.status, res.text).toBe(201);
  expect(res.body.data.status).toBe('approved');
  return res.body.data.id as string;
}

async function refund(merchant: Merchant, paymentId: string) {
  const res = await postIdempotent(`/v1/payments/${paymentId}/refunds`, merchant.key.secret, {
    amount: { value: '1.00', currency: 'USD' },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.data.id as string;
}

async function openDispute(merchant: Merchant, paymentId: string) {
  const res = await call('POST', `/v1/test-helpers/payments/${paymentId}/dispute`, {
    token: merchant.key.secret,
    body: { amount: { value: '1.00', currency: 'USD' }, reason: 'fraudulent' },
  });
  expect(res.status, res.text).toBe(200);
  return res.body.data.id as string;
}

async function closeDispute(merchant: Merchant, disputeId: string) {
  const res = await call('POST', `/v1/test-helpers/disputes/${disputeId}/close`, {
    token: merchant.key.secret,
    body: { outcome: 'won' },
  });
  expect(res.status, res.text).toBe(200);
}

describe('a payment’s refunds, events and disputes', () => {
  let paymentId: string;
  let siblingRefund: string;
  let siblingEvent: string;
  let siblingDispute: string;
  let theirRefund: string;
  let theirEvent: string;
  let theirDispute: string;

  beforeAll(async () => {
    paymentId = await approvedPayment(m);
    for (let i = 0; i < 3; i++) await refund(m, paymentId);
    await closeDispute(m, await openDispute(m, paymentId));
    await openDispute(m, paymentId);
    // The same owner's other payment, and another owner's: their items are not this payment's.
    const sibling = await approvedPayment(m);
    siblingRefund = await refund(m, sibling);
    siblingDispute = await openDispute(m, sibling);
    siblingEvent = ids(await call('GET', `/v1/payments/${sibling}/events`, { token: m.key.secret }))[0]!;
    const theirs = await approvedPayment(other);
    theirRefund = await refund(other, theirs);
    theirDispute = await openDispute(other, theirs);
    theirEvent = ids(await call('GET', `/v1/payments/${theirs}/events`, { token: other.key.secret }))[0]!;
  });

  it('GET /v1/payments/{payment_id}/refunds', async () => {
    await expectCursorPaging({
      path: `/v1/payments/${paymentId}/refunds`,
      token: () => m.key.secret,
      foreign: () => [siblingRefund, theirRefund, paymentId],
      atLeast: 3,
    });
  });

  it('GET /v1/payments/{payment_id}/events', async () => {
    await expectCursorPaging({
      path: `/v1/payments/${paymentId}/events`,
      token: () => m.key.secret,
      foreign: () => [siblingEvent, theirEvent],
      atLeast: 3,
    });
  });

  it('GET /v1/payments/{payment_id}/disputes', async () => {
    await expectCursorPaging({
      path: `/v1/payments/${paymentId}/disputes`,
      token: () => m.key.secret,
      foreign: () => [siblingDispute, theirDispute],
      atLeast: 2,
    });
  });

  it('a payment the caller cannot see is 404 whatever the cursor', async () => {
    for (const list of ['refunds', 'events', 'disputes']) {
      const res = await call('GET', `/v1/payments/${paymentId}/${list}?starting_after=${randomId()}`, {
        token: other.key.secret,
      });
      expectError(res, 404, 'payment_not_found');
    }
  });

  it('GET /v1/events and GET /v1/disputes', async () => {
    await expectCursorPaging({
      path: '/v1/events',
      token: () => m.key.secret,
      foreign: () => [theirEvent],
      atLeast: 5,
    });
    await expectCursorPaging({
      path: '/v1/disputes',
      token: () => m.key.secret,
      foreign: () => [theirDispute],
      atLeast: 3,
    });
    // With a filter, the cursor keeps its place in the whole list.
    await expectCursorPaging({
      path: '/v1/disputes?status=won',
      token: () => m.key.secret,
      foreign: () => [theirDispute],
      atLeast: 1,
    });
  });
});

describe('the account’s lists', () => {
  let session: Session;
  let otherSession: Session;

  beforeAll(async () => {
    [session, otherSession] = await Promise.all([seedSession(), seedSession()]);
  });

  it('GET /v1/account/api-keys', async () => {
    for (let i = 0; i < 3; i++) await createKey(session, ['payments:read'], `key ${i}`);
    const theirs = await createKey(otherSession, ['payments:read']);
    await expectCursorPaging({
      path: '/v1/account/api-keys',
      token: () => session.accessToken,
      foreign: () => [theirs.id],
      atLeast: 3,
    });
  });

  it('GET /v1/account/payment-methods, and GET /v1/payment-methods for a user and for a key', async () => {
    const methods: string[] = [];
    for (let i = 0; i < 3; i++) methods.push((await createMethod(session)).id);
    const theirs = (await createMethod(otherSession)).id;
    const deleted = (await createMethod(session)).id;
    expect(
      (await call('DELETE', `/v1/account/payment-methods/${deleted}`, { token: session.accessToken })).status,
    ).toBe(204);
    const account = {
      path: '/v1/account/payment-methods',
      token: () => session.accessToken,
      foreign: () => [theirs, deleted],
      atLeast: 3,
    };
    await expectCursorPaging(account);
    await expectCursorPaging({ ...account, path: '/v1/payment-methods' });
    // A key sees the methods linked to it: the owner's unlinked method is one it cannot see.
    const key = await createKey(session, ['payment_methods:read']);
    await link(session, methods[0]!, key.id);
    await link(session, methods[2]!, key.id);
    await expectCursorPaging({
      path: '/v1/payment-methods',
      token: () => key.secret,
      foreign: () => [methods[1]!, theirs, deleted],
      atLeast: 2,
    });
  });

  it('GET /v1/account/webhook-endpoints', async () => {
    for (let i = 0; i < 3; i++) {
      await createEndpoint(session, { url: `https://hooks.example.com/${i}`, enabled_events: ['payment.approved'] });
    }
    const theirs = await createEndpoint(otherSession, {
      url: 'https://hooks.example.com/theirs',
      enabled_events: ['payment.approved'],
    });
    await expectCursorPaging({
      path: '/v1/account/webhook-endpoints',
      token: () => session.accessToken,
      foreign: () => [theirs.id],
      atLeast: 3,
    });
  });

  it('an admin pages another user’s keys, methods and endpoints by user_id', async () => {
    const admin = await seedSession({ role: 'admin' });
    for (const path of ['/v1/account/api-keys', '/v1/account/payment-methods', '/v1/account/webhook-endpoints']) {
      const own = ids(await call('GET', path, { token: session.accessToken }));
      const res = await call('GET', `${path}?user_id=${session.user.id}&starting_after=${own[0]}`, {
        token: admin.accessToken,
      });
      expect(res.status, res.text).toBe(200);
      expect(ids(res)).toEqual(own.slice(1));
    }
  });

  it('GET /v1/users (admins) and GET /v1/connectors', async () => {
    const admin = await seedSession({ role: 'admin' });
    await Promise.all([seedSession(), seedSession()]);
    // Every user an admin sees is in its list: no foreign id, only unknown ones.
    const users = { path: '/v1/users', token: () => admin.accessToken, foreign: () => [], atLeast: 3 };
    const first = ids(await page(users, 'limit=5'));
    expect(ids(await page(users, `limit=4&starting_after=${first[0]}`))).toEqual(first.slice(1));
    expect(ids(await page(users, `limit=1&ending_before=${first[1]}`))).toEqual([first[0]]);
    expectError(
      await call('GET', `/v1/users?starting_after=${randomId()}`, { token: admin.accessToken }),
      400,
      'invalid_request',
    );
    expectError(
      await call('GET', `/v1/users?starting_after=${first[0]}`, { token: session.accessToken }),
      403,
      'insufficient_role',
    );
    await expectCursorPaging({
      path: '/v1/connectors',
      token: () => session.accessToken,
      foreign: () => [],
      atLeast: 2,
    });
  });
});

describe('every list is answered from its index, by offset and by cursor', () => {
  const deps = () => createDeps(env, { shard: 'SHARD_0' });
  const scope = { ownerId: 'usr_plan', environment: 'test' as const };

  /** Every statement of every kind of page of `build`; the count of plans explained. */
  async function explainEveryPage(build: (page: Page) => PageStatements<unknown>, accepted: RegExp, allowed?: RegExp) {
    let explained = 0;
    for (const page of PAGE_KINDS)
      explained += await expectPageIndexed(build(page), accepted, JSON.stringify(page), allowed);
    return explained;
  }

  it('a payment’s refunds, events and disputes: a range of the payment’s index', async () => {
    expect(
      await explainEveryPage(
        (page) => refundListStatements(deps(), scope, 'pay_plan', page),
        /^SEARCH refunds USING (COVERING )?INDEX refunds_payment_idx \(payment_id=\?/,
      ),
    ).toBe(8);
    expect(
      await explainEveryPage(
        (page) => paymentEventListStatements(deps(), 'pay_plan', page),
        /^SEARCH payment_events USING (COVERING )?INDEX payment_events_payment_idx \(payment_id=\?/,
      ),
    ).toBe(8);
    expect(
      await explainEveryPage(
        (page) => paymentDisputeListStatements(deps(), 'pay_plan', page),
        /^SEARCH disputes USING (COVERING )?INDEX disputes_payment_idx \(payment_id=\?/,
      ),
    ).toBe(8);
  });

  it('the owner’s disputes and webhook endpoints: a range of an owner index', async () => {
    const build = (filters: DisputeFilters, page: Page) => disputeListStatements(deps(), scope, filters, page);
    expect(
      await expectEveryFilterCombinationIndexed<DisputeFilters>(
        { status: 'won' },
        build,
        /^SEARCH disputes USING (COVERING )?INDEX disputes_owner_(created|status)_idx \(owner_id=\? AND environment=\?/,
      ),
    ).toBe(2 * 8);
    expect(
      await explainEveryPage(
        (page) => endpointListStatements(deps(), 'usr_plan', page),
        /^SEARCH webhook_endpoints USING (COVERING )?INDEX webhook_endpoints_owner_idx \(owner_id=\? AND environment=\?/,
      ),
    ).toBe(8);
  });

  /**
   * The control database's indexes of keys, methods and users end at `created_at`, without the `id` that breaks
   * its ties: SQLite sorts the ties of the page's last `created_at` in a small B-tree (the LAST TERM of the order),
   * never the list. Users are not owned: an admin's page is the start of the whole index, read in its order.
   */
  const TIES = /^USE TEMP B-TREE FOR (LAST TERM|RIGHT PART) OF ORDER BY$/;

  it('the owner’s API keys and payment methods (for a user and for a key): a range of the owner’s index', async () => {
    expect(
      await explainEveryPage(
        (page) => apiKeyListStatements(deps(), 'usr_plan', page),
        /^SEARCH api_keys USING (COVERING )?INDEX api_keys_user_idx \(user_id=\?/,
        TIES,
      ),
    ).toBe(8);
    const methods =
      /^SEARCH payment_methods USING (COVERING )?INDEX payment_methods_owner_idx \(user_id=\? AND environment=\?|^(CORRELATED )?SCALAR SUBQUERY \d+$|^SEARCH api_key_payment_methods (EXISTS )?USING INDEX sqlite_autoindex_api_key_payment_methods_1 \(api_key_id=\? AND payment_method_id=\?\)$/;
    expect(
      await explainEveryPage((page) => accountPaymentMethodListStatements(deps(), 'usr_plan', page), methods, TIES),
    ).toBe(8);
    const key = { kind: 'api_key' as const, apiKeyId: 'key_plan', ownerId: 'usr_plan' };
    expect(await explainEveryPage((page) => publicPaymentMethodListStatements(deps(), key, page), methods, TIES)).toBe(
      8,
    );
  });

  it('users: the start of the users index (an offset page) or a range of it (a cursor page)', async () => {
    expect(
      await explainEveryPage(
        (page) => userListStatements(deps(), page),
        /^SEARCH users USING (COVERING )?INDEX users_created_at_idx \(created_at[<>]\?\)$/,
        new RegExp(`${TIES.source}|^SCAN users USING (COVERING )?INDEX users_created_at_idx$`),
      ),
    ).toBe(8);
  });
});
