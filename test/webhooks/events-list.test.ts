import { backdateEvents } from '../helpers/backdate.ts';
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Page } from '../../src/db/paging.ts';
import { createDeps } from '../../src/deps.ts';
import { PAYMENT_EVENT_TYPES } from '../../src/domain/payment-state.ts';
import { newId } from '../../src/lib/ids.ts';
import { eventListStatements, type EventFilters } from '../../src/services/webhooks/events.ts';
import { call, createKey, expectError, type ApiResponse } from '../helpers/api.ts';
import { paymentBody, postIdempotent, setupMerchant, type Merchant } from '../helpers/merchant.ts';
import { expectIndistinguishable, fieldsOf } from '../helpers/methods.ts';
import { expectEveryFilterCombinationIndexed } from '../helpers/query-plans.ts';
import { captureQueue, consumeOnce, eventIdsOf, receiver } from '../helpers/webhooks.ts';

/** GET /v1/events: how a merchant catches up on the events its receiver missed. */

const HOOK = 'https://hooks.example.com/webhooks';
const T0 = Date.parse('2026-11-01T00:00:00.000Z');
const HOUR = 3_600_000;

const listEvents = (token: string, query = '') => call('GET', `/v1/events${query ? `?${query}` : ''}`, { token });
const ids = (res: ApiResponse) => (res.body.data as Array<{ id: string }>).map((e) => e.id);

let m: Merchant;
let other: Merchant;

beforeAll(async () => {
  [m, other] = await Promise.all([setupMerchant(), setupMerchant()]);
});

async function pay(merchant: Merchant, method: string, value: string, extra: Record<string, unknown> = {}) {
  const res = await merchant.pay(paymentBody(method, value, extra));
  expect(res.status, res.text).toBe(201);
  return res.body.data as { id: string; status: string };
}

const setEventTimes = (paymentId: string, at: number) => backdateEvents(paymentId, at);

