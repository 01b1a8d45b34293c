import { dataPlane, onEveryShard } from '../helpers/shards.ts';
import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_TERMINAL_CHECKS, TERMINAL_CHECK_WINDOW_MS } from '../../src/domain/terminal-checks.ts';
import { runTerminalChecks, TERMINAL_CHECKS_PER_OWNER_PER_RUN } from '../../src/jobs/terminal-checks.ts';
import { call, createKey, expectError, seedSession } from '../helpers/api.ts';
import {
  addSandboxMethod,
  linkMethod,
  type Merchant,
  paymentBody,
  postIdempotent,
  SANDBOX_POS,
  setupMerchant,
} from '../helpers/merchant.ts';
import { expectIndistinguishable } from '../helpers/methods.ts';

/**
 * At the counter with the sandbox (issue 22): a POS payment ending 56 waits at the terminal, its cancel is
 * accepted asynchronously (202, `cancel_requested_at`) and completes on the next scheduled terminal read,
 * unless the customer pays first; the terminal re-reads on their schedule; the terminal as a resource and
 * its test helper; the cart on the terminal checked when the payment is created.
 */

let m: Merchant;
let other: Merchant;

beforeAll(async () => {
  m = await setupMerchant();
  other = await setupMerchant();
});

const cancel = (id: string, key?: string, token = m.key.secret) =>
  postIdempotent(`/v1/payments/${id}/cancel`, token, undefined, key);
const read = async (id: string) => (await call('GET', `/v1/payments/${id}`, { token: m.key.secret })).body.data;
const eventTypes = async (id: string) =>
  ((await call('GET', `/v1/payments/${id}/events?limit=100`, { token: m.key.secret })).body.data as { type: string }[])
    .map((e) => e.type)
    .reverse();
const schedule = (id: string) =>
  dataPlane
    .prepare(
      'SELECT terminal_seen_at, terminal_checks, terminal_check_at, cancel_requested_at FROM payments WHERE id = ?',
    )
    .bind(id)
    .first<{
      terminal_seen_at: number | null;
      terminal_checks: number;
      terminal_check_at: number | null;
      cancel_requested_at: number | null;
    }>();

async function atTerminal(value = '20.56') {
  const res = await m.pay(paymentBody(m.pos.id, value));
  expect(res.status, res.text).toBe(201);
  expect(res.body.data).toMatchObject({
    status: 'pending',
    action: { type: 'at_terminal' },
    cancel_requested_at: null,
  });
  return res.body.data as { id: string; updated_at: string };
}

describe('cancel at the terminal (sandbox, amounts ending 56)', () => {
  it('202: the payment stays pending at the terminal with cancel_requested_at; the next scheduled read cancels it', async () => {
    const payment = await atTerminal();
    const key = crypto.randomUUID();
    const res = await cancel(payment.id, key);
    expect(res.status, res.text).toBe(202);
    expect(res.body.data).toMatchObject({ id: payment.id, status: 'pending', action: { type: 'at_terminal' } });
    expect(Date.parse(res.body.data.cancel_requested_at)).toBeGreaterThan(0);
    expect(res.body.data.updated_at > payment.updated_at).toBe(true);
    expect(res.headers.get('x-read-bookmark')).toBeTruthy();
    // The same key answers the same; another key's cancel too, without a second request.
    const replay = await cancel(payment.id, key);
    expect(replay.status).toBe(202);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(res.text);
    const another = await cancel(payment.id);
    expect(another.status).toBe(202);
    expect(another.body.data.cancel_requested_at).toBe(res.body.data.cancel_requested_at);
    expect(await read(payment.id)).toMatchObject({ status: 'pending', cancel_requested_at: expect.any(String) });

    await onEveryShard((deps) => runTerminalChecks(deps, Date.now() + 60_000));
    const after = await read(payment.id);
    expect(after).toMatchObject({ status: 'canceled', cancel_requested_at: res.body.data.cancel_requested_at });
    expect(after.action).toBeUndefined();
    expect(await eventTypes(payment.id)).toEqual(['payment.pending', 'payment.canceled']);
    expect((await schedule(payment.id))!.terminal_check_at).toBeNull();
    // Still the first answer for the first key; a new cancel of the canceled payment is refused.
    expect((await cancel(payment.id, key)).text).toBe(res.text);
    expectError(await cancel(payment.id), 409, 'invalid_state_transition');
  });

  it('the customer pays before the cancel lands: approved (payment.approved), the scheduled read changes nothing, refundable', async () => {
    const payment = await atTerminal('21.56');
    expect((await cancel(payment.id)).status).toBe(202);
    const approved = await postIdempotent(`/v1/test-helpers/payments/${payment.id}/approve`, m.key.secret);
    // The cancel it had requested is over: `cancel_requested_at` clears when the payment resolves otherwise.
    expect(approved.body.data).toMatchObject({ status: 'approved', cancel_requested_at: null });
    await onEveryShard((deps) => runTerminalChecks(deps, Date.now() + 60_000));
    expect((await read(payment.id)).status).toBe('approved');
    expect(await eventTypes(payment.id)).toEqual(['payment.pending', 'payment.approved']);
    const refund = await postIdempotent(`/v1/payments/${payment.id}/refunds`, m.key.secret, {
      amount: { value: '21.56', currency: 'USD' },
    });
    expect(refund.status, refund.text).toBe(201);
  });

  it('a cancel done at once is still 200 canceled with cancel_requested_at null', async () => {
    const created = await m.pay(paymentBody(m.qr.id, '22.00'));
    const res = await cancel(created.body.data.id);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ status: 'canceled', cancel_requested_at: null });
  });

  it('another owner cannot cancel or see it: 404 as for a random id', async () => {
    const payment = await atTerminal('23.56');
    expectIndistinguishable(
      await cancel(payment.id, undefined, other.key.secret),
      await cancel('pay_doesnotexist0000000', undefined, other.key.secret),
    );
    expect((await schedule(payment.id))!.cancel_requested_at).toBeNull();
  });
});

