import { dataPlane, depsOfOwner } from '../helpers/shards.ts';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { eq } from 'drizzle-orm';
import { webhookEndpoints } from '../../src/db/schema/index.ts';
import { MAX_ENDPOINTS_PER_OWNER } from '../../src/domain/webhook-endpoints.ts';
import { newId } from '../../src/lib/ids.ts';
import { pingEndpoint } from '../../src/services/webhooks/endpoints/ping.ts';
import { call, createKey, expectError, seedSession, type ApiResponse, type Session } from '../helpers/api.ts';
import { allowSecretIn } from '../helpers/leak-scan.ts';
import {
  createEndpoint,
  ENDPOINTS,
  endpointRow,
  hang,
  receiver,
  REFUSED_WEBHOOK_URLS,
  verifyWith,
  type Receiver,
} from '../helpers/webhooks.ts';

/**
 * Account webhook endpoints, the routes: /v1/account/webhook-endpoints (docs/webhooks.md). Deliveries
 * to endpoints are in test/webhooks/endpoint-deliveries.test.ts.
 */

const URL_A = 'https://hooks.example.com/account';
const DAY_MS = 24 * 3600 * 1000;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;

let owner: Session;
let other: Session;
let admin: Session;
let rx: Receiver | undefined;

beforeAll(async () => {
  [owner, other, admin] = await Promise.all([seedSession(), seedSession(), seedSession({ role: 'admin' })]);
});

afterEach(() => {
  rx?.restore();
  rx = undefined;
  vi.useRealTimers();
});

const as = (session: Session) => ({
  create: (body: unknown) => call('POST', ENDPOINTS, { token: session.accessToken, body }),
  list: (query = '') => call('GET', `${ENDPOINTS}${query}`, { token: session.accessToken }),
  get: (id: string) => call('GET', `${ENDPOINTS}/${id}`, { token: session.accessToken }),
  patch: (id: string, body: unknown) => call('PATCH', `${ENDPOINTS}/${id}`, { token: session.accessToken, body }),
  remove: (id: string) => call('DELETE', `${ENDPOINTS}/${id}`, { token: session.accessToken }),
  rotate: (id: string) => call('POST', `${ENDPOINTS}/${id}/rotate-secret`, { token: session.accessToken }),
  test: (id: string) => call('POST', `${ENDPOINTS}/${id}/test`, { token: session.accessToken }),
});

function withoutRequestId(res: ApiResponse) {
  const body = structuredClone(res.body);
  if (body?.error) delete body.error.request_id;
  return body;
}

const fieldsOf = (res: ApiResponse) =>
  ((res.body.error.details.fields ?? []) as { field: string; issue: string }[]).map((f) => f.field);

async function countOf(ownerId: string) {
  const row = await dataPlane
    .prepare('SELECT count(*) AS n FROM webhook_endpoints WHERE owner_id = ?')
    .bind(ownerId)
    .first<{ n: number }>();
  return row!.n;
}

