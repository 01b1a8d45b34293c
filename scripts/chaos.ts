// `npm run chaos`: what an operator meets when the whole server dies mid-burst, checked from the answers
// and from the database. Not part of `npm test` (it kills real processes and takes minutes).
//
// One local server (exactly as `npm start`) on its own state directory. Each round fires a burst of
// concurrent creates (sandbox amounts that approve, time out once, are unavailable once, decline) and
// racing refunds of payments approved in earlier rounds (together asking more than each payment holds),
// kills the whole process group with SIGKILL after a random moment, starts the server again on the same
// state, and retries every request of the burst with its own Idempotency-Key and body until it has a
// final answer. Then it checks:
//   - no fork: every answer a request ever got (before or after the crash) names the same payment or
//     refund; one payment per external_reference (GET /v1/payments?external_reference=);
//   - no conflict: no retry meets 409 external_reference_conflict or idempotency_key_reused for its own
//     attempt;
//   - nothing lost: an answer given before the crash is answered again, identically, after it;
//   - money: approved + in-flight refunds never exceed a payment's amount, and after the retries no refund
//     stays reserved (`created`) in the database, nor any payment `created` with no processor attempt.
// Then one more round moves the merchant to the other shard during a burst (docs/SCALE.md, "Moves"): the move is
// asked for, a burst of creates meets `503 owner_moving`, the server is killed mid-move and started again, the move
// (a durable job) resumes by itself (the cron starts its silent job again) and ends, and the retried creates land on
// the new shard. It checks that every
// row the merchant had, and every payment answered 201, is on the shard the directory names and none is left on
// the other.
// Bounded: CHAOS_ROUNDS (default 4) rounds of CHAOS_BURST (default 24) creates, CHAOS_MAX_RETRIES
// (default 8) retries per request (a request answered `owner_moving` is retried until the move ends, at most
// MOVE_TIMEOUT_MS). Prints a Markdown table for bench/RESULTS.md; exits 1 on a violation.
import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { databaseBindings } from './lib/databases.mjs';
import { freePort, startLocalServer, type LocalServer } from './lib/local-server.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const ROUNDS = Number(process.env.CHAOS_ROUNDS ?? 4);
const BURST = Number(process.env.CHAOS_BURST ?? 24);
const MAX_RETRIES = Number(process.env.CHAOS_MAX_RETRIES ?? 8);
const KILL_AFTER_MS: [number, number] = [20, 400];
/** When the server is killed during the move: within its settle wait (40 s) or its copy. */
const MOVE_KILL_AFTER_MS: [number, number] = [2_000, 45_000];
/**
 * How long the move may take, the crash and restart included. wrangler dev's local Workflows never resume an instance
 * whose process died (docs/SCALE.md, "Moves"): the cron starts the job again once it has been silent for
 * `MOVE_SILENCE_MS` (5 minutes, src/services/shards/move-owner.ts), at its next minute, and the new run settles (40 s)
 * and copies again: 5 + 1 + 3 minutes.
 */
const MOVE_TIMEOUT_MS = 9 * 60_000;
/** Sandbox amount endings (docs/sandbox.md): approve, timeout then success, unavailable then success, decline. */
const ENDINGS = ['00', '52', '53', '51'];

interface Sent {
  kind: 'create' | 'refund';
  path: string;
  key: string;
  body: Record<string, unknown>;
  /** Every answer this request got: status and the id it named (payment or refund), or the error code. */
  answers: { phase: 'burst' | 'retry'; status: number; id?: string; code?: string; retryable?: boolean; data?: any }[];
  paymentId?: string;
}

interface Figures {
  rounds: number;
  requests: number;
  answeredBeforeCrash: number;
  cutByCrash: number;
  retries: number;
  forks: number;
  conflicts: number;
  lostAnswers: number;
  overRefunded: number;
  reservedRefundsLeft: number;
  createdPaymentsLeft: number;
  unresolved: number;
  moveKilledAfterMs: number;
  moveSeconds: number;
  movedRows: number;
  rowsLost: number;
  rowsLeftBehind: number;
}

const figures: Figures = {
  rounds: 0,
  requests: 0,
  answeredBeforeCrash: 0,
  cutByCrash: 0,
  retries: 0,
  forks: 0,
  conflicts: 0,
  lostAnswers: 0,
  overRefunded: 0,
  reservedRefundsLeft: 0,
  createdPaymentsLeft: 0,
  unresolved: 0,
  moveKilledAfterMs: 0,
  moveSeconds: 0,
  movedRows: 0,
  rowsLost: 0,
  rowsLeftBehind: 0,
};
const violations: string[] = [];