describe('GET /v1/events (listEvents)', () => {
  it('answers each event with the very body its webhook delivered, newest first; a receiver that was down catches up', async () => {
    const merchant = await setupMerchant();
    const queue = captureQueue();
    // The receiver is down: every delivery fails.
    const rx = receiver(() => new Response('down', { status: 503 }));
    try {
      const qr = await pay(merchant, merchant.qr.id, '30.00', { webhook_url: HOOK });
      expect((await postIdempotent(`/v1/test-helpers/payments/${qr.id}/approve`, merchant.key.secret)).status).toBe(
        200,
      );
      expect(
        (
          await postIdempotent(`/v1/payments/${qr.id}/refunds`, merchant.key.secret, {
            amount: { value: '10.00', currency: 'USD' },
          })
        ).status,
      ).toBe(201);
      // One delivery attempt each, all refused (the retries would fail alike).
      await consumeOnce(queue.pending.splice(0));
      const delivered = new Map(rx.requests.map((r) => [r.headers['webhook-id']!, JSON.parse(r.body)]));
      expect(delivered.size).toBe(3);

      const res = await listEvents(merchant.key.secret);
      expect(res.status, res.text).toBe(200);
      expect(res.body.pagination).toEqual({ limit: 50, offset: 0, total: 3, has_more: false });
      expect(res.body.data.map((e: { type: string }) => e.type)).toEqual([
        'payment.refunded',
        'payment.approved',
        'payment.pending',
      ]);
      expect(ids(res)).toEqual([...(await eventIdsOf(qr.id))].reverse());
      for (const event of res.body.data) {
        expect(Object.keys(event).sort()).toEqual(['created_at', 'data', 'id', 'type']);
        expect(event).toEqual(delivered.get(event.id));
      }
      expect(res.body.data[0].data.payment).toMatchObject({ id: qr.id, status: 'partially_refunded' });
    } finally {
      queue.restore();
      rx.restore();
    }
  });

  it('lists the events of payments without a webhook_url too, and every owner’s payment whichever credential made it', async () => {
    const merchant = await setupMerchant();
    const byKey = await pay(merchant, merchant.pos.id, '10.00');
    const byUser = await merchant.pay(paymentBody(merchant.pos.id, '11.00'), undefined, merchant.session.accessToken);
    const expected = [byUser.body.data.id, byKey.id];
    const viaKey = await listEvents(merchant.key.secret);
    expect(viaKey.body.data.map((e: { data: { payment: { id: string } } }) => e.data.payment.id)).toEqual(expected);
    const second = await createKey(merchant.session, ['payments:read']);
    expect(ids(await listEvents(second.secret))).toEqual(ids(viaKey));
    expect(ids(await listEvents(merchant.session.accessToken))).toEqual(ids(viaKey));
  });

  describe('filters and paging', () => {
    let merchant: Merchant;
    /** payment.approved (T0), payment.declined (T0+1h), payment.pending (T0+2h), payment.approved (T0+3h). */
    let events: Array<{ id: string; type: string; paymentId: string }>;

    beforeAll(async () => {
      merchant = await setupMerchant();
      const payments = [
        await pay(merchant, merchant.pos.id, '10.00'),
        await pay(merchant, merchant.pos.id, '10.51'),
        await pay(merchant, merchant.qr.id, '10.00'),
        await pay(merchant, merchant.pos.id, '12.00'),
      ];
      events = [];
      for (const [i, p] of payments.entries()) {
        await setEventTimes(p.id, T0 + i * HOUR);
        const [id] = await eventIdsOf(p.id);
        events.push({
          id: id!,
          type: ['payment.approved', 'payment.declined', 'payment.pending', 'payment.approved'][i]!,
          paymentId: p.id,
        });
      }
    });

    it('by type', async () => {
      expect(ids(await listEvents(merchant.key.secret, 'type=payment.approved'))).toEqual([
        events[3]!.id,
        events[0]!.id,
      ]);
      expect(ids(await listEvents(merchant.key.secret, 'type=payment.declined'))).toEqual([events[1]!.id]);
      expect((await listEvents(merchant.key.secret, 'type=payment.refunded')).body).toEqual({
        data: [],
        pagination: { limit: 50, offset: 0, total: 0, has_more: false },
      });
    });

    it('by payment_id', async () => {
      const res = await listEvents(merchant.key.secret, `payment_id=${events[2]!.paymentId}`);
      expect(ids(res)).toEqual([events[2]!.id]);
      expect(res.body.data[0].data.payment.id).toBe(events[2]!.paymentId);
    });

    it('by created_gte (inclusive) and created_lt (exclusive)', async () => {
      const at = (i: number) => new Date(T0 + i * HOUR).toISOString();
      expect(ids(await listEvents(merchant.key.secret, `created_gte=${at(2)}`))).toEqual([
        events[3]!.id,
        events[2]!.id,
      ]);
      expect(ids(await listEvents(merchant.key.secret, `created_lt=${at(1)}`))).toEqual([events[0]!.id]);
      expect(
        ids(
          await listEvents(
            merchant.key.secret,
            `created_gte=${encodeURIComponent('2026-10-31T21:00:00-03:00')}&created_lt=${at(2)}`,
          ),
        ),
      ).toEqual([events[1]!.id, events[0]!.id]);
    });

    it('combined', async () => {
      const res = await listEvents(
        merchant.key.secret,
        `type=payment.approved&created_gte=${new Date(T0 + 1).toISOString()}`,
      );
      expect(ids(res)).toEqual([events[3]!.id]);
      expect(res.body.pagination.total).toBe(1);
      expect(
        ids(
          await listEvents(
            merchant.key.secret,
            `type=payment.approved&payment_id=${events[0]!.paymentId}&created_lt=${new Date(T0 + 1).toISOString()}`,
          ),
        ),
      ).toEqual([events[0]!.id]);
      expect(
        ids(await listEvents(merchant.key.secret, `type=payment.declined&payment_id=${events[0]!.paymentId}`)),
      ).toEqual([]);
    });

    it('pages with limit and offset', async () => {
      const pages = [];
      for (let offset = 0; offset < 4; offset += 3) {
        const page = await listEvents(merchant.key.secret, `limit=3&offset=${offset}`);
        expect(page.body.pagination).toEqual({ limit: 3, offset, total: 4, has_more: offset === 0 });
        pages.push(...ids(page));
      }
      expect(pages).toEqual(events.map((e) => e.id).reverse());
      for (const [query, field] of [
        ['limit=0', 'query.limit'],
        ['limit=101', 'query.limit'],
        ['offset=-1', 'query.offset'],
      ]) {
        const bad = await listEvents(merchant.key.secret, query!);
        expectError(bad, 400, 'invalid_request');
        expect(fieldsOf(bad)).toEqual([field]);
      }
    });

    it('refuses an invalid filter with 400 naming it', async () => {
      for (const [query, field] of [
        ['type=payment.unknown', 'query.type'],
        ['type=approved', 'query.type'],
        ['payment_id=', 'query.payment_id'],
        [`payment_id=${'p'.repeat(129)}`, 'query.payment_id'],
        ['created_gte=2026-11-01', 'query.created_gte'],
        ['created_lt=tomorrow', 'query.created_lt'],
        ['event_type=payment.approved', 'query.event_type'],
      ]) {
        const res = await listEvents(merchant.key.secret, query!);
        expectError(res, 400, 'invalid_request');
        expect(fieldsOf(res), query).toEqual([field]);
      }
    });

    it('another owner’s payment_id answers exactly like a random one, and its events never show', async () => {
      const theirs = await pay(other, other.pos.id, '10.00');
      const foreign = await listEvents(merchant.key.secret, `payment_id=${theirs.id}`);
      const random = await listEvents(merchant.key.secret, `payment_id=${newId('pay')}`);
      expectIndistinguishable(foreign, random);
      expect(foreign.body).toEqual({ data: [], pagination: { limit: 50, offset: 0, total: 0, has_more: false } });
      const all = ids(await listEvents(merchant.key.secret, 'limit=100'));
      expect(all).not.toContain((await eventIdsOf(theirs.id))[0]);
    });
  });

  it('needs payments:read with an API key (403) and a credential (401)', async () => {
    const writer = await createKey(m.session, ['payments:create']);
    expect(expectError(await listEvents(writer.secret), 403, 'insufficient_scope').details).toEqual({
      required_scope: 'payments:read',
    });
    expectError(await call('GET', '/v1/events'), 401, 'unauthorized');
  });
});