describe('POST /v1/account/webhook-endpoints', () => {
  it('201: the endpoint, enabled, and its whsec_ secret; stored encrypted', async () => {
    const user = await seedSession();
    const before = Date.now();
    const res = await as(user).create({
      url: URL_A,
      enabled_events: ['payment.approved', 'payment.refunded'],
      description: 'Orders',
    });
    expect(res.status, res.text).toBe(201);
    const data = res.body.data;
    expect(Object.keys(data).sort()).toEqual(
      [
        'created_at',
        'description',
        'disabled_at',
        'disabled_reason',
        'enabled_events',
        'environment',
        'failing_since',
        'id',
        'previous_secret_expires_at',
        'secret',
        'status',
        'updated_at',
        'url',
        'user_id',
      ].sort(),
    );
    expect(data).toMatchObject({
      url: URL_A,
      enabled_events: ['payment.approved', 'payment.refunded'],
      description: 'Orders',
      status: 'enabled',
      disabled_reason: null,
      disabled_at: null,
      failing_since: null,
      user_id: user.user.id,
      environment: 'test',
      previous_secret_expires_at: null,
    });
    expect(data.id).toMatch(/^we_[0-9a-z]{20}$/);
    expect(data.secret).toMatch(SECRET);
    expect(data.created_at).toMatch(ISO_MS);
    expect(Date.parse(data.created_at)).toBeGreaterThanOrEqual(before);

    const row = await endpointRow(data.id);
    const stored = JSON.stringify(row);
    expect(stored).not.toContain(data.secret);
    expect(stored).not.toContain(data.secret.slice('whsec_'.length));
  });

  it('["*"] subscribes to everything; repeated types are kept once; no description is null', async () => {
    const user = await seedSession();
    const all = await as(user).create({ url: URL_A, enabled_events: ['*'] });
    expect(all.status, all.text).toBe(201);
    expect(all.body.data).toMatchObject({ enabled_events: ['*'], description: null });
    const repeated = await as(user).create({
      url: URL_A,
      enabled_events: ['payment.approved', 'payment.approved', 'payment.pending'],
    });
    expect(repeated.body.data.enabled_events).toEqual(['payment.approved', 'payment.pending']);
  });

  it.each([
    [{ enabled_events: ['payment.approved'] }, 'url'],
    [{ url: URL_A }, 'enabled_events'],
    [{ url: URL_A, enabled_events: [] }, 'enabled_events'],
    [{ url: URL_A, enabled_events: ['payment.teleported'] }, 'enabled_events.0'],
    [{ url: URL_A, enabled_events: ['*', 'payment.approved'] }, 'enabled_events'],
    [{ url: URL_A, enabled_events: 'payment.approved' }, 'enabled_events'],
    [{ url: 42, enabled_events: ['*'] }, 'url'],
    [{ url: URL_A, enabled_events: ['*'], description: 'x'.repeat(1001) }, 'description'],
    [{ url: URL_A, enabled_events: ['*'], secret: 'whsec_mine' }, 'secret'],
    [{ url: URL_A, enabled_events: ['*'], disabled: true }, 'disabled'],
    [{ url: `https://hooks.example.com/${'p'.repeat(2048)}`, enabled_events: ['*'] }, 'url'],
  ])('%j → 400 naming %s, nothing created', async (body, field) => {
    const user = await seedSession();
    const res = await as(user).create(body);
    expectError(res, 400, 'invalid_request');
    expect(fieldsOf(res)).toContain(field);
    expect(await countOf(user.user.id)).toBe(0);
  });

  it.each(REFUSED_WEBHOOK_URLS)('url %s → 400 naming url, not echoed, nothing created', async (url) => {
    const res = await as(owner).create({ url, enabled_events: ['*'] });
    expectError(res, 400, 'invalid_request');
    expect(fieldsOf(res)).toEqual(['url']);
    expect(res.text).not.toContain(url);
    const rows = await dataPlane
      .prepare('SELECT count(*) AS n FROM webhook_endpoints WHERE url = ?')
      .bind(url)
      .first<{ n: number }>();
    expect(rows!.n).toBe(0);
  });

  it(`at most ${MAX_ENDPOINTS_PER_OWNER} per owner and environment: the next is 409 webhook_endpoint_limit_reached; deleting one frees a place`, async () => {
    const user = await seedSession();
    const created = await Promise.all(
      Array.from({ length: MAX_ENDPOINTS_PER_OWNER }, (_, i) =>
        as(user).create({ url: `${URL_A}/${i}`, enabled_events: ['*'] }),
      ),
    );
    expect(created.map((r) => r.status)).toEqual(Array(MAX_ENDPOINTS_PER_OWNER).fill(201));
    const over = await as(user).create({ url: URL_A, enabled_events: ['*'] });
    const error = expectError(over, 409, 'webhook_endpoint_limit_reached');
    expect(error.details).toEqual({ limit: MAX_ENDPOINTS_PER_OWNER });
    expect(await countOf(user.user.id)).toBe(MAX_ENDPOINTS_PER_OWNER);
    // Another owner is not affected.
    const elsewhere = await seedSession();
    expect((await as(elsewhere).create({ url: URL_A, enabled_events: ['*'] })).status).toBe(201);
    expect((await as(user).remove(created[0]!.body.data.id)).status).toBe(204);
    expect((await as(user).create({ url: URL_A, enabled_events: ['*'] })).status).toBe(201);
  });

  it('concurrent creations near the limit never pass it', async () => {
    const user = await seedSession();
    for (let i = 0; i < MAX_ENDPOINTS_PER_OWNER - 2; i++)
      await createEndpoint(user, { url: URL_A, enabled_events: ['*'] });
    const racing = await Promise.all(
      Array.from({ length: 6 }, () => as(user).create({ url: URL_A, enabled_events: ['*'] })),
    );
    expect(racing.filter((r) => r.status === 201)).toHaveLength(2);
    for (const res of racing.filter((r) => r.status !== 201)) expectError(res, 409, 'webhook_endpoint_limit_reached');
    expect(await countOf(user.user.id)).toBe(MAX_ENDPOINTS_PER_OWNER);
  });

  it('an admin may create for another user (user_id); a client may not; an unknown user_id is 404', async () => {
    const target = await seedSession();
    const res = await as(admin).create({ url: URL_A, enabled_events: ['*'], user_id: target.user.id });
    expect(res.status, res.text).toBe(201);
    expect(res.body.data.user_id).toBe(target.user.id);
    expect((await as(target).get(res.body.data.id)).status).toBe(200);
    expectError(
      await as(owner).create({ url: URL_A, enabled_events: ['*'], user_id: target.user.id }),
      403,
      'insufficient_role',
    );
    expectError(
      await as(admin).create({ url: URL_A, enabled_events: ['*'], user_id: newId('usr') }),
      404,
      'user_not_found',
    );
  });

  it('API keys and anonymous callers get 401: endpoints are managed by the signed-in user', async () => {
    const key = await createKey(owner);
    expectError(
      await call('POST', ENDPOINTS, { token: key.secret, body: { url: URL_A, enabled_events: ['*'] } }),
      401,
      'unauthorized',
    );
    expectError(await call('GET', ENDPOINTS, { token: key.secret }), 401, 'unauthorized');
    expectError(await call('GET', ENDPOINTS), 401, 'unauthorized');
  });
});