function violation(message: string) {
  violations.push(message);
  console.error(`VIOLATION ${message}`);
}

async function call(
  base: string,
  method: string,
  path: string,
  options: { token?: string; key?: string; body?: unknown } = {},
) {
  const headers: Record<string, string> = {};
  if (options.token) headers.Authorization = `Bearer ${options.token}`;
  if (options.key) headers['Idempotency-Key'] = options.key;
  if (options.body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(`${base}${path}`, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    // Not JSON (a proxy page): kept as text.
  }
  return { status: res.status, json, text };
}

async function setUp(server: LocalServer) {
  const base = server.baseUrl;
  const login = await call(base, 'POST', '/v1/auth/login', {
    body: { email: server.adminEmail, password: server.adminPassword },
  });
  if (login.status !== 201) throw new Error(`login: ${login.status} ${login.text}`);
  const token = login.json.data.access_token as string;
  const key = await call(base, 'POST', '/v1/account/api-keys', {
    token,
    body: { name: 'chaos', scopes: ['payments:create', 'payments:read', 'refunds:create'] },
  });
  if (key.status !== 201) throw new Error(`api key: ${key.status} ${key.text}`);
  const connectors = await call(base, 'GET', '/v1/connectors?limit=100', { token });
  const version = connectors.json.data
    .filter((c: any) => c.provider === 'sandbox' && c.type === 'pos')
    .flatMap((c: any) => c.versions)
    .find((v: any) => v.status === 'published');
  const method = await call(base, 'POST', '/v1/account/payment-methods', {
    token,
    body: {
      connector_definition_version_id: version.id,
      name: 'Chaos POS',
      credentials: { api_key: `sandbox-${randomBytes(12).toString('hex')}` },
    },
  });
  if (method.status !== 201) throw new Error(`method: ${method.status} ${method.text}`);
  const link = await call(base, 'POST', `/v1/account/payment-methods/${method.json.data.id}/api-keys`, {
    token,
    body: { api_key_id: key.json.data.id },
  });
  if (link.status !== 201) throw new Error(`link: ${link.status} ${link.text}`);
  const me = await call(base, 'GET', '/v1/auth/me', { token });
  return {
    secret: key.json.data.secret as string,
    methodId: method.json.data.id as string,
    ownerId: me.json.data.id as string,
  };
}

function record(sent: Sent, phase: 'burst' | 'retry', res: { status: number; json: any; text: string }) {
  sent.answers.push({
    phase,
    status: res.status,
    id: res.json?.data?.id,
    code: res.json?.error?.code,
    retryable: res.json?.error?.retryable,
    data: res.json?.data,
  });
}

/** A final answer: anything but a 5xx or an error the envelope calls retryable (e.g. 409 concurrent_update). */
function isFinal(answer: Sent['answers'][number]) {
  return answer.status < 500 && answer.retryable !== true;
}

async function send(base: string, secret: string, sent: Sent, phase: 'burst' | 'retry') {
  try {
    record(sent, phase, await call(base, 'POST', sent.path, { token: secret, key: sent.key, body: sent.body }));
  } catch {
    // Cut by the crash (or the connection refused while it was down): no answer.
  }
}

/** The rows `sql` selects on every shard (the checks look at the data plane: payments and refunds). */
function sqlRows(stateDir: string, sql: string): any[] {
  return databaseBindings('test').shards.flatMap((shard) => sqlRowsOf(shard, stateDir, sql));
}

function sqlRowsOf(binding: string, stateDir: string, sql: string): any[] {
  const out = execFileSync(
    process.execPath,
    [
      join(ROOT, 'node_modules', 'wrangler', 'bin', 'wrangler.js'),
      'd1',
      'execute',
      binding,
      '--local',
      '--persist-to',
      join(stateDir, 'state'),
      '--env',
      'test',
      '--json',
      '--command',
      sql,
    ],
    {
      cwd: ROOT,
      env: { ...process.env, CI: 'true', WRANGLER_SEND_METRICS: 'false' },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  return JSON.parse(out)[0].results;
}

async function main() {
  const stateDir = mkdtempSync(join(tmpdir(), 'payment-service-chaos-'));
  const port = await freePort();
  const logFile = join(ROOT, 'test-results', 'chaos-server.log');
  let server = await startLocalServer({ logFile, stateDir, port });
  const { secret, methodId, ownerId } = await setUp(server);
  const all: Sent[] = [];
  const approved: { id: string; amountMinor: number }[] = [];
  const started = Date.now();
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      const burst: Sent[] = [];
      for (let i = 0; i < BURST; i++) {
        const ending = ENDINGS[i % ENDINGS.length]!;
        const value = `${10 + ((round * BURST + i) % 80)}.${ending}`;
        burst.push({
          kind: 'create',
          path: '/v1/payments',
          key: randomUUID(),
          body: {
            amount: { value, currency: 'USD' },
            external_reference: `chaos-${round}-${i}-${randomUUID().slice(0, 8)}`,
            payment_method: methodId,
          },
          answers: [],
        });
      }
      // Racing refunds of earlier payments: three each, together 1.5 times the amount.
      for (const payment of approved.splice(0, 4)) {
        const half = Math.floor(payment.amountMinor / 2);
        for (let j = 0; j < 3; j++) {
          burst.push({
            kind: 'refund',
            path: `/v1/payments/${payment.id}/refunds`,
            key: randomUUID(),
            body: { amount: { value: (half / 100).toFixed(2), currency: 'USD' } },
            answers: [],
            paymentId: payment.id,
          });
        }
      }
      all.push(...burst);
      figures.rounds++;
      figures.requests += burst.length;

      const inFlight = burst.map((sent) => send(server.baseUrl, secret, sent, 'burst'));
      const killAfter = KILL_AFTER_MS[0] + Math.floor(Math.random() * (KILL_AFTER_MS[1] - KILL_AFTER_MS[0]));
      await new Promise((resolve) => setTimeout(resolve, killAfter));
      await server.kill();
      await Promise.all(inFlight);
      figures.answeredBeforeCrash += burst.filter((s) => s.answers.length > 0).length;
      figures.cutByCrash += burst.filter((s) => s.answers.length === 0).length;

      server = await startLocalServer({ logFile, stateDir, port });
      for (const sent of burst) {
        for (let attempt = 0; attempt < MAX_RETRIES; attempt++) {
          figures.retries++;
          await send(server.baseUrl, secret, sent, 'retry');
          const last = sent.answers.at(-1);
          if (last && last.phase === 'retry' && isFinal(last)) break;
          await new Promise((resolve) => setTimeout(resolve, 200 * (attempt + 1)));
        }
        judge(sent);
        const final = sent.answers.at(-1);
        if (sent.kind === 'create' && final?.status === 201 && final.data?.status === 'approved') {
          approved.push({ id: final.data.id, amountMinor: Math.round(Number(final.data.amount.value) * 100) });
        }
      }
      await checkReferences(server.baseUrl, secret, burst);
      console.log(
        `round ${round}: ${burst.length} requests, killed after ${killAfter} ms, ${burst.filter((s) => s.answers.some((a) => a.phase === 'burst')).length} answered before the crash`,
      );
    }
    await checkMoney(server.baseUrl, secret, all);
    server = await moveDuringBurst(server, { logFile, stateDir, port }, { secret, methodId, ownerId }, all);
  } finally {
    await server.stop();
  }
  checkDatabase(stateDir);
  rmSync(stateDir, { recursive: true, force: true });

  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  console.log(`\n| figure | value |\n|---|---|`);
  for (const [name, value] of Object.entries(figures)) console.log(`| ${name} | ${value} |`);
  console.log(`| duration | ${seconds} s |`);
  if (violations.length > 0) {
    console.error(`\n${violations.length} violation(s)`);
    process.exit(1);
  }
  console.log('\nno fork, no conflict, nothing lost, no over-refund, nothing left reserved');
}

/** A request tried again (three times, a second apart) when the connection fails. */
async function settled<T>(request: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await request();
    } catch (error) {
      if (attempt >= 3) throw error;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  }
}

