import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { createDeps } from '../../src/deps.ts';
import { chooseShard } from '../../src/domain/shard-policy.ts';
import {
  clearPlacementCache,
  DIRECTORY_CACHE_MS,
  ownersPerShard,
  placementOf,
} from '../../src/services/shards/directory.ts';
import { call, expectError, seedSession, type Session } from '../helpers/api.ts';
import { approvedPayment, countRows, newOwner as createOwner, ownerRows } from '../helpers/owners.ts';
import { postIdempotent } from '../helpers/merchant.ts';
import { fetchWith, metered, SHARDS, shardOf } from '../helpers/shards.ts';
import { captureQueue } from '../helpers/webhooks.ts';

let admin: Session;

beforeAll(async () => {
  admin = await seedSession({ role: 'admin' });
  // The admin's own first request places it: done here, so the tests below count owners after it.
  expect((await call('GET', `/v1/users/${admin.user.id}/placement`, { token: admin.accessToken })).status).toBe(200);
});

const newOwner = () => createOwner(admin);

describe('the directory', () => {
  it('places new owners on the shard with the fewest owners, ties to the lowest index: two new owners alternate', async () => {
    const deps = createDeps(env);
    const before = await ownersPerShard(deps);
    const expected = chooseShard(deps.shards, before).name;
    const a = await newOwner();
    expect(await shardOf(a.id)).toBe(expected);
    const afterA = await ownersPerShard(deps);
    const b = await newOwner();
    expect(await shardOf(b.id)).toBe(chooseShard(deps.shards, afterA).name);
    // From a balanced start (a fresh deployment), consecutive owners land on different shards.
    if ((before.get('SHARD_0') ?? 0) === (before.get('SHARD_1') ?? 0)) expect(await shardOf(b.id)).not.toBe(expected);
  });

  it('the policy itself: fewest owners first, the lowest index on a tie', () => {
    const shards = [
      { name: 'SHARD_0', index: 0 },
      { name: 'SHARD_1', index: 1 },
      { name: 'SHARD_2', index: 2 },
    ];
    expect(chooseShard(shards, new Map()).name).toBe('SHARD_0');
    expect(chooseShard(shards, new Map([['SHARD_0', 1]])).name).toBe('SHARD_1');
    expect(
      chooseShard(
        shards,
        new Map([
          ['SHARD_0', 1],
          ['SHARD_1', 1],
        ]),
      ).name,
    ).toBe('SHARD_2');
    expect(
      chooseShard(
        shards,
        new Map([
          ['SHARD_0', 2],
          ['SHARD_1', 1],
          ['SHARD_2', 1],
        ]),
      ).name,
    ).toBe('SHARD_1');
    expect(() => chooseShard([], new Map())).toThrow(/SHARD_0/);
  });

  it('is cached in the isolate for DIRECTORY_CACHE_MS, then read again', async () => {
    const owner = await newOwner();
    const deps = createDeps(env);
    clearPlacementCache();
    const now = Date.now();
    const first = await placementOf(deps, owner.id, now);
    const other = first.shard === 'SHARD_0' ? 'SHARD_1' : 'SHARD_0';
    await env.DB.prepare('UPDATE owner_placements SET moving_to = ? WHERE owner_id = ?').bind(other, owner.id).run();
    expect((await placementOf(deps, owner.id, now + DIRECTORY_CACHE_MS - 1)).movingTo).toBeNull();
    expect((await placementOf(deps, owner.id, now + DIRECTORY_CACHE_MS)).movingTo).toBe(other);
    await env.DB.prepare('UPDATE owner_placements SET moving_to = NULL WHERE owner_id = ?').bind(owner.id).run();
    clearPlacementCache();
  });

  it('GET /v1/users/{user_id}/placement: admins only; an unknown user is 404', async () => {
    const owner = await newOwner();
    const res = await call('GET', `/v1/users/${owner.id}/placement`, { token: admin.accessToken });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ user_id: owner.id, shard: await shardOf(owner.id), moving_to: null });
    expectError(
      await call('GET', `/v1/users/${owner.id}/placement`, { token: owner.session.accessToken }),
      403,
      'insufficient_role',
    );
    expectError(await call('GET', `/v1/users/${owner.id}/placement`, { token: owner.key.secret }), 401, 'unauthorized');
    expectError(
      await call('GET', '/v1/users/usr_nobody/placement', { token: admin.accessToken }),
      404,
      'user_not_found',
    );
    const bad = await call('PUT', `/v1/users/${owner.id}/placement`, {
      token: admin.accessToken,
      body: { shard: 'SHARD_9' },
    });
    expectError(bad, 400, 'invalid_request');
    expectError(
      await call('PUT', `/v1/users/${owner.id}/placement`, { token: admin.accessToken, body: { shard: 'DB' } }),
      400,
      'invalid_request',
    );
  });
});