describe('reading endpoints: the secret is shown once, never again', () => {
  it('GET and the list show the state but no secret; the list is the owner’s, newest first, paged', async () => {
    const user = await seedSession();
    const first = await createEndpoint(user, { url: `${URL_A}/1`, enabled_events: ['payment.approved'] });
    const second = await createEndpoint(user, { url: `${URL_A}/2`, enabled_events: ['*'] });
    await createEndpoint(other, { url: URL_A, enabled_events: ['*'] });

    const got = await as(user).get(first.id);
    expect(got.status).toBe(200);
    expect(got.body.data).not.toHaveProperty('secret');
    expect(got.text).not.toContain(first.secret);
    const { secret: _secret, previous_secret_expires_at: _previous, ...shownAtCreation } = first.res.body.data;
    expect(got.body.data).toEqual(shownAtCreation);

    const listed = await as(user).list();
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((e: { id: string }) => e.id)).toEqual([second.id, first.id]);
    expect(listed.body.pagination).toEqual({ limit: 50, offset: 0, total: 2, has_more: false });
    for (const secret of [first.secret, second.secret]) expect(listed.text).not.toContain(secret);
    const page = await as(user).list('?limit=1&offset=1');
    expect(page.body.data.map((e: { id: string }) => e.id)).toEqual([first.id]);
    expect(page.body.pagination).toEqual({ limit: 1, offset: 1, total: 2, has_more: false });
    expectError(await as(user).list('?limit=0'), 400, 'invalid_request');
  });

  it('an admin lists another user’s with user_id; a client naming user_id is 403', async () => {
    const user = await seedSession();
    const made = await createEndpoint(user, { url: URL_A, enabled_events: ['*'] });
    const listed = await as(admin).list(`?user_id=${user.user.id}`);
    expect(listed.body.data.map((e: { id: string }) => e.id)).toEqual([made.id]);
    expectError(await as(other).list(`?user_id=${user.user.id}`), 403, 'insufficient_role');
  });
});

