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
import { MOVE_SETTLE_MS, moveOwner, OWNER_TABLES } from '../../src/services/shards/move-owner.ts';
import { call, createKey, expectError, seedSession, type Session } from '../helpers/api.ts';
import { addSandboxMethod, linkMethod, paymentBody, postIdempotent, SANDBOX_POS } from '../helpers/merchant.ts';
import { fetchWith, metered, SHARDS, shardOf } from '../helpers/shards.ts';
import { captureQueue } from '../helpers/webhooks.ts';

let admin: Session;

beforeAll(async () => {
  admin = await seedSession({ role: 'admin' });
  // The admin's own first request places it: done here, so the tests below count owners after it.
  expect((await call('GET', `/v1/users/${admin.user.id}/placement`, { token: admin.accessToken })).status).toBe(200);
});

/** A merchant created through the API (so placed by the policy), with a sandbox POS method and a key. */
async function newOwner() {
  const email = `${crypto.randomUUID()}@example.com`;
  const password = 'correct-horse-battery-staple';
  const created = await call('POST', '/v1/users', {
    token: admin.accessToken,
    body: { email, name: 'Shop', password },
  });
  expect(created.status, created.text).toBe(201);
  const login = await call('POST', '/v1/auth/login', { body: { email, password } });
  expect(login.status, login.text).toBe(201);
  const session = {
    user: { ...created.body.data, password },
    accessToken: login.body.data.access_token,
    refreshToken: login.body.data.refresh_token,
  } as Session;
  const pos = await addSandboxMethod(session, SANDBOX_POS);
  const key = await createKey(session);
  await linkMethod(session, pos.id, key.id);
  return { id: created.body.data.id as string, session, pos, key };
}

type Owner = Awaited<ReturnType<typeof newOwner>>;

async function approvedPayment(owner: Owner, value = '40.00') {
  const res = await postIdempotent('/v1/payments', owner.key.secret, paymentBody(owner.pos.id, value));
  expect(res.status, res.text).toBe(201);
  const id = res.body.data.id as string;
  const approved = await call('POST', `/v1/test-helpers/payments/${id}/approve`, { token: owner.key.secret });
  expect(approved.status, approved.text).toBe(200);
  return id;
}

/** Every row of the owner in one shard database, per table, in key order. */
async function ownerRows(d1: D1Database, ownerId: string) {
  const methods = JSON.stringify(
    (
      await env.DB.prepare('SELECT id FROM payment_methods WHERE user_id = ?').bind(ownerId).all<{ id: string }>()
    ).results.map((m) => m.id),
  );
  const rows: Record<string, unknown[]> = {};
  for (const { table, owned, key } of OWNER_TABLES) {
    const statement = d1.prepare(`SELECT * FROM ${table} WHERE ${owned} ORDER BY ${key}`);
    rows[table] = (
      await (owned.includes('?2') ? statement.bind(ownerId, methods) : statement.bind(ownerId)).all()
    ).results;
  }
  return rows;
}

const countRows = (rows: Record<string, unknown[]>) => Object.values(rows).reduce((n, r) => n + r.length, 0);

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