/**
 * Every row of the owner on each shard, as `table:id` (the tables that carry `owner_id`). Read with the server
 * stopped: wrangler's local D1 is not to be opened by two processes at once.
 */
function ownerRowIds(stateDir: string, ownerId: string): Map<string, Set<string>> {
  const tables = ['payments', 'refunds', 'disputes', 'payment_events', 'webhook_endpoints'];
  const query = tables
    .map((t) => `select '${t}:' || id as k from ${t} where owner_id = '${ownerId}'`)
    .join(' union all ');
  return new Map(
    databaseBindings('test').shards.map((shard) => [
      shard,
      new Set(sqlRowsOf(shard, stateDir, query).map((row) => row.k as string)),
    ]),
  );
}

/**
 * The merchant moves to the other shard while a burst of creates runs; the server is killed mid-move and started
 * again; the move resumes by itself. Nothing of the merchant may be lost or left behind.
 */
async function moveDuringBurst(
  server: LocalServer,
  options: { logFile: string; stateDir: string; port: number },
  merchant: { secret: string; methodId: string; ownerId: string },
  all: Sent[],
): Promise<LocalServer> {
  await server.stop();
  const before = ownerRowIds(options.stateDir, merchant.ownerId);
  server = await startLocalServer(options);
  const started = Date.now();
  const admin = await settled(() =>
    call(server.baseUrl, 'POST', '/v1/auth/login', {
      body: { email: server.adminEmail, password: server.adminPassword },
    }),
  );
  const token = admin.json.data.access_token as string;
  const from = [...before].find(([, ids]) => ids.size > 0)?.[0];
  const to = databaseBindings('test').shards.find((shard) => shard !== from)!;
  const placement = `/v1/users/${merchant.ownerId}/placement`;
  const asked = await call(server.baseUrl, 'PUT', placement, { token, body: { shard: to } });
  if (asked.status !== 202) throw new Error(`move: ${asked.status} ${asked.text}`);

  const burst: Sent[] = Array.from({ length: BURST }, (_, i) => ({
    kind: 'create' as const,
    path: '/v1/payments',
    key: randomUUID(),
    body: {
      amount: { value: `${20 + i}.00`, currency: 'USD' },
      external_reference: `chaos-move-${i}-${randomUUID().slice(0, 8)}`,
      payment_method: merchant.methodId,
    },
    answers: [],
  }));
  all.push(...burst);
  figures.requests += burst.length;
  const inFlight = burst.map((sent) => send(server.baseUrl, merchant.secret, sent, 'burst'));
  const killAfter = MOVE_KILL_AFTER_MS[0] + Math.floor(Math.random() * (MOVE_KILL_AFTER_MS[1] - MOVE_KILL_AFTER_MS[0]));
  figures.moveKilledAfterMs = killAfter;
  await new Promise((resolve) => setTimeout(resolve, killAfter));
  const stepWhenKilled = (await call(server.baseUrl, 'GET', placement, { token }).catch(() => null))?.json?.data?.move
    ?.step;
  await server.kill();
  await Promise.all(inFlight);
  const next = await startLocalServer(options);

  // The move resumes by itself: follow it. (The first request after a restart may meet a connection the client
  // kept to the killed server: `settled` tries again.)
  const relogin = await settled(() =>
    call(next.baseUrl, 'POST', '/v1/auth/login', {
      body: { email: next.adminEmail, password: next.adminPassword },
    }),
  );
  const fresh = relogin.json.data.access_token as string;
  let move: any = null;
  while (Date.now() - started < MOVE_TIMEOUT_MS) {
    move = (await settled(() => call(next.baseUrl, 'GET', placement, { token: fresh }))).json?.data?.move;
    if (move && move.id === asked.json.data.move.id && move.status !== 'running') break;
    await new Promise((resolve) => setTimeout(resolve, 2_000));
  }
  if (move?.status !== 'done') violation(`the move did not end done after the crash: ${JSON.stringify(move)}`);
  figures.moveSeconds = Math.round((Date.now() - started) / 1000);

  for (const sent of burst) {
    const deadline = Date.now() + MOVE_TIMEOUT_MS;
    for (let attempt = 0; attempt < MAX_RETRIES || Date.now() < deadline; attempt++) {
      figures.retries++;
      await send(next.baseUrl, merchant.secret, sent, 'retry');
      const last = sent.answers.at(-1);
      if (last && last.phase === 'retry' && isFinal(last)) break;
      if (last?.code !== 'owner_moving' && attempt >= MAX_RETRIES) break;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    judge(sent);
  }
  await checkReferences(next.baseUrl, merchant.secret, burst);

  await next.stop();
  const after = ownerRowIds(options.stateDir, merchant.ownerId);
  const home = after.get(to)!;
  figures.movedRows = [...before.values()].reduce((n, ids) => n + ids.size, 0);
  for (const id of before.get(from!) ?? []) {
    if (!home.has(id)) {
      figures.rowsLost++;
      violation(`${id} was on ${from} before the move and is not on ${to} after it`);
    }
  }
  for (const sent of burst) {
    const id = sent.answers.at(-1)?.status === 201 ? sent.answers.at(-1)?.id : undefined;
    if (id && !home.has(`payments:${id}`)) {
      figures.rowsLost++;
      violation(`payment ${id} answered 201 is not on ${to}`);
    }
  }
  const leftBehind = after.get(from!)?.size ?? 0;
  figures.rowsLeftBehind = leftBehind;
  if (leftBehind > 0) violation(`${leftBehind} rows of the merchant left on ${from} after the move`);
  console.log(
    `move ${from} -> ${to}: killed after ${killAfter} ms (step ${stepWhenKilled ?? 'unknown'}), ended ${move?.status} after ${figures.moveSeconds} s, ${figures.movedRows} rows`,
  );
  return startLocalServer(options);
}

/** One request's answers: one id throughout, no conflict with itself, the pre-crash answer kept. */
function judge(sent: Sent) {
  const final = sent.answers.at(-1);
  if (!final || !isFinal(final)) {
    figures.unresolved++;
    violation(
      `${sent.kind} ${sent.key}: no final answer after ${MAX_RETRIES} retries (${final?.status ?? 'none'} ${final?.code ?? ''})`,
    );
    return;
  }
  const ids = new Set(sent.answers.filter((a) => a.status < 300 && a.id).map((a) => a.id));
  if (ids.size > 1) {
    figures.forks++;
    violation(`${sent.kind} ${sent.key}: answered with ${ids.size} different ids (${[...ids].join(', ')})`);
  }
  for (const answer of sent.answers) {
    if (answer.code === 'external_reference_conflict' || answer.code === 'idempotency_key_reused') {
      figures.conflicts++;
      violation(`${sent.kind} ${sent.key}: ${answer.phase} answer ${answer.status} ${answer.code} for its own attempt`);
    }
  }
  const before = sent.answers.filter((a) => a.phase === 'burst' && isFinal(a)).at(-1);
  if (before && (before.status !== final.status || before.id !== final.id)) {
    figures.lostAnswers++;
    violation(
      `${sent.kind} ${sent.key}: answered ${before.status} ${before.id ?? before.code} before the crash, ${final.status} ${final.id ?? final.code} after`,
    );
  }
}

async function checkReferences(base: string, secret: string, burst: Sent[]) {
  for (const sent of burst.filter((s) => s.kind === 'create')) {
    const reference = String(sent.body.external_reference);
    const list = await call(base, 'GET', `/v1/payments?external_reference=${encodeURIComponent(reference)}`, {
      token: secret,
    });
    if (list.json?.pagination?.total !== 1)
      violation(`reference ${reference}: ${list.json?.pagination?.total} payments`);
  }
}

async function checkMoney(base: string, secret: string, all: Sent[]) {
  const paymentIds = new Set(all.filter((s) => s.kind === 'refund').map((s) => s.paymentId!));
  for (const id of paymentIds) {
    const [payment, refunds] = await Promise.all([
      call(base, 'GET', `/v1/payments/${id}`, { token: secret }),
      call(base, 'GET', `/v1/payments/${id}/refunds?limit=100`, { token: secret }),
    ]);
    const amount = Math.round(Number(payment.json.data.amount.value) * 100);
    const held = refunds.json.data
      .filter((r: any) => !['declined', 'failed'].includes(r.status))
      .reduce((sum: number, r: any) => sum + Math.round(Number(r.amount.value) * 100), 0);
    if (held > amount) {
      figures.overRefunded++;
      violation(`payment ${id}: refunds hold ${held} of ${amount}`);
    }
  }
}

function checkDatabase(stateDir: string) {
  const reserved = sqlRows(stateDir, "select id, payment_id from refunds where status = 'created'");
  figures.reservedRefundsLeft = reserved.length;
  for (const row of reserved) violation(`refund ${row.id} of ${row.payment_id} left reserved (created)`);
  const created = sqlRows(stateDir, "select id from payments where status = 'created' and processor_attempts = 0");
  figures.createdPaymentsLeft = created.length;
  for (const row of created) violation(`payment ${row.id} left created with no processor attempt`);
}

await main();