describe('isolation', () => {
  it('another owner’s endpoint answers every operation exactly as a random id, and is left unchanged', async () => {
    const theirs = await createEndpoint(other, { url: URL_A, enabled_events: ['*'], description: 'theirs' });
    const rowBefore = await endpointRow(theirs.id);
    rx = receiver();
    const random = newId('we');
    const me = as(owner);
    const pairs: Array<[ApiResponse, ApiResponse]> = [
      [await me.get(theirs.id), await me.get(random)],
      [await me.patch(theirs.id, { disabled: true }), await me.patch(random, { disabled: true })],
      [await me.rotate(theirs.id), await me.rotate(random)],
      [await me.test(theirs.id), await me.test(random)],
      [await me.remove(theirs.id), await me.remove(random)],
    ];
    for (const [foreign, unknown] of pairs) {
      expectError(foreign, 404, 'webhook_endpoint_not_found');
      expect(withoutRequestId(foreign)).toEqual(withoutRequestId(unknown));
    }
    expect(rx.requests).toEqual([]);
    expect(await endpointRow(theirs.id)).toEqual(rowBefore);
    expect((await as(owner).list()).body.data.map((e: { id: string }) => e.id)).not.toContain(theirs.id);
  });
});

describe('PATCH /v1/account/webhook-endpoints/{id}', () => {
  it('changes url, enabled_events, description (null clears it); the SSRF rules apply to a new url', async () => {
    const made = await createEndpoint(owner, {
      url: URL_A,
      enabled_events: ['payment.approved'],
      description: 'before',
    });
    const res = await as(owner).patch(made.id, {
      url: 'https://hooks.example.com/v2',
      enabled_events: ['*'],
      description: null,
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({
      url: 'https://hooks.example.com/v2',
      enabled_events: ['*'],
      description: null,
      status: 'enabled',
    });
    expect(Date.parse(res.body.data.updated_at)).toBeGreaterThan(Date.parse(made.res.body.data.updated_at));
    expect(res.text).not.toContain(made.secret);

    for (const url of ['https://169.254.169.254/', 'http://hooks.example.com/', 'https://[::ffff:127.0.0.1]/']) {
      const refused = await as(owner).patch(made.id, { url });
      expectError(refused, 400, 'invalid_request');
      expect(fieldsOf(refused)).toEqual(['url']);
    }
    const bad = await as(owner).patch(made.id, { enabled_events: ['*', 'payment.pending'] });
    expect(fieldsOf(bad)).toEqual(['enabled_events']);
    expectError(await as(owner).patch(made.id, { secret: 'x' }), 400, 'invalid_request');
    expect((await as(owner).get(made.id)).body.data).toMatchObject({
      url: 'https://hooks.example.com/v2',
      enabled_events: ['*'],
    });
  });

  it('disabled: true → status disabled (requested); false → enabled, reason and failure streak cleared', async () => {
    const made = await createEndpoint(owner, { url: URL_A, enabled_events: ['*'] });
    const disabled = await as(owner).patch(made.id, { disabled: true });
    expect(disabled.body.data).toMatchObject({ status: 'disabled', disabled_reason: 'requested' });
    expect(disabled.body.data.disabled_at).toMatch(ISO_MS);
    // Disabling again keeps the original time.
    expect((await as(owner).patch(made.id, { disabled: true })).body.data.disabled_at).toBe(
      disabled.body.data.disabled_at,
    );
    await dataPlane
      .prepare('UPDATE webhook_endpoints SET failing_since = ? WHERE id = ?')
      .bind(Date.now() - DAY_MS, made.id)
      .run();
    const enabled = await as(owner).patch(made.id, { disabled: false });
    expect(enabled.body.data).toMatchObject({
      status: 'enabled',
      disabled_reason: null,
      disabled_at: null,
      failing_since: null,
    });
  });
});

describe('DELETE /v1/account/webhook-endpoints/{id}', () => {
  it('204, then the endpoint is gone (404 everywhere), its secret erased', async () => {
    const made = await createEndpoint(owner, { url: URL_A, enabled_events: ['*'] });
    const res = await as(owner).remove(made.id);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(await endpointRow(made.id)).toBeNull();
    expectError(await as(owner).get(made.id), 404, 'webhook_endpoint_not_found');
    expectError(await as(owner).remove(made.id), 404, 'webhook_endpoint_not_found');
  });
});

describe('POST /v1/account/webhook-endpoints/{id}/rotate-secret', () => {
  it('a new secret, shown in this answer only; the old one co-signs for 24 hours', async () => {
    const made = await createEndpoint(owner, { url: URL_A, enabled_events: ['*'] });
    const before = Date.now();
    const res = await as(owner).rotate(made.id);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.secret).toMatch(SECRET);
    expect(res.body.data.secret).not.toBe(made.secret);
    expect(res.text).not.toContain(made.secret);
    expect(Date.parse(res.body.data.previous_secret_expires_at)).toBeGreaterThanOrEqual(before + DAY_MS);
    expect(res.body.data).toMatchObject({ id: made.id, status: 'enabled' });
    const read = await as(owner).get(made.id);
    expect(read.text).not.toContain(res.body.data.secret);

    // The ping is signed with both during the overlap, and only the new one after it.
    rx = receiver();
    expect((await as(owner).test(made.id)).body.data.succeeded).toBe(true);
    const during = rx.requests.at(-1)!;
    expect(during.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(verifyWith(made.secret, during).type).toBe('ping');
    expect(verifyWith(res.body.data.secret, during).type).toBe('ping');
    // A day later (the clock injected: an access token would not live that long).
    const deps = await depsOfOwner(owner.user.id);
    const stored = await deps.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, made.id)).get();
    const dayLater = Date.parse(res.body.data.previous_secret_expires_at) + 60_000;
    expect((await pingEndpoint(deps, stored!, dayLater)).attempt.succeeded).toBe(true);
    const after = rx.requests.at(-1)!;
    expect(after.headers['webhook-timestamp']).toBe(String(Math.floor(dayLater / 1000)));
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(dayLater);
    expect(after.headers['webhook-signature']!.split(' ')).toHaveLength(1);
    expect(verifyWith(res.body.data.secret, after).type).toBe('ping');
    expect(() => verifyWith(made.secret, after)).toThrow();
  });

  it('concurrent rotations: each answers a secret that was stored, and the latest signs', async () => {
    const made = await createEndpoint(owner, { url: URL_A, enabled_events: ['*'] });
    const answers = await Promise.all([
      as(owner).rotate(made.id),
      as(owner).rotate(made.id),
      as(owner).rotate(made.id),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    // A rotation that lost the race answers with the winner's secret: that response may hold it too.
    for (const a of answers)
      for (const b of answers) if (a.body.data.secret === b.body.data.secret) allowSecretIn(a.body.data.secret, b.id);
    rx = receiver();
    await as(owner).test(made.id);
    const ping = rx.requests.at(-1)!;
    for (const answer of answers) expect(verifyWith(answer.body.data.secret, ping).type).toBe('ping');
  });
});

describe('POST /v1/account/webhook-endpoints/{id}/test', () => {
  it('sends a signed ping now and answers the attempt: verified with standardwebhooks, not stored as an event', async () => {
    const made = await createEndpoint(owner, { url: URL_A, enabled_events: ['payment.approved'] });
    const eventsBefore = await dataPlane
      .prepare('SELECT count(*) AS n FROM payment_events WHERE owner_id = ?')
      .bind(owner.user.id)
      .first<{ n: number }>();
    rx = receiver(() => new Response('ok', { status: 200 }));
    const res = await as(owner).test(made.id);
    expect(res.status, res.text).toBe(200);
    expect(rx.requests).toHaveLength(1);
    const ping = rx.requests[0]!;
    expect(ping.url).toBe(URL_A);
    expect(ping.redirect).toBe('manual');
    const body = verifyWith(made.secret, ping) as unknown as {
      id: string;
      type: string;
      created_at: string;
      data: Record<string, unknown>;
    };
    expect(body).toEqual({
      id: ping.headers['webhook-id'],
      type: 'ping',
      created_at: expect.stringMatching(ISO_MS),
      data: { webhook_endpoint: { id: made.id } },
    });
    expect(res.body.data).toEqual({
      event_id: body.id,
      type: 'ping',
      url: URL_A,
      succeeded: true,
      status_code: 200,
      error: null,
      latency_ms: expect.any(Number),
      attempted_at: expect.stringMatching(ISO_MS),
    });
    const eventsAfter = await dataPlane
      .prepare('SELECT count(*) AS n FROM payment_events WHERE owner_id = ?')
      .bind(owner.user.id)
      .first<{ n: number }>();
    expect(eventsAfter!.n).toBe(eventsBefore!.n);
    expect(
      await dataPlane
        .prepare('SELECT count(*) AS n FROM webhook_delivery_attempts WHERE event_id = ?')
        .bind(body.id)
        .first<{ n: number }>(),
    ).toEqual({ n: 0 });
  });

  it('answers 200 with the failure: an HTTP error, a network error, a timeout; the endpoint’s health is untouched', async () => {
    const made = await createEndpoint(owner, { url: URL_A, enabled_events: ['*'] });
    const receiverBody = `receiver-body-${crypto.randomUUID()}`;
    const answers: Array<(r: Parameters<typeof hang>[0]) => Response | Promise<Response>> = [
      () => new Response(receiverBody, { status: 500 }),
      () => {
        throw new TypeError('connection refused');
      },
      (request) => hang(request),
      () => new Response(null, { status: 302, headers: { Location: 'https://169.254.169.254/' } }),
    ];
    const timeoutSpy = vi
      .spyOn(AbortSignal, 'timeout')
      .mockImplementation(() => AbortSignal.abort(new DOMException('timed out', 'TimeoutError')));
    let n = 0;
    rx = receiver((request) => answers[n++]!(request));
    try {
      const results = [];
      for (let i = 0; i < answers.length; i++) results.push((await as(owner).test(made.id)).body.data);
      expect(results.map((r) => [r.succeeded, r.status_code, r.error])).toEqual([
        [false, 500, 'http_500'],
        [false, null, 'network_error'],
        [false, null, 'timeout'],
        [false, 302, 'http_302'],
      ]);
    } finally {
      timeoutSpy.mockRestore();
    }
    expect(rx.requests).toHaveLength(4);
    expect((await as(owner).get(made.id)).body.data).toMatchObject({ status: 'enabled', failing_since: null });
  });

  it('checks the stored URL again: a URL that became refused is not called (url_refused)', async () => {
    const made = await createEndpoint(owner, { url: URL_A, enabled_events: ['*'] });
    await dataPlane
      .prepare('UPDATE webhook_endpoints SET url = ? WHERE id = ?')
      .bind('https://169.254.169.254/latest/meta-data/', made.id)
      .run();
    rx = receiver();
    const res = await as(owner).test(made.id);
    expect(res.body.data).toMatchObject({ succeeded: false, status_code: null, error: 'url_refused' });
    expect(rx.requests).toEqual([]);
  });

  it('works on a disabled endpoint (check it before enabling it again)', async () => {
    const made = await createEndpoint(owner, { url: URL_A, enabled_events: ['*'] });
    await as(owner).patch(made.id, { disabled: true });
    rx = receiver();
    expect((await as(owner).test(made.id)).body.data.succeeded).toBe(true);
    expect(rx.requests).toHaveLength(1);
  });
});
