import { backdatePayment } from '../helpers/backdate.ts';
import { depsOfOwner } from '../helpers/shards.ts';
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { PAYMENT_STATUSES } from '../../src/domain/payment-state.ts';
import { paymentListStatements, type PaymentFilters } from '../../src/services/payments/reads.ts';
import { call, createKey, expectError, seedSession, type ApiResponse } from '../helpers/api.ts';
import {
  addSandboxMethod,
  linkMethod,
  paymentBody,
  postIdempotent,
  SANDBOX_POS,
  setupMerchant,
  type Merchant,
} from '../helpers/merchant.ts';
import { expectIndistinguishable, fieldsOf } from '../helpers/methods.ts';
import { expectEveryFilterCombinationIndexed } from '../helpers/query-plans.ts';
import { createDeps } from '../../src/deps.ts';
import type { Page } from '../../src/db/paging.ts';

/** GET /v1/payments: the caller's payments, newest first, filtered and paged, always from an index. */

const list = (token: string, query = '') => call('GET', `/v1/payments${query ? `?${query}` : ''}`, { token });
const ids = (res: ApiResponse) => (res.body.data as Array<{ id: string }>).map((p) => p.id);

const setCreatedAt = (paymentId: string, at: number) => backdatePayment(paymentId, at);

async function pay(m: Merchant, value: string, options: { method?: string; token?: string; reference?: string } = {}) {
  const res = await m.pay(
    paymentBody(options.method ?? m.pos.id, value, options.reference ? { external_reference: options.reference } : {}),
    undefined,
    options.token,
  );
  if (res.status !== 201) throw new Error(`payment failed: ${res.status} ${res.text}`);
  return res.body.data as { id: string; status: string; external_reference: string };
}

const T0 = Date.parse('2026-11-01T00:00:00.000Z');
const HOUR = 3_600_000;