describe('terminal re-reads', () => {
  it('scheduled from the first sighting, bounded, and stopped when the payment is final', async () => {
    const payment = await atTerminal('24.56');
    const first = (await schedule(payment.id))!;
    expect(first.terminal_checks).toBe(0);
    expect(first.terminal_check_at! - first.terminal_seen_at!).toBe(5_000);
    // Not due yet: nothing read.
    await onEveryShard((deps) => runTerminalChecks(deps, first.terminal_seen_at! + 1_000));
    expect((await schedule(payment.id))!.terminal_checks).toBe(0);
    // A runner once a minute, for an hour: at most the schedule's reads, none past its window.
    let now = first.terminal_seen_at!;
    for (let minute = 1; minute <= 60; minute++) {
      now = first.terminal_seen_at! + minute * 60_000;
      await onEveryShard((deps) => runTerminalChecks(deps, now));
      const row = (await schedule(payment.id))!;
      if (row.terminal_check_at !== null)
        expect(row.terminal_check_at - row.terminal_seen_at!).toBeLessThanOrEqual(TERMINAL_CHECK_WINDOW_MS);
    }
    const spent = (await schedule(payment.id))!;
    expect(spent.terminal_checks).toBeLessThanOrEqual(MAX_TERMINAL_CHECKS);
    expect(spent.terminal_checks).toBeGreaterThan(10);
    expect(spent.terminal_check_at).toBeNull();
    expect((await read(payment.id)).status).toBe('pending');
  });

  it('a payment settled by the processor’s news leaves the schedule', async () => {
    const payment = await atTerminal('25.56');
    await postIdempotent(`/v1/test-helpers/payments/${payment.id}/approve`, m.key.secret);
    expect((await schedule(payment.id))!.terminal_check_at).toBeNull();
  });

  it(`reads at most ${TERMINAL_CHECKS_PER_OWNER_PER_RUN} payments of one owner per run; the rest wait for the next`, async () => {
    const busy = await setupMerchant();
    const ids: string[] = [];
    for (let i = 0; i < TERMINAL_CHECKS_PER_OWNER_PER_RUN + 3; i++)
      ids.push((await busy.pay(paymentBody(busy.pos.id, `3${i}.56`))).body.data.id);
    const checks = async () =>
      Promise.all(ids.map(async (id) => (await schedule(id))!.terminal_checks)).then((n) => n.reduce((a, b) => a + b));
    await onEveryShard((deps) => runTerminalChecks(deps, Date.now() + 60_000));
    expect(await checks()).toBe(TERMINAL_CHECKS_PER_OWNER_PER_RUN);
    // The next run reads the ones left waiting first (their slots are the oldest), then others up to the cap.
    await onEveryShard((deps) => runTerminalChecks(deps, Date.now() + 120_000));
    expect(await checks()).toBe(2 * TERMINAL_CHECKS_PER_OWNER_PER_RUN);
    for (const id of ids) expect((await schedule(id))!.terminal_checks).toBeGreaterThanOrEqual(1);
  });
});

