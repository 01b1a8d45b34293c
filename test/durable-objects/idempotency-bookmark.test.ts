import { runDurableObjectAlarm } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import type { ShardName } from '../../src/db/shards.ts';
import { primaryBookmark } from '../../src/deps.ts';
import { idempotencyScope } from '../../src/domain/idempotency.ts';
import type { ApiResponse } from '../helpers/api.ts';
import { type Merchant, paymentBody, postIdempotent, setupMerchant } from '../helpers/merchant.ts';
import { shardOf } from '../helpers/shards.ts';

/**
 * The idempotency object queries the shard through the binding (at the primary) and only the operation's
 * last write through a D1 session, whose bookmark its answer carries (durable-objects/idempotency-store.ts).
 * That bookmark must still be past every write the operation made, so a read sent with it sees them from any
 * replica. Locally (miniflare's D1 object) a bookmark's second field counts the database's transactions, reads
 * included (the first test pins it): so the answer's bookmark is past every write of the operation when the
 * primary's, taken right after the answer, is the very next transaction (the one taking it), nothing else
 * writing to the shard meanwhile (these merchants have no webhooks).
 */
async function shardOfMerchant(m: Merchant): Promise<ShardName> {
  return (await shardOf(m.session.user.id))!;
}

/** The transaction count of a bookmark as the API gives it (`SHARD_n:<D1 bookmark>`, db/shards.ts). */
const position = (bookmark: string) => Number.parseInt(bookmark.slice(bookmark.indexOf(':') + 1).split('-')[1]!, 16);

function bookmarkOf(res: ApiResponse, shard: ShardName): string {
  const header = res.headers.get('x-read-bookmark');
  expect(header, res.text).toBeTruthy();
  expect(header!.startsWith(`${shard}:`)).toBe(true);
  return header!;
}

async function expectPastEveryWrite(res: ApiResponse, shard: ShardName, before: string) {
  const answered = bookmarkOf(res, shard);
  const after = (await primaryBookmark(env, shard))!;
  expect(position(answered)).toBeGreaterThan(position(before));
  expect(position(after) - position(answered), `${answered}, then ${after}`).toBe(1);
}

const refundOf = (m: Merchant, paymentId: string, value: string, key = crypto.randomUUID()) =>
  postIdempotent(`/v1/payments/${paymentId}/refunds`, m.key.secret, { amount: { value, currency: 'USD' } }, key);

describe("an idempotent answer's bookmark", () => {
  it('(the premise) locally, each D1 transaction moves the bookmark by one', async () => {
    const m = await setupMerchant();
    const shard = await shardOfMerchant(m);
    const first = (await primaryBookmark(env, shard))!;
    const second = (await primaryBookmark(env, shard))!;
    expect(position(second) - position(first)).toBe(1);
  });

  it('a create, a refund and a cancel answer with a bookmark past all of their writes', async () => {
    const m = await setupMerchant();
    const shard = await shardOfMerchant(m);

    let before = (await primaryBookmark(env, shard))!;
    const created = await m.pay(paymentBody(m.pos.id, '40.00'));
    expect(created.status, created.text).toBe(201);
    await expectPastEveryWrite(created, shard, before);

    before = (await primaryBookmark(env, shard))!;
    const refund = await refundOf(m, created.body.data.id, '5.00');
    expect(refund.status, refund.text).toBe(201);
    expect(refund.body.data.status).toBe('approved');
    await expectPastEveryWrite(refund, shard, before);

    const qr = await m.pay(paymentBody(m.qr.id, '41.00'));
    before = (await primaryBookmark(env, shard))!;
    const canceled = await postIdempotent(`/v1/payments/${qr.body.data.id}/cancel`, m.key.secret);
    expect(canceled.status, canceled.text).toBe(200);
    await expectPastEveryWrite(canceled, shard, before);
  });

  it('a refund the processor declines (written, then answered) carries one past its writes too', async () => {
    const m = await setupMerchant();
    const shard = await shardOfMerchant(m);
    const created = await m.pay(paymentBody(m.pos.id, '42.00'));
    const before = (await primaryBookmark(env, shard))!;
    // The sandbox declines a refund whose amount ends in 61 (docs/sandbox.md).
    const declined = await refundOf(m, created.body.data.id, '1.61');
    expect(declined.status, declined.text).toBe(201);
    expect(declined.body.data.status).toBe('declined');
    await expectPastEveryWrite(declined, shard, before);
  });

  it('an answer found done by a later try (the stored answer forgotten) has one from the primary, past its writes', async () => {
    const m = await setupMerchant();
    const shard = await shardOfMerchant(m);
    const key = crypto.randomUUID();
    const body = paymentBody(m.pos.id, '43.00');
    const first = await m.pay(body, key);
    expect(first.status).toBe(201);
    const stores = env.IDEMPOTENCY;
    expect(
      await runDurableObjectAlarm(stores.get(stores.idFromName(idempotencyScope(m.key.id, 'create_payment', key)))),
    ).toBe(true);

    const before = (await primaryBookmark(env, shard))!;
    const again = await m.pay(body, key);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(again.body.data.id).toBe(first.body.data.id);
    // Nothing written by this try: its bookmark is the primary's, past the first try's writes.
    await expectPastEveryWrite(again, shard, before);
  });

  it('an answer refused before anything was recorded carries none: nothing was written', async () => {
    const m = await setupMerchant();
    const created = await m.pay(paymentBody(m.pos.id, '44.00'));
    const tooMuch = await refundOf(m, created.body.data.id, '45.00');
    expect(tooMuch.status, tooMuch.text).toBe(422);
    expect(tooMuch.headers.get('x-read-bookmark')).toBeNull();
    const missing = await refundOf(m, 'pay_doesnotexist000000000', '1.00');
    expect(missing.status, missing.text).toBe(404);
    expect(missing.headers.get('x-read-bookmark')).toBeNull();
  });
});