describe('moving an owner between shards', () => {
  it('lists every shard table', async () => {
    const { results } = await env.SHARD_0.prepare(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name NOT LIKE 'd1_%'",
    ).all<{ name: string }>();
    expect(OWNER_TABLES.map((t) => t.table).sort()).toEqual(results.map((r) => r.name).sort());
  });

  it('copies and checks every row, flips the directory, deletes the old copy: nothing lost, nothing duplicated', async () => {
    const owner = await newOwner();
    const captured = captureQueue();
    let paymentId: string;
    try {
      paymentId = await approvedPayment(owner, '60.00');
      const refund = await postIdempotent(`/v1/payments/${paymentId}/refunds`, owner.key.secret, {
        amount: { value: '10.00', currency: 'USD' },
      });
      expect(refund.status, refund.text).toBe(201);
      // An endpoint, and a payment with a webhook: pending deliveries (the queue is captured, nothing consumed).
      await call('POST', '/v1/account/webhook-endpoints', {
        token: owner.session.accessToken,
        body: { url: 'https://hooks.example.com/m', enabled_events: ['*'] },
      });
      await postIdempotent(
        '/v1/payments',
        owner.key.secret,
        paymentBody(owner.pos.id, '12.00', { webhook_url: 'https://hooks.example.com/p' }),
      );
    } finally {
      captured.restore();
    }
    const from = (await shardOf(owner.id))!;
    const to = from === 'SHARD_0' ? 'SHARD_1' : 'SHARD_0';
    const database = (name: string) => SHARDS.find((s) => s.name === name)!.d1;
    const before = await ownerRows(database(from), owner.id);
    expect(before.payments).toHaveLength(2);
    expect(before.refunds).toHaveLength(1);
    expect(before.webhook_endpoints).toHaveLength(1);
    expect((before.webhook_deliveries as { status: string }[]).some((d) => d.status === 'pending')).toBe(true);

    const waits: number[] = [];
    const report = await moveOwner({
      deps: createDeps(env),
      input: { ownerId: owner.id, to },
      options: {
        wait: async (ms) => {
          waits.push(ms);
          // While it is marked: writes are refused (retryable, with Retry-After), reads work.
          if (waits.length === 1) {
            const write = await postIdempotent('/v1/payments', owner.key.secret, paymentBody(owner.pos.id, '1.00'));
            const error = expectError(write, 503, 'owner_moving');
            expect(error.retryable).toBe(true);
            expect(write.headers.get('retry-after')).toBe('5');
            expect((await call('GET', `/v1/payments/${paymentId}`, { token: owner.key.secret })).status).toBe(200);
          }
        },
      },
    });
    expect(waits).toEqual([MOVE_SETTLE_MS, DIRECTORY_CACHE_MS]);
    expect(report).toMatchObject({ from, placement: { shard: to, movingTo: null } });
    expect(report.rows.payments).toBe(2);

    expect(await ownerRows(database(to), owner.id)).toEqual(before);
    expect(countRows(await ownerRows(database(from), owner.id))).toBe(0);
    expect(await shardOf(owner.id)).toBe(to);

    // Reads and writes now go to the new shard.
    const read = await call('GET', `/v1/payments/${paymentId!}`, { token: owner.key.secret });
    expect(read.status).toBe(200);
    expect(read.body.data.refunded_amount ?? read.body.data.status).toBeDefined();
    const next = await postIdempotent('/v1/payments', owner.key.secret, paymentBody(owner.pos.id, '2.00'));
    expect(next.status, next.text).toBe(201);
    expect(
      await database(to).prepare('SELECT 1 FROM payments WHERE id = ?').bind(next.body.data.id).first(),
    ).not.toBeNull();
  });

  it('a write refused during the move succeeds when retried with the same key after it, on the new shard', async () => {
    const owner = await newOwner();
    await approvedPayment(owner);
    const from = (await shardOf(owner.id))!;
    const to = from === 'SHARD_0' ? 'SHARD_1' : 'SHARD_0';
    const key = crypto.randomUUID();
    const body = paymentBody(owner.pos.id, '3.00');
    await moveOwner({
      deps: createDeps(env),
      input: { ownerId: owner.id, to },
      options: {
        wait: async () => {
          const refused = await postIdempotent('/v1/payments', owner.key.secret, body, key);
          if (refused.status !== 201) expectError(refused, 503, 'owner_moving');
        },
      },
    });
    const retried = await postIdempotent('/v1/payments', owner.key.secret, body, key);
    expect(retried.status, retried.text).toBe(201);
    expect(await shardOf(owner.id)).toBe(to);
    const rows = await ownerRows(SHARDS.find((s) => s.name === to)!.d1, owner.id);
    expect((rows.payments as { id: string }[]).filter((p) => p.id === retried.body.data.id)).toHaveLength(1);
  });

  it('PUT placement: the admin route moves (tested above through the service); same shard changes nothing', async () => {
    const owner = await newOwner();
    const home = (await shardOf(owner.id))!;
    const res = await call('PUT', `/v1/users/${owner.id}/placement`, {
      token: admin.accessToken,
      body: { shard: home },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ user_id: owner.id, shard: home, moving_to: null });
    expectError(
      await call('PUT', `/v1/users/${owner.id}/placement`, { token: owner.session.accessToken, body: { shard: home } }),
      403,
      'insufficient_role',
    );
  });
});
