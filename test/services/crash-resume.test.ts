import { depsOfOwner, shardDbOf, shardOf } from '../helpers/shards.ts';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { createDeps, type Deps } from '../../src/deps.ts';
import { idempotencyScope, requestFingerprint } from '../../src/domain/idempotency.ts';
import { type AnyOperation, type InputOf, runOperation } from '../../src/services/operations/operation.ts';
import type { OperationName } from '../../src/services/operations/registry.ts';
import { cancelPayment } from '../../src/services/payments/cancel-payment.ts';
import { createPayment } from '../../src/services/payments/create-payment.ts';
import { createRefund } from '../../src/services/payments/create-refund.ts';
import type { CreatePaymentBody, CreateRefundBody } from '../../src/services/payments/inputs.ts';
import { call, expectError } from '../helpers/api.ts';
import {
  type Merchant,
  paymentBody,
  paymentRow,
  paymentRowsByReference,
  postIdempotent,
  refundRows,
  setupMerchant,
} from '../helpers/merchant.ts';

/**
 * A crash at each step of an idempotent operation, then the client's retry with the same key and body.
 * The first try runs the service as the idempotency object would (same attempt: the object's id for
 * that key, the request's fingerprint) but dies at the step under test, so the object stores nothing, as
 * when a deploy, an eviction or a crash ends it there. The retry goes through the API.
 */

class Crash extends Error {}

/**
 * The D1 binding, failing the first statement whose SQL matches `pattern` (alone or inside a batch),
 * once: the process "dies" before that write lands.
 */