describe('GET /v1/events: every query is served by an index', () => {
  const VALUES: Required<EventFilters> = {
    type: PAYMENT_EVENT_TYPES[1],
    paymentId: 'pay_plan',
    createdFrom: T0,
    createdBefore: T0 + HOUR,
  };
  /**
   * Accepted: a SEARCH of an owner index (owner and environment first) or, with `payment_id`, of the
   * payment's own index (one payment's events). Refused: any SCAN and a temporary B-tree for the order.
   */
  const SEARCH =
    /^SEARCH payment_events USING (COVERING )?INDEX (payment_events_owner_(created|type)_idx \(owner_id=\? AND environment=\?|payment_events_payment_idx \(payment_id=\?)/;

  it('explains the page, the total and the cursor of each of the 16 filter combinations, by offset and by cursor', async () => {
    const build = (filters: EventFilters, page: Page) =>
      eventListStatements(
        createDeps(env, { shard: 'SHARD_0' }),
        { ownerId: 'usr_plan', environment: 'test' },
        filters,
        page,
      );
    // The page, each statement of its total (from counters, but for one payment's events) and, by cursor, the cursor.
    expect(await expectEveryFilterCombinationIndexed(VALUES, build, SEARCH)).toBeGreaterThanOrEqual(16 * 8);
  });
});