describe('routing: one owner, one shard', () => {
  it("each owner's rows are in exactly one shard, and its requests never touch another shard", async () => {
    const [a, b] = [await newOwner(), await newOwner()];
    const captured = captureQueue();
    try {
      for (const owner of [a, b]) {
        const id = await approvedPayment(owner);
        const refund = await postIdempotent(`/v1/payments/${id}/refunds`, owner.key.secret, {
          amount: { value: '5.00', currency: 'USD' },
        });
        expect(refund.status, refund.text).toBe(201);
        const endpoint = await call('POST', '/v1/account/webhook-endpoints', {
          token: owner.session.accessToken,
          body: { url: 'https://hooks.example.com/a', enabled_events: ['*'] },
        });
        expect(endpoint.status, endpoint.text).toBe(201);
      }
    } finally {
      captured.restore();
    }
    for (const owner of [a, b]) {
      const home = (await shardOf(owner.id))!;
      for (const { name, d1 } of SHARDS) {
        const rows = countRows(await ownerRows(d1, owner.id));
        if (name === home) expect(rows).toBeGreaterThan(0);
        else expect(rows).toBe(0);
      }
    }

    // Through the Worker with a meter on each shard: reads and (non-idempotent) writes of one owner go to its shard.
    clearPlacementCache();
    for (const owner of [a, b]) {
      const home = (await shardOf(owner.id))!;
      const counters: Record<string, { statements: number }> = {
        SHARD_0: { statements: 0 },
        SHARD_1: { statements: 0 },
      };
      const bindings = {
        ...env,
        SHARD_0: metered(env.SHARD_0, counters.SHARD_0!),
        SHARD_1: metered(env.SHARD_1, counters.SHARD_1!),
      };
      expect((await fetchWith(bindings, 'GET', '/v1/payments', owner.key.secret)).status).toBe(200);
      expect((await fetchWith(bindings, 'GET', '/v1/events', owner.key.secret)).status).toBe(200);
      const list = await fetchWith(bindings, 'GET', '/v1/account/webhook-endpoints', owner.session.accessToken);
      expect(list.status).toBe(200);
      const patched = await fetchWith(
        bindings,
        'PATCH',
        `/v1/account/webhook-endpoints/${list.body.data[0].id}`,
        owner.session.accessToken,
        { description: 'metered' },
      );
      expect(patched.status).toBe(200);
      expect(counters[home]!.statements).toBeGreaterThan(0);
      expect(counters[home === 'SHARD_0' ? 'SHARD_1' : 'SHARD_0']!.statements).toBe(0);
    }
  });

  it('a read bookmark names its shard; one from another shard reads at the primary instead of failing', async () => {
    const owner = await newOwner();
    const id = await approvedPayment(owner);
    const read = await call('GET', `/v1/payments/${id}`, { token: owner.key.secret });
    const bookmark = read.headers.get('x-read-bookmark')!;
    expect(bookmark.startsWith(`${await shardOf(owner.id)}:`)).toBe(true);
    const foreign = (await shardOf(owner.id)) === 'SHARD_0' ? 'SHARD_1' : 'SHARD_0';
    const again = await call('GET', `/v1/payments/${id}`, {
      token: owner.key.secret,
      headers: { 'X-Read-Bookmark': `${foreign}:${bookmark.slice(bookmark.indexOf(':') + 1)}` },
    });
    expect(again.status, again.text).toBe(200);
  });
});