describe('GET /v1/payment-methods/{payment_method_id}/terminal and its test helper', () => {
  const terminal = (method: string, token = m.key.secret) =>
    call('GET', `/v1/payment-methods/${method}/terminal`, { token });
  const setTerminal = (method: string, body: unknown, token = m.key.secret) =>
    call('POST', `/v1/test-helpers/payment-methods/${method}/terminal`, { token, body });

  it('answers the simulated device, with the API key and with the user token', async () => {
    const res = await terminal(m.pos.id);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toEqual({
      payment_method: m.pos.id,
      processor_id: 'sandbox-terminal-1',
      status: 'online',
      busy_with: null,
      operating_mode: null,
      read_at: expect.any(String),
    });
    expect((await terminal(m.pos.id, m.session.accessToken)).body.data.status).toBe('online');
  });

  it('offline: the helper sets it, the read shows it at once, a create fails fast with 409 terminal_unavailable, online again succeeds with the same key', async () => {
    const method = await addSandboxMethod(m.session, SANDBOX_POS);
    await linkMethod(m.session, method.id, m.key.id);
    const off = await setTerminal(method.id, { status: 'offline' });
    expect(off.status, off.text).toBe(200);
    expect(off.body.data).toMatchObject({ status: 'offline', busy_with: null });
    expect((await terminal(method.id)).body.data.status).toBe('offline');
    const key = crypto.randomUUID();
    const body = paymentBody(method.id, '40.00');
    const refused = expectError(await m.pay(body, key), 409, 'terminal_unavailable');
    expect(refused.retryable).toBe(true);
    expect(refused.details).toEqual({ terminal_status: 'offline', processor_code: 'sandbox_terminal_offline' });
    const busy = await setTerminal(method.id, { status: 'busy' });
    expect(busy.body.data).toMatchObject({ status: 'busy', busy_with: { kind: 'payment', processor_reference: null } });
    expect(expectError(await m.pay(body, key), 409, 'terminal_unavailable').details).toMatchObject({
      terminal_status: 'busy',
    });
    await setTerminal(method.id, { status: 'online' });
    const paid = await m.pay(body, key);
    expect(paid.status, paid.text).toBe(201);
    expect(paid.body.data.status).toBe('approved');
  });

  it('refuses hostile input: unknown status, extra fields, no body, a QR method; an id of another shape is not found', async () => {
    for (const body of [{ status: 'melting' }, { status: 'online', extra: 1 }, {}, { status: ['online'] }]) {
      expectError(await setTerminal(m.pos.id, body), 400, 'invalid_request');
    }
    expectError(
      await call('POST', `/v1/test-helpers/payment-methods/${m.pos.id}/terminal`, { token: m.key.secret }),
      400,
      'invalid_request',
    );
    expectError(await terminal(m.qr.id), 422, 'capability_not_supported');
    expectError(await setTerminal(m.qr.id, { status: 'offline' }), 422, 'capability_not_supported');
    // Ids are opaque: one of another shape is a method nobody has.
    expectError(await terminal('not-a-uuid'), 404, 'payment_method_not_found');
    expect((await terminal(m.pos.id)).body.data.status).toBe('online');
  });

  it('security: no credential is 401; another owner’s method, or one not enabled for the key, is 404 as a random id; a key without payment_methods:read is 403', async () => {
    expectError(await call('GET', `/v1/payment-methods/${m.pos.id}/terminal`), 401, 'unauthorized');
    expectError(
      await call('POST', `/v1/test-helpers/payment-methods/${m.pos.id}/terminal`, { body: { status: 'offline' } }),
      401,
      'unauthorized',
    );
    const random = crypto.randomUUID();
    expectIndistinguishable(await terminal(m.pos.id, other.key.secret), await terminal(random, other.key.secret));
    expectIndistinguishable(
      await setTerminal(m.pos.id, { status: 'offline' }, other.key.secret),
      await setTerminal(random, { status: 'offline' }, other.key.secret),
    );
    const unlinked = await addSandboxMethod(m.session, SANDBOX_POS);
    expectError(await terminal(unlinked.id), 404, 'payment_method_not_found');
    const session = await seedSession();
    const narrow = await createKey(session, ['payments:read']);
    expectError(await terminal(m.pos.id, narrow.secret), 403, 'insufficient_scope');
    expect((await terminal(m.pos.id)).body.data.status).toBe('online');
  });
});

describe('the cart on the terminal (configuration.display), checked when the payment is created', () => {
  const display = (total: string, currency = 'USD') => ({
    lines: [{ description: 'Coffee', quantity: 2, amount: { value: total, currency } }],
    total: { value: total, currency },
  });

  it('a display whose total is the amount is taken', async () => {
    const res = await m.pay(paymentBody(m.pos.id, '9.00', { configuration: { display: display('9.00') } }));
    expect(res.status, res.text).toBe(201);
    expect(res.body.data.status).toBe('approved');
  });

  it.each([
    ['another total', display('8.00'), 'configuration.display.total'],
    ['another currency', display('9.00', 'EUR'), 'configuration.display.total'],
    ['more decimals than the currency has', display('9.001'), 'configuration.display.lines.0.amount'],
  ])('%s: 400 invalid_request naming the field, nothing recorded', async (_, value, field) => {
    const body = paymentBody(m.pos.id, '9.00', { configuration: { display: value } });
    const error = expectError(await m.pay(body), 400, 'invalid_request');
    expect((error.details.fields as { field: string }[]).map((f) => f.field)).toContain(field);
    const rows = await dataPlane
      .prepare('SELECT count(*) AS n FROM payments WHERE external_reference = ?')
      .bind(body.external_reference)
      .first<{ n: number }>();
    expect(rows!.n).toBe(0);
  });

  it('a QR method has no display: refused as an unknown field', async () => {
    const error = expectError(
      await m.pay(paymentBody(m.qr.id, '9.00', { configuration: { display: display('9.00') } })),
      400,
      'invalid_request',
    );
    expect(JSON.stringify(error.details)).toContain('configuration');
  });
});