function crashingD1(pattern: RegExp, database: D1Database): D1Database {
  const sqlOf = new WeakMap<object, string>();
  let armed = true;
  const hit = (sql: string | undefined) => {
    if (armed && sql !== undefined && pattern.test(sql)) {
      armed = false;
      return true;
    }
    return false;
  };
  const statement = (real: D1PreparedStatement, sql: string): D1PreparedStatement => {
    const wrapped = new Proxy(real, {
      get(target, prop) {
        if (prop === 'bind') return (...args: unknown[]) => statement(target.bind(...args), sql);
        if (prop === 'run' || prop === 'all' || prop === 'first' || prop === 'raw') {
          return (...args: unknown[]) => {
            if (hit(sql)) throw new Crash(`crash before: ${sql}`);
            return (target as any)[prop](...args);
          };
        }
        const value = Reflect.get(target, prop, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    sqlOf.set(wrapped, sql);
    return wrapped;
  };
  // A D1 session (an operation's last write goes through one) crashes as the database does.
  const handle = <T extends D1Database | D1DatabaseSession>(database: T): T =>
    new Proxy(database, {
      get(target, prop) {
        if (prop === 'withSession') return (anchor?: string) => handle((target as D1Database).withSession(anchor));
        if (prop === 'prepare') return (sql: string) => statement(target.prepare(sql), sql);
        if (prop === 'batch') {
          return (statements: D1PreparedStatement[]) => {
            if (statements.some((s) => hit(sqlOf.get(s)))) throw new Crash('crash before a batch');
            return target.batch(statements.map((s) => (s as any)[REAL] ?? s));
          };
        }
        const value = Reflect.get(target, prop, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  return handle(database);
}
// A wrapped statement is passed to the real batch as is: D1 reads it through the proxy.
const REAL = Symbol('real');

async function ownerOf(m: Merchant): Promise<string> {
  const row = await env.DB.prepare('SELECT user_id FROM api_keys WHERE id = ?')
    .bind(m.key.id)
    .first<{ user_id: string }>();
  return row!.user_id;
}

/** The context and hooks the idempotency object gives the operation for (key, operation, request). */
async function attemptOf(
  m: Merchant,
  operation: OperationName,
  key: string,
  path: string,
  body: unknown,
  onStarted: () => void = () => {},
) {
  const stores = env.IDEMPOTENCY;
  const ctx = {
    caller: { kind: 'api_key' as const, apiKeyId: m.key.id, ownerId: await ownerOf(m) },
    environment: 'test' as const,
    attempt: {
      key: stores.idFromName(idempotencyScope(m.key.id, operation, key)).toString(),
      fingerprint: await requestFingerprint('POST', path, body),
    },
  };
  return { ctx, hooks: { started: onStarted } };
}

/** Runs `operation` as the idempotency object would for that attempt, without its storage. */
const run = <Op extends AnyOperation>(
  operation: Op,
  deps: Deps,
  attempt: Awaited<ReturnType<typeof attemptOf>>,
  input: InputOf<Op>,
) => runOperation(operation, deps, attempt.ctx, input, attempt.hooks) as Promise<{ id: string; status: string }>;

/** The merchant's invocation, its shard crashing before the first statement `pattern` matches. */
async function depsCrashingAt(m: Merchant, pattern: RegExp): Promise<Deps> {
  const shard = (await shardOf(m.session.user.id))!;
  return createDeps({ ...env, [shard]: crashingD1(pattern, await shardDbOf(m.session.user.id)) }, { shard });
}
const crashOnStart = () => {
  throw new Crash('crash after the write, before the processor');
};

async function firstTry(work: Promise<unknown>) {
  await expect(work).rejects.toBeInstanceOf(Crash);
}

describe('a create payment crashed at each step resumes on retry: one payment, one processor attempt chain', () => {
  it('after the insert, before the processor', async () => {
    const m = await setupMerchant();
    const key = crypto.randomUUID();
    const body = paymentBody(m.pos.id, '21.00') as CreatePaymentBody;
    await firstTry(
      run(
        createPayment,
        await depsOfOwner(m.session.user.id),
        await attemptOf(m, 'create_payment', key, '/v1/payments', body, crashOnStart),
        { body },
      ),
    );
    const [orphan] = await paymentRowsByReference(body.external_reference);
    expect(orphan).toMatchObject({ status: 'created', processor_attempts: 0 });

    const retry = await m.pay(body, key);
    expect(retry.status, retry.text).toBe(201);
    expect(retry.body.data).toMatchObject({ id: orphan!.id, status: 'approved' });
    const rows = await paymentRowsByReference(body.external_reference);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ processor_attempts: 1, processor_idempotency_key: orphan!.id });
    // The answer is stored now: a further retry replays it.
    expect((await m.pay(body, key)).headers.get('idempotent-replayed')).toBe('true');
  });

  it('after the processor answered, before its answer was written', async () => {
    const m = await setupMerchant();
    const key = crypto.randomUUID();
    const body = paymentBody(m.pos.id, '22.00') as CreatePaymentBody;
    await firstTry(
      run(
        createPayment,
        await depsCrashingAt(m, /^update "payments"/),
        await attemptOf(m, 'create_payment', key, '/v1/payments', body),
        { body },
      ),
    );
    const [orphan] = await paymentRowsByReference(body.external_reference);
    expect(orphan?.status).toBe('created');

    const retry = await m.pay(body, key);
    expect(retry.status, retry.text).toBe(201);
    expect(retry.body.data).toMatchObject({ id: orphan!.id, status: 'approved' });
    const rows = await paymentRowsByReference(body.external_reference);
    expect(rows).toHaveLength(1);
    // The processor was asked again under the same processor-side key: one attempt chain.
    expect(rows[0]!.processor_idempotency_key).toBe(orphan!.id);
  });

  it('after everything was written, before the idempotency object stored the answer', async () => {
    const m = await setupMerchant();
    const key = crypto.randomUUID();
    const body = paymentBody(m.pos.id, '23.00') as CreatePaymentBody;
    const done = await run(
      createPayment,
      await depsOfOwner(m.session.user.id),
      await attemptOf(m, 'create_payment', key, '/v1/payments', body),
      { body },
    );

    const retry = await m.pay(body, key);
    expect(retry.status, retry.text).toBe(201);
    expect(retry.body.data).toMatchObject({ id: done.id, status: 'approved' });
    expect(await paymentRowsByReference(body.external_reference)).toHaveLength(1);
    expect((await paymentRow(done.id))!.processor_attempts).toBe(1);
  });

  it('the same key with another body after a crash is still idempotency_key_reused, not a second payment', async () => {
    const m = await setupMerchant();
    const key = crypto.randomUUID();
    const body = paymentBody(m.pos.id, '24.00') as CreatePaymentBody;
    await firstTry(
      run(
        createPayment,
        await depsOfOwner(m.session.user.id),
        await attemptOf(m, 'create_payment', key, '/v1/payments', body, crashOnStart),
        { body },
      ),
    );
    expectError(
      await m.pay({ ...body, amount: { value: '99.00', currency: 'USD' } }, key),
      409,
      'idempotency_key_reused',
    );
    expect(await paymentRowsByReference(body.external_reference)).toHaveLength(1);
  });
});

describe('a refund crashed at each step resumes on retry: one refund, no orphaned reservation', () => {
  async function approvedPayment(m: Merchant, value = '50.00') {
    const res = await m.pay(paymentBody(m.pos.id, value));
    expect(res.body.data.status).toBe('approved');
    return res.body.data.id as string;
  }
  const refundBody = (value: string): CreateRefundBody => ({ amount: { value, currency: 'USD' } });
  const refundOnce = (m: Merchant, paymentId: string, body: unknown, key: string) =>
    postIdempotent(`/v1/payments/${paymentId}/refunds`, m.key.secret, body, key);

  it('after the reservation, before the processor', async () => {
    const m = await setupMerchant();
    const paymentId = await approvedPayment(m);
    const key = crypto.randomUUID();
    const body = refundBody('20.00');
    const path = `/v1/payments/${paymentId}/refunds`;
    await firstTry(
      run(
        createRefund,
        await depsOfOwner(m.session.user.id),
        await attemptOf(m, 'create_refund', key, path, body, crashOnStart),
        {
          paymentId,
          body,
        },
      ),
    );
    expect((await refundRows(paymentId)).map((r) => r.status)).toEqual(['created']);

    const retry = await refundOnce(m, paymentId, body, key);
    expect(retry.status, retry.text).toBe(201);
    expect(retry.body.data.status).toBe('approved');
    const rows = await refundRows(paymentId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: retry.body.data.id, status: 'approved' });
    // The rest of the balance is intact: 30.00 still refundable, not 10.00.
    expect((await refundOnce(m, paymentId, refundBody('30.00'), crypto.randomUUID())).status).toBe(201);
  });

  it('after the processor answered, before its answer was written', async () => {
    const m = await setupMerchant();
    const paymentId = await approvedPayment(m);
    const key = crypto.randomUUID();
    const body = refundBody('50.00');
    const path = `/v1/payments/${paymentId}/refunds`;
    await firstTry(
      run(
        createRefund,
        await depsCrashingAt(m, /^update "refunds"/),
        await attemptOf(m, 'create_refund', key, path, body),
        {
          paymentId,
          body,
        },
      ),
    );

    const retry = await refundOnce(m, paymentId, body, key);
    expect(retry.status, retry.text).toBe(201);
    expect(retry.body.data.status).toBe('approved');
    expect((await refundRows(paymentId)).map((r) => r.status)).toEqual(['approved']);
    const payment = await call('GET', `/v1/payments/${paymentId}`, { token: m.key.secret });
    expect(payment.body.data.status).toBe('refunded');
  });

  it('after everything was written, before the idempotency object stored the answer', async () => {
    const m = await setupMerchant();
    const paymentId = await approvedPayment(m);
    const key = crypto.randomUUID();
    const body = refundBody('10.00');
    const path = `/v1/payments/${paymentId}/refunds`;
    const done = await run(
      createRefund,
      await depsOfOwner(m.session.user.id),
      await attemptOf(m, 'create_refund', key, path, body),
      {
        paymentId,
        body,
      },
    );

    const retry = await refundOnce(m, paymentId, body, key);
    expect(retry.status, retry.text).toBe(201);
    expect(retry.body.data.id).toBe(done.id);
    expect(await refundRows(paymentId)).toHaveLength(1);
  });

  it('the same key with another body after a crash is idempotency_key_reused, and reserves nothing more', async () => {
    const m = await setupMerchant();
    const paymentId = await approvedPayment(m);
    const key = crypto.randomUUID();
    const body = refundBody('20.00');
    const path = `/v1/payments/${paymentId}/refunds`;
    await firstTry(
      run(
        createRefund,
        await depsOfOwner(m.session.user.id),
        await attemptOf(m, 'create_refund', key, path, body, crashOnStart),
        {
          paymentId,
          body,
        },
      ),
    );
    expectError(await refundOnce(m, paymentId, refundBody('25.00'), key), 409, 'idempotency_key_reused');
    expect(await refundRows(paymentId)).toHaveLength(1);
  });
});

describe('a cancel crashed after its claim resumes on retry instead of meeting its own claim', () => {
  it('the retry cancels; another key still meets the claim while it is held', async () => {
    const m = await setupMerchant();
    const created = await m.pay(paymentBody(m.qr.id, '31.00'));
    expect(created.body.data.status).toBe('pending');
    const paymentId = created.body.data.id as string;
    const key = crypto.randomUUID();
    const path = `/v1/payments/${paymentId}/cancel`;
    await firstTry(
      run(
        cancelPayment,
        await depsOfOwner(m.session.user.id),
        await attemptOf(m, 'cancel_payment', key, path, null, crashOnStart),
        {
          paymentId,
        },
      ),
    );

    expectError(
      await postIdempotent(path, m.key.secret, undefined, crypto.randomUUID()),
      409,
      'invalid_state_transition',
    );
    const retry = await postIdempotent(path, m.key.secret, undefined, key);
    expect(retry.status, retry.text).toBe(200);
    expect(retry.body.data.status).toBe('canceled');
  });

  it('after the payment was canceled, before the idempotency object stored the answer: the retry answers the canceled payment', async () => {
    const m = await setupMerchant();
    const created = await m.pay(paymentBody(m.qr.id, '32.00'));
    const paymentId = created.body.data.id as string;
    const key = crypto.randomUUID();
    const path = `/v1/payments/${paymentId}/cancel`;
    const done = await run(
      cancelPayment,
      await depsOfOwner(m.session.user.id),
      await attemptOf(m, 'cancel_payment', key, path, null),
      {
        paymentId,
      },
    );
    expect(done.status).toBe('canceled');

    const retry = await postIdempotent(path, m.key.secret, undefined, key);
    expect(retry.status, retry.text).toBe(200);
    expect(retry.body.data).toMatchObject({ id: paymentId, status: 'canceled' });
    // Another key is still told the payment is canceled.
    expectError(
      await postIdempotent(path, m.key.secret, undefined, crypto.randomUUID()),
      409,
      'invalid_state_transition',
    );
  });
});