describe('GET /v1/payments (listPayments)', () => {
  let m: Merchant;
  let other: Merchant;
  /** Oldest first: approved (POS, T0), declined (POS, T0+1h), pending (QR, T0+2h), failed (POS, T0+3h), approved by the user token (T0+4h). */
  let made: Array<{ id: string; status: string; external_reference: string }>;

  beforeAll(async () => {
    [m, other] = await Promise.all([setupMerchant(), setupMerchant()]);
    made = [
      await pay(m, '10.00'),
      await pay(m, '10.51'),
      await pay(m, '10.00', { method: m.qr.id }),
      await pay(m, '10.54'),
      await pay(m, '11.00', { token: m.session.accessToken }),
    ];
    for (const [i, p] of made.entries()) await setCreatedAt(p.id, T0 + i * HOUR);
    // Another owner's payments, at the same instants and with the same references, must never show.
    for (const [i, p] of made.entries()) {
      const theirs = await pay(other, '10.00', { reference: p.external_reference });
      await setCreatedAt(theirs.id, T0 + i * HOUR);
    }
  });

  it('answers the owner’s payments newest first, paged, as the payment resource', async () => {
    const res = await list(m.key.secret);
    expect(res.status, res.text).toBe(200);
    expect(ids(res)).toEqual(made.map((p) => p.id).reverse());
    expect(res.body.pagination).toEqual({ limit: 50, offset: 0, total: 5, has_more: false });
    expect(res.body.data.map((p: { status: string }) => p.status)).toEqual([
      'approved',
      'failed',
      'pending',
      'declined',
      'approved',
    ]);
    // The same representation as a read: a pending QR payment carries its action.
    const read = await call('GET', `/v1/payments/${made[2]!.id}`, { token: m.key.secret });
    expect(res.body.data[2]).toEqual(read.body.data);
    expect(res.body.data[2].action).toMatchObject({ type: 'display_qr' });
  });

  it('breaks ties of created_at by id, descending, so pages never overlap', async () => {
    const m2 = await setupMerchant();
    const same = [await pay(m2, '1.00'), await pay(m2, '2.00'), await pay(m2, '3.00'), await pay(m2, '4.00')];
    for (const p of same) await setCreatedAt(p.id, T0);
    const expected = same
      .map((p) => p.id)
      .sort()
      .reverse();
    const pages = [];
    for (let offset = 0; offset < 4; offset += 1)
      pages.push(...ids(await list(m2.key.secret, `limit=1&offset=${offset}`)));
    expect(pages).toEqual(expected);
  });

  it('an API key sees every payment of its owner (another key’s, the user token’s); the user token sees the same', async () => {
    const second = await createKey(m.session, ['payments:read']);
    const byKey = ids(await list(m.key.secret));
    expect(ids(await list(second.secret))).toEqual(byKey);
    expect(ids(await list(m.session.accessToken))).toEqual(byKey);
    expect(byKey).toContain(made[4]!.id);
  });

  it('filters by external_reference, exactly', async () => {
    const reference = made[1]!.external_reference;
    const res = await list(m.key.secret, `external_reference=${encodeURIComponent(reference)}`);
    expect(ids(res)).toEqual([made[1]!.id]);
    expect(res.body.pagination.total).toBe(1);
    // Exact: a prefix or another case finds nothing.
    expect(ids(await list(m.key.secret, `external_reference=${encodeURIComponent(reference.slice(0, -1))}`))).toEqual(
      [],
    );
    expect(ids(await list(m.key.secret, `external_reference=${encodeURIComponent(reference.toUpperCase())}`))).toEqual(
      [],
    );
  });

  it('filters by status', async () => {
    expect(ids(await list(m.key.secret, 'status=approved'))).toEqual([made[4]!.id, made[0]!.id]);
    expect(ids(await list(m.key.secret, 'status=pending'))).toEqual([made[2]!.id]);
    const none = await list(m.key.secret, 'status=refunded');
    expect(none.body).toEqual({ data: [], pagination: { limit: 50, offset: 0, total: 0, has_more: false } });
  });

  it('filters by payment_method', async () => {
    expect(ids(await list(m.key.secret, `payment_method=${m.qr.id}`))).toEqual([made[2]!.id]);
    expect(ids(await list(m.key.secret, `payment_method=${m.pos.id}`))).toEqual([
      made[4]!.id,
      made[3]!.id,
      made[1]!.id,
      made[0]!.id,
    ]);
  });

  it('filters by created_gte (inclusive) and created_lt (exclusive), in UTC or with an offset', async () => {
    const at = (i: number) => new Date(T0 + i * HOUR).toISOString();
    expect(ids(await list(m.key.secret, `created_gte=${at(3)}`))).toEqual([made[4]!.id, made[3]!.id]);
    expect(ids(await list(m.key.secret, `created_lt=${at(1)}`))).toEqual([made[0]!.id]);
    expect(ids(await list(m.key.secret, `created_gte=${at(1)}&created_lt=${at(3)}`))).toEqual([
      made[2]!.id,
      made[1]!.id,
    ]);
    // T0 + 1h is 2026-11-01T03:00:00+02:00; a millisecond later excludes it.
    expect(
      ids(
        await list(m.key.secret, `created_gte=${encodeURIComponent('2026-11-01T03:00:00+02:00')}&created_lt=${at(2)}`),
      ),
    ).toEqual([made[1]!.id]);
    expect(
      ids(
        await list(
          m.key.secret,
          `created_gte=${encodeURIComponent('2026-11-01T03:00:00.001+02:00')}&created_lt=${at(2)}`,
        ),
      ),
    ).toEqual([]);
    expect(ids(await list(m.key.secret, `created_gte=${at(3)}&created_lt=${at(3)}`))).toEqual([]);
  });

  it('combines filters', async () => {
    const res = await list(
      m.key.secret,
      `status=approved&payment_method=${m.pos.id}&created_gte=${new Date(T0 + HOUR).toISOString()}`,
    );
    expect(ids(res)).toEqual([made[4]!.id]);
    expect(res.body.pagination.total).toBe(1);
    const reference = made[0]!.external_reference;
    expect(
      ids(
        await list(
          m.key.secret,
          `external_reference=${reference}&status=approved&payment_method=${m.pos.id}&created_lt=${new Date(T0 + 1).toISOString()}`,
        ),
      ),
    ).toEqual([made[0]!.id]);
    expect(ids(await list(m.key.secret, `external_reference=${reference}&status=declined`))).toEqual([]);
  });

  it('pages with limit and offset; total counts every match; has_more says whether a next page has any', async () => {
    const first = await list(m.key.secret, 'limit=2');
    expect(first.body.pagination).toEqual({ limit: 2, offset: 0, total: 5, has_more: true });
    const second = await list(m.key.secret, 'limit=2&offset=2');
    expect(second.body.pagination.has_more).toBe(true);
    const third = await list(m.key.secret, 'limit=2&offset=4');
    expect(third.body.pagination).toEqual({ limit: 2, offset: 4, total: 5, has_more: false });
    expect([...ids(first), ...ids(second), ...ids(third)]).toEqual(made.map((p) => p.id).reverse());
    // Exactly a page left: no more after it.
    expect((await list(m.key.secret, 'limit=2&offset=3')).body.pagination.has_more).toBe(false);
    const past = await list(m.key.secret, 'offset=100');
    expect(past.body).toEqual({ data: [], pagination: { limit: 50, offset: 100, total: 5, has_more: false } });
    expect((await list(m.key.secret, 'limit=100')).body.pagination.limit).toBe(100);
    expect((await list(m.key.secret, 'status=approved&limit=1')).body.pagination).toEqual({
      limit: 1,
      offset: 0,
      total: 2,
      has_more: true,
    });
  });

  it('refuses out-of-bounds paging with 400 naming the parameter', async () => {
    for (const [query, field] of [
      ['limit=0', 'query.limit'],
      ['limit=101', 'query.limit'],
      ['limit=1.5', 'query.limit'],
      ['offset=-1', 'query.offset'],
      ['offset=x', 'query.offset'],
    ]) {
      const res = await list(m.key.secret, query!);
      expectError(res, 400, 'invalid_request');
      expect(fieldsOf(res), query).toEqual([field]);
    }
  });

  it('refuses an invalid filter value with 400 naming the field, never echoing the value', async () => {
    const cases: Array<[string, string]> = [
      ['status=paid', 'query.status'],
      ['status=', 'query.status'],
      ['payment_method=not-a-uuid', 'query.payment_method'],
      ['external_reference=', 'query.external_reference'],
      [`external_reference=${'r'.repeat(129)}`, 'query.external_reference'],
      ['created_gte=yesterday', 'query.created_gte'],
      // A date alone, or a time without `Z` or an offset, is not an instant.
      ['created_gte=2026-11-01', 'query.created_gte'],
      ['created_lt=2026-11-01T00:00:00', 'query.created_lt'],
      ['created_lt=2026-02-30T00:00:00Z', 'query.created_lt'],
      ['created_lt=1762000000000', 'query.created_lt'],
      // One value per filter.
      ['status=approved&status=declined', 'query.status'],
      // A misspelt filter is refused rather than ignored (it would answer the unfiltered list).
      ['statuss=approved', 'query.statuss'],
    ];
    for (const [query, field] of cases) {
      const res = await list(m.key.secret, query);
      expectError(res, 400, 'invalid_request');
      expect(fieldsOf(res), query).toEqual([field]);
      expect(res.text, query).not.toMatch(/yesterday|not-a-uuid|paid"|1762000000000/);
    }
  });

  it('another owner’s references and methods answer exactly like random ones: no payment', async () => {
    const theirReference = (await list(other.key.secret)).body.data[0].external_reference as string;
    const random = await list(m.key.secret, `external_reference=no-such-reference-${crypto.randomUUID()}`);
    // The other owner's payments carry the same references as ours: each finds only our own.
    const shared = await list(m.key.secret, `external_reference=${encodeURIComponent(theirReference)}`);
    expect(ids(shared)).toHaveLength(1);
    expect(made.map((p) => p.id)).toContain(ids(shared)[0]);
    const theirMethod = await list(m.key.secret, `payment_method=${other.pos.id}`);
    const randomMethod = await list(m.key.secret, `payment_method=${crypto.randomUUID()}`);
    expectIndistinguishable(theirMethod, randomMethod);
    expect(theirMethod.body).toEqual(random.body);
    expect(theirMethod.body).toEqual({ data: [], pagination: { limit: 50, offset: 0, total: 0, has_more: false } });
  });

  it('needs payments:read with an API key (403), and a credential (401)', async () => {
    const writer = await createKey(m.session, ['payments:create']);
    await linkMethod(m.session, m.pos.id, writer.id);
    const error = expectError(await list(writer.secret), 403, 'insufficient_scope');
    expect(error.details).toEqual({ required_scope: 'payments:read' });
    expectError(await call('GET', '/v1/payments'), 401, 'unauthorized');
    expectError(await list('sk_test_not-a-real-key-000000000000000000000000'), 401, 'unauthorized');
  });

  it('an admin lists only its own payments', async () => {
    const admin = await seedSession({ role: 'admin' });
    const method = await addSandboxMethod(admin, SANDBOX_POS);
    const own = await postIdempotent('/v1/payments', admin.accessToken, paymentBody(method.id, '5.00'));
    expect(own.status).toBe(201);
    expect(ids(await list(admin.accessToken))).toEqual([own.body.data.id]);
  });
});

describe('GET /v1/payments: cursor paging (starting_after, ending_before)', () => {
  let w: Merchant;
  /** Newest first, as listed: seven payments, the middle three made at one instant (a tie broken by id). */
  let listed: string[];

  beforeAll(async () => {
    w = await setupMerchant();
    const made = [];
    for (let i = 0; i < 7; i++) made.push(await pay(w, `${i + 1}.00`));
    const at = [0, 1, 2, 2, 2, 3, 4];
    for (const [i, p] of made.entries()) await setCreatedAt(p.id, T0 + at[i]! * HOUR);
    listed = ids(await list(w.key.secret));
    expect(listed).toHaveLength(7);
  });

  /** Pages of `limit` from `query`, following `starting_after` (or `ending_before`) while `has_more`. */
  async function walk(
    direction: 'starting_after' | 'ending_before',
    from: string | null,
    limit: number,
    between = async () => {},
  ) {
    const pages: ApiResponse[] = [];
    let cursor = from;
    for (;;) {
      const res = await list(w.key.secret, `limit=${limit}${cursor === null ? '' : `&${direction}=${cursor}`}`);
      expect(res.status, res.text).toBe(200);
      pages.push(res);
      if (!res.body.pagination.has_more) return pages;
      const page = ids(res);
      cursor = (direction === 'starting_after' ? page.at(-1) : page[0])!;
      await between();
    }
  }

  it('starting_after walks every payment once, newest first, while payments are being made', async () => {
    const before = [...listed];
    const madeDuring: string[] = [];
    const pages = await walk('starting_after', null, 2, async () => {
      madeDuring.push((await pay(w, '9.99')).id);
    });
    const walked = pages.flatMap(ids);
    // New payments are newer than every page already read: a forward walk neither repeats nor skips one.
    expect(walked).toEqual(before);
    expect(new Set(walked).size).toBe(walked.length);
    expect(madeDuring).toHaveLength(3);
    for (const id of madeDuring) expect(walked).not.toContain(id);
    expect(pages.map((p) => p.body.pagination.has_more)).toEqual([true, true, true, false]);
    // A cursor page answers offset 0 and the list's total, which counts the new payments too.
    expect(pages.at(-1)!.body.pagination).toEqual({ limit: 2, offset: 0, total: 10, has_more: false });
    // An offset walk over the same change would have met a payment twice: the offsets moved under it.
    const first = ids(await list(w.key.secret, 'limit=2'));
    await pay(w, '9.98');
    expect(ids(await list(w.key.secret, 'limit=2&offset=2'))[0]).toBe(first[1]);
    listed = ids(await list(w.key.secret));
  });

  it('ending_before walks back to the newest, each page in the list’s order, reaching payments made meanwhile', async () => {
    const oldest = listed.at(-1)!;
    const pages = await walk('ending_before', oldest, 3);
    // Pages come newest-last as the walk goes back up the list; each page itself is newest first.
    const walked = pages.reverse().flatMap(ids);
    expect(walked).toEqual(listed.slice(0, -1));
    const newest = await pay(w, '9.97');
    const again = await list(w.key.secret, `limit=3&ending_before=${listed[0]}`);
    expect(ids(again)).toEqual([newest.id]);
    expect(again.body.pagination.has_more).toBe(false);
    listed = [newest.id, ...listed];
  });

  it('a page after or before one item is the items next to it, across a tie of created_at', async () => {
    for (let at = 0; at < listed.length; at++) {
      const after = await list(w.key.secret, `limit=2&starting_after=${listed[at]}`);
      expect(ids(after), `after ${at}`).toEqual(listed.slice(at + 1, at + 3));
      expect(after.body.pagination.has_more, `after ${at}`).toBe(at + 3 < listed.length);
      const before = await list(w.key.secret, `limit=2&ending_before=${listed[at]}`);
      expect(ids(before), `before ${at}`).toEqual(listed.slice(Math.max(0, at - 2), at));
      expect(before.body.pagination.has_more, `before ${at}`).toBe(at - 2 > 0);
    }
  });

  it('takes the cursor’s place in the whole list, so a filter may change between pages', async () => {
    const all = await call('GET', `/v1/payments?limit=100`, { token: w.key.secret });
    const statuses = new Map<string, string>(
      all.body.data.map((p: { id: string; status: string }) => [p.id, p.status]),
    );
    const cursor = listed[3]!;
    const other = statuses.get(cursor) === 'approved' ? 'declined' : 'approved';
    const res = await list(w.key.secret, `status=${other}&starting_after=${cursor}`);
    expect(res.status, res.text).toBe(200);
    expect(ids(res)).toEqual(listed.slice(4).filter((id) => statuses.get(id) === other));
  });

  it('refuses an id the caller cannot see exactly as a random one: 400 naming the parameter', async () => {
    const theirs = (await pay(await setupMerchant(), '1.00')).id;
    const refund = await postIdempotent(`/v1/payments/${listed[1]}/refunds`, w.key.secret, {
      amount: { value: '0.01', currency: 'USD' },
    });
    expect(refund.status, refund.text).toBe(201);
    for (const parameter of ['starting_after', 'ending_before']) {
      const random = await list(w.key.secret, `${parameter}=pay_${crypto.randomUUID().replaceAll('-', '')}`);
      const error = expectError(random, 400, 'invalid_request');
      expect(error.message).toContain(parameter);
      expect(fieldsOf(random)).toEqual([`query.${parameter}`]);
      expectIndistinguishable(await list(w.key.secret, `${parameter}=${theirs}`), random);
      // Not a payment at all (the caller's own refund), or nothing the list could hold.
      expectIndistinguishable(await list(w.key.secret, `${parameter}=${refund.body.data.id}`), random);
      expectError(await list(w.key.secret, `${parameter}=`), 400, 'invalid_request');
      expect(fieldsOf(await list(w.key.secret, `${parameter}=${'p'.repeat(129)}`))).toEqual([`query.${parameter}`]);
    }
  });

  it('refuses both cursors at once, and a cursor with an offset', async () => {
    const both = await list(w.key.secret, `starting_after=${listed[1]}&ending_before=${listed[3]}`);
    expectError(both, 400, 'invalid_request');
    expect(fieldsOf(both)).toEqual(['query.starting_after', 'query.ending_before']);
    for (const parameter of ['starting_after', 'ending_before']) {
      const res = await list(w.key.secret, `${parameter}=${listed[1]}&offset=1`);
      expect(expectError(res, 400, 'invalid_request').message).toContain(parameter);
      expect(fieldsOf(res)).toEqual(['query.offset']);
      // offset=0 is no offset.
      expect((await list(w.key.secret, `${parameter}=${listed[1]}&offset=0`)).status).toBe(200);
    }
  });

  it('answers offsets up to 10,000; deeper is 400 naming starting_after', async () => {
    const deepest = await list(w.key.secret, 'offset=10000&limit=100');
    expect(deepest.body).toEqual({
      data: [],
      pagination: { limit: 100, offset: 10000, total: listed.length, has_more: false },
    });
    for (const offset of ['10001', '2147483647']) {
      const res = await list(w.key.secret, `offset=${offset}`);
      const error = expectError(res, 400, 'invalid_request');
      expect(error.message).toMatch(/offset is at most 10000.*starting_after/);
      expect(fieldsOf(res)).toEqual(['query.offset', 'query.starting_after']);
    }
  });
});

describe('GET /v1/payments: every query is served by an index', () => {
  const VALUES: Required<PaymentFilters> = {
    externalReference: 'order-1',
    status: 'approved',
    paymentMethodId: crypto.randomUUID(),
    createdFrom: T0,
    createdBefore: T0 + HOUR,
  };
  /**
   * Accepted: every step of the plan is a SEARCH of one of the list's indexes keyed by owner and
   * environment (a range of the caller's own rows). Refused: any SCAN (of the table, or a whole index),
   * and a temporary B-tree for the order (the index must hold it, so a page stops after `limit` rows).
   */
  const SEARCH =
    /^SEARCH payments USING (COVERING )?INDEX payments_owner_(created|status|method|reference)_idx \(owner_id=\? AND environment=\?/;

  it('explains the page, the total and the cursor of each of the 32 filter combinations, by offset and by cursor', async () => {
    const deps = createDeps(env, { shard: 'SHARD_0' });
    const build = (filters: PaymentFilters, page: Page) =>
      paymentListStatements(deps, { ownerId: 'usr_plan', environment: 'test' }, filters, page);
    // Per combination: the page, each statement of its total (a created range's is one per span of buckets and per edge,
    // read from counters) and, by cursor, the cursor: at least 8 statements.
    expect(await expectEveryFilterCombinationIndexed(VALUES, build, SEARCH)).toBeGreaterThanOrEqual(32 * 8);
  });

  it('the statements are the ones the route runs: the same answer as the route for a filter', async () => {
    const m = await setupMerchant();
    const p = await pay(m, '10.00');
    const { rows, total } = paymentListStatements(
      await depsOfOwner(m.session.user.id),
      { ownerId: m.session.user.id, environment: 'test' },
      { status: 'approved' },
      { limit: 50, offset: 0 },
    );
    // One row more than the page is asked for, to tell whether more follow.
    expect(rows.toSQL().params.at(-1)).toBe(51);
    expect((await rows).map((r) => r.id)).toEqual([p.id]);
    // Its total is the counters', read in the same batch.
    expect(total.total(await Promise.all(total.statements))).toBe(1);
    expect(ids(await list(m.key.secret, 'status=approved'))).toEqual([p.id]);
  });

  it('covers every payment status as a filter value', async () => {
    const m = await setupMerchant();
    for (const status of PAYMENT_STATUSES)
      expect((await list(m.key.secret, `status=${status}`)).status, status).toBe(200);
  });
});
