// `npm run bench`: the service against a baseline Worker, on the same runtime, in one run.
//
//   1. Starts the service (`wrangler dev bench/instrumented.ts --env test`: the app with its D1 binding
//      metered by the bench, fresh --persist-to and .dev.vars in a temporary directory, migrations applied,
//      an admin from scripts/lib/admin.mjs) and the baseline (bench/baseline: its own D1 and a trivial
//      Durable Object, only the work no payment API can skip), each on a free 127.0.0.1 port in its own
//      process group.
//   2. Creates, through the API, an API key, a sandbox POS method linked to it, and a pool of large
//      approved payments (and the same in the baseline).
//   3. For each operation (create payment, get payment, idempotent replay, refund) drives both with the
//      same autocannon load: a discarded warm-up, then rounds alternating which side goes first.
//   4. Asks the service for the EXPLAIN QUERY PLAN of every statement the sampled requests ran.
//   5. Per-key load: a quiet API key reads get payment at a steady rate alone, beside a flood spread over the
//      operations' keys (none reaches its limit), and beside one key of the same owner flooding beyond its limit.
//   6. The single-writer model (bench/d1-single-writer.ts): restarts the service alone on the same state with every
//      D1 database binding running one call at a time for --d1-service-ms each, and drives creates with
//      BENCH_MODEL_CONNECTIONS: creates/s, p50/p99, and what each database's writer did (calls per create, busy share).
//      With --shards N the service runs on a generated config with N more D1 bindings SHARD_0... (shardedConfig).
//   7. The latency model: restarts both on the same state with every D1 round trip delayed by
//      BENCH_LATENCY_MS (a Worker far from the database's primary) and measures p50/p99 per operation
//      with few connections, so the serial round trips show as latency.
//   8. Prints and writes bench/RESULTS.md: requests/s, p50/p99 latency, errors and non-2xx, the ratio
//      to the baseline, D1 statements / round trips / rows per operation (sampled `X-D1-Stats`),
//      workerd CPU time per request (/proc utime+stime of each side's workerd processes per round), the
//      query plans, the per-key table and the latency model's table.
//   9. Stops every process it started (whole process groups) and removes the temporary directory.
//
// Options: --d1-service-ms N (or BENCH_D1_SERVICE_MS; 20; 0 skips the single-writer model), --shards N (or
// BENCH_SHARDS; 0): see "single-writer model and shards" below. BENCH_MODEL_CONNECTIONS (16), BENCH_MODEL_DURATION
// (s per round, 5), BENCH_SHARD_MIGRATIONS (the shards' migrations folder; default: a SHARD_ binding's own in
// wrangler.toml, else DB's).
// Knobs (environment): BENCH_DURATION (s per round, 5), BENCH_ROUNDS (4), BENCH_WARMUP (s, 3),
// BENCH_CONNECTIONS (16), BENCH_POOL (payments for reads and refunds, 256), BENCH_SAMPLES (5),
// BENCH_OPS (comma list of create,get,replay,refund), BENCH_LATENCY_MS (the latency model's delay per D1
// round trip, 50; 0 skips it), BENCH_LATENCY_CONNECTIONS (4), BENCH_LATENCY_DURATION (s per round, 5),
// BENCH_KEYS (API keys the operations' load is spread over, 32), BENCH_KEYLOAD_DURATION (s per per-key phase, 10;
// 0 skips it), BENCH_KEYLOAD_RATE (the quiet key's requests/s, 20).
// Loopback only. Not part of `npm test`.
import autocannon from 'autocannon';
import type { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { isAbsolute, join } from 'node:path';
import { ensureAdmin, ROOT, runWrangler } from '../scripts/lib/admin.mjs';
import { databaseBindings } from '../scripts/lib/databases.mjs';
import { exited, killGroup } from '../scripts/lib/local-server.ts';
import { CLK_TCK, cpuTicks, workerdPids, workerdVersion } from './workerd-cpu.ts';
import { sleep, startWranglerDev, type WranglerDev } from './wrangler-dev.ts';
import {
  D1_OPERATION_STATS_HEADER,
  D1_STATEMENTS_HEADER,
  D1_STATEMENTS_REQUEST_HEADER,
  D1_STATS_HEADER,
  decodeStatements,
  parseD1Stats,
  type D1Stats,
  type StatementLog,
} from './d1-meter.ts';
import { platformModelVars } from './platform-model.ts';

const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
if (major < 22 || (major === 22 && minor < 18)) {
  console.error(
    `npm run bench needs Node 22.18+ (found ${process.version}); run it through npm, which uses the project's own Node.`,
  );
  process.exit(1);
}

function intSetting(name: string, fallback: number, min: number, max: number, raw = process.env[name]): number {
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    console.error(`${name} must be an integer from ${min} to ${max} (got ${raw}).`);
    process.exit(1);
  }
  return value;
}

/** `--flag N` or `--flag=N` on the command line (`npm run bench -- --flag N`), else the environment's `name`. */
function optionSetting(flag: string, name: string, fallback: number, min: number, max: number): number {
  const args = process.argv.slice(2);
  const at = args.findIndex((arg) => arg === flag || arg.startsWith(`${flag}=`));
  if (at === -1) return intSetting(name, fallback, min, max);
  const arg = args[at]!;
  return intSetting(flag, fallback, min, max, arg.includes('=') ? arg.slice(flag.length + 1) : args[at + 1]);
}

const DURATION_S = intSetting('BENCH_DURATION', 5, 1, 120);
const ROUNDS = intSetting('BENCH_ROUNDS', 4, 1, 20);
const WARMUP_S = intSetting('BENCH_WARMUP', 3, 1, 60);
const CONNECTIONS = intSetting('BENCH_CONNECTIONS', 16, 16, 256);
const POOL = intSetting('BENCH_POOL', 256, 16, 5000);
const SAMPLES = intSetting('BENCH_SAMPLES', 5, 1, 50);
const LATENCY_MS = intSetting('BENCH_LATENCY_MS', 50, 0, 1000);
const LATENCY_CONNECTIONS = intSetting('BENCH_LATENCY_CONNECTIONS', 4, 1, 64);
const LATENCY_DURATION_S = intSetting('BENCH_LATENCY_DURATION', 5, 1, 120);
// Each API key may send 500 requests per 10 s in `test` (docs/limits.md): one key alone would be refused under the
// operations' load, so the load is spread over many keys (32 keep each under its limit up to 1,600 requests/s);
// every request still goes through the rate limiter, as in production.
const KEYS = intSetting('BENCH_KEYS', 32, 1, 256);
const KEYLOAD_S = intSetting('BENCH_KEYLOAD_DURATION', 10, 0, 120);
const KEYLOAD_RATE = intSetting('BENCH_KEYLOAD_RATE', 20, 1, 45);
// The single-writer model (bench/d1-single-writer.ts): each D1 database runs one call at a time, each holding it this
// long (0 skips the scenario). Its creates run with MODEL_CONNECTIONS connections, ROUNDS rounds of MODEL_DURATION_S.
const D1_SERVICE_MS = optionSetting('--d1-service-ms', 'BENCH_D1_SERVICE_MS', 20, 0, 1000);
const MODEL_CONNECTIONS = intSetting('BENCH_MODEL_CONNECTIONS', 16, 1, 256);
const MODEL_DURATION_S = intSetting('BENCH_MODEL_DURATION', 5, 1, 120);
// Shard databases the service is given: SHARD_0 ... SHARD_{n-1}, each a distinct local database (shardedConfig).
// 0: the project's wrangler.toml as it is.
const SHARDS = optionSetting('--shards', 'BENCH_SHARDS', 0, 0, 16);
/**
 * `model` (default): the service runs with the bench's models of two platform features whose local emulation costs
 * far more than the deployed platform (bench/instrumented.ts): the Rate Limiting binding and the console's transport.
 * `local`: wrangler dev's own emulation, to measure what it adds.
 */
const PLATFORM = process.env.BENCH_PLATFORM === 'local' ? 'local' : 'model';
// `--scale 1,2,4` (or BENCH_SCALE): only the single-writer model, once per shard count, each on a fresh deployment with
// that many shards and BENCH_SCALE_OWNERS merchants (8) placed by the directory's policy; written to RESULTS.md's
// "Scale" section (scaleRun). The rest of RESULTS.md is kept.
const SCALE_COUNTS = (() => {
  const flag = process.argv.indexOf('--scale');
  const raw = flag >= 0 ? process.argv[flag + 1] : process.env.BENCH_SCALE;
  if (!raw) return [];
  const counts = raw.split(',').map((v) => intSetting('--scale', 1, 1, 16, v.trim()));
  return counts;
})();
const SCALE_OWNERS = intSetting('BENCH_SCALE_OWNERS', 8, 1, 64);
// The placement experiment of `--scale`: D1 round-trip delays (ms) of a shard near the merchant and of one far from it.
const [NEAR_MS, FAR_MS] = (process.env.BENCH_PLACEMENT_DELAYS ?? '5,80')
  .split(',')
  .map((v) => intSetting('BENCH_PLACEMENT_DELAYS', 5, 0, 1000, v));
const OPERATION_NAMES = ['create', 'get', 'replay', 'refund'] as const;
type OperationName = (typeof OPERATION_NAMES)[number];
const SELECTED = (process.env.BENCH_OPS ?? OPERATION_NAMES.join(','))
  .split(',')
  .map((s) => s.trim()) as OperationName[];
for (const name of SELECTED) {
  if (!OPERATION_NAMES.includes(name)) {
    console.error(`BENCH_OPS: unknown operation ${name} (known: ${OPERATION_NAMES.join(', ')}).`);
    process.exit(1);
  }
}
/** Whatever happens, the run ends (and cleans up) after this long. */
const DEADLINE_MS = 45 * 60_000;
const RESULTS_FILE = join(ROOT, 'bench', 'RESULTS.md');
const RUN_ID = randomBytes(4).toString('hex');

const log = (message: string) => console.log(`[bench] ${message}`);

// ------------------------------------------------------------------ processes

interface Server extends WranglerDev {
  name: 'service' | 'baseline';
}

const started: ChildProcess[] = [];
let tempDir: string | null = null;

async function cleanup() {
  for (const child of started) if (!exited(child)) killGroup(child, 'SIGTERM');
  const deadline = Date.now() + 10_000;
  while (started.some((child) => !exited(child)) && Date.now() < deadline) await sleep(100);
  // Children that outlived their wrangler (workerd) share its group.
  for (const child of started) killGroup(child, 'SIGKILL');
  if (tempDir) rmSync(tempDir, { recursive: true, force: true });
  tempDir = null;
}

async function startWrangler(name: Server['name'], args: string[], readyPath: string): Promise<Server> {
  const logFile = join(tempDir!, `${name}.log`);
  const dev = await startWranglerDev({ name, args, readyPath, logFile, spawned: (child) => started.push(child) });
  return { name, ...dev };
}

async function stopServer(server: Server) {
  killGroup(server.child, 'SIGTERM');
  const deadline = Date.now() + 10_000;
  while (!exited(server.child) && Date.now() < deadline) await sleep(100);
  killGroup(server.child, 'SIGKILL');
}

// ------------------------------------------------------------------ HTTP set-up

interface HttpAnswer {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

async function http(
  baseUrl: string,
  method: string,
  path: string,
  options: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<HttpAnswer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.Authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(baseUrl + path, {
    method,
    headers,
    ...(options.body !== undefined
      ? { body: typeof options.body === 'string' ? options.body : JSON.stringify(options.body) }
      : {}),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, text, body };
}

function expectStatus(step: string, answer: HttpAnswer, status: number) {
  if (answer.status !== status)
    throw new Error(`${step}: expected ${status}, got ${answer.status} ${answer.text.slice(0, 500)}`);
}

/** Runs `task` for 0..count-1 with at most `parallel` in flight. */
async function inParallel(count: number, parallel: number, task: (index: number) => Promise<void>) {
  let next = 0;
  const worker = async () => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(parallel, count) }, worker));
}

// ------------------------------------------------------------------ operations

/** One HTTP request as both fetch (samples) and autocannon (load) send it. */
interface RequestSpec {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

interface Side {
  server: Server;
  /** Builds the n-th request of an operation (fresh keys and references where the operation needs them). */
  request: Record<OperationName, (n: number) => RequestSpec>;
  /** The service's per-key load: get payment with the flooding key, and with the quiet key of the same owner. */
  perKey?: Record<'flooding' | 'quiet', (n: number) => RequestSpec>;
  /**
   * Requests n and n + keyStride go with the same API key. The single requests whose D1 work is sampled use
   * one key, as a busy key's requests do: with a new key each, every sample would miss the isolate's key and
   * method caches and count the lookups a busy key never makes.
   */
  keyStride?: number;
}

const LABELS: Record<OperationName, string> = {
  create: 'create payment (POS, approved)',
  get: 'get payment',
  replay: 'idempotent replay',
  refund: 'refund (0.01 of a large payment)',
};

const json = { 'Content-Type': 'application/json' };
const LARGE = '1000000.00';

interface ApiKey {
  id: string;
  secret: string;
}

async function createApiKey(base: string, token: string, name: string, scopes: string[]): Promise<ApiKey> {
  const key = await http(base, 'POST', '/v1/account/api-keys', { token, body: { name, scopes } });
  expectStatus('create API key', key, 201);
  return { id: key.body.data.id as string, secret: key.body.data.secret as string };
}

/** The sandbox POS method every bench merchant uses, linked to `keys`; its id. */
async function createSandboxMethod(base: string, token: string, keys: ApiKey[]): Promise<string> {
  const method = await http(base, 'POST', '/v1/account/payment-methods', {
    token,
    body: {
      connector_definition_version_id: 'cnv_sandbox_pos_v1',
      name: 'Bench POS',
      credentials: { api_key: `bench-${randomUUID()}` },
    },
  });
  expectStatus('create payment method', method, 201);
  const methodId = method.body.data.id as string;
  for (const key of keys) {
    const linked = await http(base, 'POST', `/v1/account/payment-methods/${methodId}/api-keys`, {
      token,
      body: { api_key_id: key.id },
    });
    expectStatus('link method', linked, 201);
  }
  return methodId;
}

async function prepareService(server: Server, adminEmail: string, adminPassword: string): Promise<Side> {
  const base = server.baseUrl;
  const login = await http(base, 'POST', '/v1/auth/login', { body: { email: adminEmail, password: adminPassword } });
  expectStatus('login', login, 201);
  const token = login.body.data.access_token as string;
  const scopes = ['payment_methods:read', 'payments:create', 'payments:read', 'payments:cancel', 'refunds:create'];
  const keys: ApiKey[] = [];
  for (let k = 0; k < KEYS; k++) keys.push(await createApiKey(base, token, `bench ${RUN_ID} ${k}`, scopes));
  const methodId = await createSandboxMethod(base, token, keys);

  const auth = (n: number) => ({ Authorization: `Bearer ${keys[n % keys.length]!.secret}` });
  const payment = (reference: string, value: string) =>
    JSON.stringify({ amount: { value, currency: 'USD' }, external_reference: reference, payment_method: methodId });
  const pool = await createPool(server, (i) => ({
    method: 'POST',
    path: '/v1/payments',
    headers: { ...auth(i), ...json, 'Idempotency-Key': `pool-${RUN_ID}-${i}` },
    body: payment(`pool-${RUN_ID}-${i}`, LARGE),
  }));
  // A replay is of the same key's earlier request (idempotency is per credential): one seed per key.
  const replays = keys.map(
    (_, k): RequestSpec => ({
      method: 'POST',
      path: '/v1/payments',
      headers: { ...auth(k), ...json, 'Idempotency-Key': `replay-${RUN_ID}-${k}` },
      body: payment(`replay-${RUN_ID}-${k}`, '10.00'),
    }),
  );
  for (const replay of replays) expectStatus('replay seed', await send(base, replay), 201);
  // Two more keys of the same owner for the per-key load, used nowhere else.
  const flooding = await createApiKey(base, token, `bench ${RUN_ID} flooding`, scopes);
  const quiet = await createApiKey(base, token, `bench ${RUN_ID} quiet`, scopes);
  const read = (key: { secret: string }) => (n: number) => ({
    method: 'GET' as const,
    path: `/v1/payments/${pool[n % pool.length]}`,
    headers: { Authorization: `Bearer ${key.secret}` },
  });
  return {
    server,
    request: {
      create: (n) => ({
        method: 'POST',
        path: '/v1/payments',
        headers: { ...auth(n), ...json, 'Idempotency-Key': `create-${RUN_ID}-${n}` },
        body: payment(`create-${RUN_ID}-${n}`, '10.00'),
      }),
      get: (n) => ({ method: 'GET', path: `/v1/payments/${pool[n % pool.length]}`, headers: auth(n) }),
      replay: (n) => replays[n % replays.length]!,
      refund: (n) => ({
        method: 'POST',
        path: `/v1/payments/${pool[n % pool.length]}/refunds`,
        headers: { ...auth(n), ...json, 'Idempotency-Key': `refund-${RUN_ID}-${n}` },
        body: JSON.stringify({ amount: { value: '0.01', currency: 'USD' } }),
      }),
    },
    perKey: { flooding: read(flooding), quiet: read(quiet) },
    keyStride: keys.length,
  };
}

async function prepareBaseline(server: Server): Promise<Side> {
  const base = server.baseUrl;
  const payment = (reference: string, value: string) =>
    JSON.stringify({
      amount: { value, currency: 'USD' },
      external_reference: reference,
      payment_method: 'pm_baseline',
    });
  const pool = await createPool(server, (i) => ({
    method: 'POST',
    path: '/payments',
    headers: { ...json, 'Idempotency-Key': `pool-${RUN_ID}-${i}` },
    body: payment(`pool-${RUN_ID}-${i}`, LARGE),
  }));
  const replay: RequestSpec = {
    method: 'POST',
    path: '/payments',
    headers: { ...json, 'Idempotency-Key': `replay-${RUN_ID}` },
    body: payment(`replay-${RUN_ID}`, '10.00'),
  };
  expectStatus('baseline replay seed', await send(base, replay), 201);
  return {
    server,
    request: {
      create: (n) => ({
        method: 'POST',
        path: '/payments',
        headers: { ...json, 'Idempotency-Key': `create-${RUN_ID}-${n}` },
        body: payment(`create-${RUN_ID}-${n}`, '10.00'),
      }),
      get: (n) => ({ method: 'GET', path: `/payments/${pool[n % pool.length]}`, headers: {} }),
      replay: () => replay,
      refund: (n) => ({
        method: 'POST',
        path: `/payments/${pool[n % pool.length]}/refunds`,
        headers: { ...json, 'Idempotency-Key': `refund-${RUN_ID}-${n}` },
        body: JSON.stringify({ amount: { value: '0.01', currency: 'USD' } }),
      }),
    },
  };
}

/**
 * The operations whose service queries D1 differently from the baseline, with the serial round trips it makes:
 * the baseline is also run in the service's shape (bench/baseline, `X-Bench-Round-Trips`), those round trips
 * queried as the service's are (read replication): the get's read and an operation's last write through a D1
 * session, whose bookmark the answer carries; the others through the binding.
 */
const ROUND_TRIP_SHAPED: Partial<Record<OperationName, number>> = { create: 2, get: 1, refund: 3 };
const SHAPED_LABEL = "baseline in the service's shape";
const shapeOf = (operation: OperationName) => {
  const n = ROUND_TRIP_SHAPED[operation]!;
  return n === 1 ? '1 round trip through a session' : `${n} round trips, the last through a session`;
};

/**
 * The baseline in the service's shape: the same requests (of each operation in ROUND_TRIP_SHAPED), answered by the
 * baseline in the service's round trips, the bookmarked one through a session. Its counters are the baseline's
 * (same server), so every request still gets a fresh key and reference.
 */
function inServiceShape(baseline: Side): Side {
  const request = { ...baseline.request };
  for (const operation of Object.keys(ROUND_TRIP_SHAPED) as OperationName[]) {
    request[operation] = (n: number) => {
      const spec = baseline.request[operation](n);
      return { ...spec, headers: { ...spec.headers, 'X-Bench-Round-Trips': 'service' } };
    };
  }
  return { ...baseline, request };
}

async function createPool(server: Server, spec: (i: number) => RequestSpec): Promise<string[]> {
  const ids: string[] = new Array(POOL);
  await inParallel(POOL, 8, async (i) => {
    const answer = await send(server.baseUrl, spec(i));
    expectStatus(`${server.name} pool payment`, answer, 201);
    if (answer.body?.data?.status !== 'approved')
      throw new Error(`${server.name} pool payment is ${answer.body?.data?.status}, expected approved`);
    ids[i] = answer.body.data.id as string;
  });
  return ids;
}

const send = (baseUrl: string, spec: RequestSpec) =>
  http(baseUrl, spec.method, spec.path, {
    headers: spec.headers,
    ...(spec.body !== undefined ? { body: spec.body } : {}),
  });

// ------------------------------------------------------------------ load

interface Round {
  seconds: number;
  requests: number;
  latencies: number[];
  errors: number;
  non2xx: number;
  cpuTicks: number;
  /** Responses per status code, and the first bodies of non-2xx answers (to say what went wrong). */
  statuses: Map<number, number>;
  failures: string[];
}

/** Request numbers are global per side and operation, so every request of a run gets fresh keys. */
const counters = new Map<string, number>();

function load(side: Side, operation: OperationName, seconds: number, connections = CONNECTIONS): Promise<Round> {
  return drive(side.server, `${side.server.name}:${operation}`, side.request[operation], seconds, { connections });
}

/** Drives one server with `request` for `seconds`: as fast as `connections` allow, or at `overallRate` per second. */
async function drive(
  server: Server,
  counterKey: string,
  request: (n: number) => RequestSpec,
  seconds: number,
  { connections, overallRate }: { connections: number; overallRate?: number },
): Promise<Round> {
  const pids = workerdPids(server.child.pid!);
  const nextRequest = () => {
    const n = counters.get(counterKey) ?? 0;
    counters.set(counterKey, n + 1);
    return request(n);
  };
  const latencies: number[] = [];
  const statuses = new Map<number, number>();
  const failures: string[] = [];
  const before = cpuTicks(pids);
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: server.baseUrl,
        connections,
        ...(overallRate !== undefined ? { overallRate } : {}),
        duration: seconds,
        timeout: 30,
        requests: [
          {
            setupRequest: (request) => {
              const spec = nextRequest();
              return {
                ...request,
                method: spec.method,
                path: spec.path,
                headers: spec.headers,
                ...(spec.body !== undefined ? { body: spec.body } : {}),
              };
            },
            onResponse: (status, body) => {
              statuses.set(status, (statuses.get(status) ?? 0) + 1);
              if ((status < 200 || status > 299) && failures.length < 3)
                failures.push(`${status} ${body.slice(0, 300)}`);
            },
          },
        ],
      },
      (error, res) => (error ? reject(error) : resolve(res)),
    );
    instance.on('response', (_client, _status, _bytes, responseTime) => latencies.push(responseTime));
  });
  const after = cpuTicks(pids);
  return {
    seconds: result.duration,
    requests: result.requests.total,
    latencies,
    errors: result.errors,
    non2xx: result.non2xx,
    cpuTicks: Math.max(0, after - before),
    statuses,
    failures,
  };
}

/** The D1 work of single requests, from `X-D1-Stats` (the service meters only while BENCH_D1_STATS is on). */
async function sampleD1(side: Side, operation: OperationName): Promise<Totals['d1']> {
  const totals: D1Stats[] = [];
  const operations: D1Stats[] = [];
  const statuses: number[] = [];
  const statements: StatementLog = new Map();
  const counterKey = `${side.server.name}:${operation}`;
  const stride = side.keyStride ?? 1;
  for (let i = 0; i < SAMPLES; i++) {
    const n = counters.get(counterKey) ?? 0;
    counters.set(counterKey, n + stride);
    const spec = side.request[operation](n);
    const answer = await send(side.server.baseUrl, {
      ...spec,
      headers: { ...spec.headers, [D1_STATEMENTS_REQUEST_HEADER]: '1' },
    });
    statuses.push(answer.status);
    const total = parseD1Stats(answer.headers.get(D1_STATS_HEADER));
    if (total) totals.push(total);
    const own = parseD1Stats(answer.headers.get(D1_OPERATION_STATS_HEADER));
    if (own) operations.push(own);
    decodeStatements(answer.headers.get(D1_STATEMENTS_HEADER), statements);
  }
  return { total: medianStats(totals), operation: medianStats(operations), statuses, statements };
}

function medianStats(samples: D1Stats[]): D1Stats | null {
  if (samples.length === 0) return null;
  const field = (name: keyof D1Stats) =>
    percentile(
      samples.map((s) => s[name]),
      50,
    );
  return {
    statements: field('statements'),
    roundTrips: field('roundTrips'),
    rowsRead: field('rowsRead'),
    rowsWritten: field('rowsWritten'),
    unmetered: field('unmetered'),
  };
}

function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

interface Totals {
  rounds: Round[];
  d1: { total: D1Stats | null; operation: D1Stats | null; statuses: number[]; statements: StatementLog };
}

function summarize(totals: Pick<Totals, 'rounds'>) {
  const seconds = totals.rounds.reduce((s, r) => s + r.seconds, 0);
  const requests = totals.rounds.reduce((s, r) => s + r.requests, 0);
  const latencies = totals.rounds.flatMap((r) => r.latencies);
  const ticks = totals.rounds.reduce((s, r) => s + r.cpuTicks, 0);
  return {
    rps: seconds > 0 ? requests / seconds : 0,
    requests,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    errors: totals.rounds.reduce((s, r) => s + r.errors, 0),
    non2xx: totals.rounds.reduce((s, r) => s + r.non2xx, 0),
    cpuMsPerRequest: requests > 0 ? ((ticks / CLK_TCK) * 1000) / requests : NaN,
    roundRps: totals.rounds.map((r) => (r.seconds > 0 ? r.requests / r.seconds : 0)),
    statuses: mergeStatuses(totals.rounds),
    failures: totals.rounds.flatMap((r) => r.failures).slice(0, 3),
  };
}

function mergeStatuses(rounds: Round[]): string {
  const all = new Map<number, number>();
  for (const round of rounds)
    for (const [status, count] of round.statuses) all.set(status, (all.get(status) ?? 0) + count);
  return [...all.entries()]
    .sort(([a], [b]) => a - b)
    .map(([status, count]) => `${status}×${count}`)
    .join(' ');
}

// ------------------------------------------------------------------ per-key load

type Summary = ReturnType<typeof summarize>;

interface PerKeyResult {
  /** The quiet key at its steady rate, alone. */
  alone: Summary;
  /** Beside the same flood spread over the operations' keys, none of them reaching its limit. */
  spread: { quiet: Summary; flood: Summary };
  /** Beside one key flooding alone, far beyond its limit. */
  oneKey: { quiet: Summary; flood: Summary };
}

/**
 * A key of an owner reads at a steady KEYLOAD_RATE (under its own limit) alone, then beside a flood of get payment
 * with every connection the operations use: first spread over the operations' keys, so that no key reaches its limit
 * (what one key could do without a limit), then from one other key of the same owner, far beyond its 500 requests
 * per 10 s. Locally one Worker isolate serves every request, so a flood that is served slows the quiet key; a flood
 * answered 429 costs little.
 */
async function perKeyLoad(side: Side): Promise<PerKeyResult> {
  const { flooding, quiet } = side.perKey!;
  const steady = () =>
    drive(side.server, 'per-key:quiet', quiet, KEYLOAD_S, { connections: 2, overallRate: KEYLOAD_RATE });
  const beside = async (counterKey: string, request: (n: number) => RequestSpec) => {
    const [q, flood] = await Promise.all([
      steady(),
      drive(side.server, counterKey, request, KEYLOAD_S, { connections: CONNECTIONS }),
    ]);
    return { quiet: summarize({ rounds: [q] }), flood: summarize({ rounds: [flood] }) };
  };
  const alone = summarize({ rounds: [await steady()] });
  const spread = await beside(`${side.server.name}:get`, side.request.get);
  const oneKey = await beside('per-key:flooding', flooding);
  return { alone, spread, oneKey };
}

function renderPerKey(perKey: PerKeyResult): string[] {
  const lines: string[] = [];
  lines.push('## Per-key load: one key flooding, another of the same owner');
  lines.push('');
  lines.push(
    `Get payment on the service (no added D1 delay), ${KEYLOAD_S} s per phase. A quiet API key reads at ${KEYLOAD_RATE} requests/s (2 connections): alone; beside a flood of ${CONNECTIONS} connections spread over the operations' ${KEYS} keys of the same owner, none of which reaches its limit (what one key could do without one); and beside one other key of the same owner flooding with the same ${CONNECTIONS} connections, far beyond its limit of 500 requests per 10 s (\`test\`; docs/limits.md). Each key is counted apart by the Workers Rate Limiting binding: the flooding key is answered \`429 rate_limited\` once its own budget is spent, the quiet key keeps getting 200. Locally a single Worker isolate serves every request, so whatever of a flood is served delays the quiet key; a refused request costs no D1 round trip (authentication is cached, then the rate limiter answers).`,
  );
  lines.push('');
  lines.push('| phase | key | req/s | answers (status × count) | p50 ms | p99 ms |');
  lines.push('| --- | --- | ---: | --- | ---: | ---: |');
  const row = (phase: string, key: string, s: Summary) =>
    lines.push(`| ${phase} | ${key} | ${fmt(s.rps)} | ${s.statuses || 'none'} | ${fmt(s.p50)} | ${fmt(s.p99)} |`);
  row('quiet key alone', 'quiet', perKey.alone);
  row(`flood spread over ${KEYS} keys (none limited)`, 'quiet', perKey.spread.quiet);
  row('', `flood (${KEYS} keys)`, perKey.spread.flood);
  row('one key flooding beyond its limit', 'quiet', perKey.oneKey.quiet);
  row('', 'flooding key', perKey.oneKey.flood);
  return lines;
}

// ------------------------------------------------------------------ single-writer model and shards

/**
 * The project's wrangler.toml with exactly `shards` D1 bindings `SHARD_0` ... `SHARD_{n-1}` in `env.test`, each a
 * distinct local database (its own database_id), written into `dir` with every relative path made absolute. SHARD_
 * bindings the file already lists for `env.test` are replaced; the shards' migrations folder is BENCH_SHARD_MIGRATIONS,
 * else the first listed SHARD_ binding's, else DB's. The Worker need not read the shards yet: the single-writer model
 * and the meter wrap whatever D1 bindings it is given (bench/instrumented.ts), so the scenario shows which databases
 * its requests reach.
 */
function shardedConfig(source: string, shards: number, root: string, shardMigrations?: string): string {
  const absolute = (path: string) => (isAbsolute(path) ? path : join(root, path));
  const text = absolutePaths(source, root);
  // Split into sections at each table header; a section runs to the next header.
  const sections = text.split(/^(?=\[)/m);
  const isTestD1 = (section: string) => section.startsWith('[[env.test.d1_databases]]');
  const bindingOf = (section: string) => /^binding\s*=\s*"([^"]+)"/m.exec(section)?.[1];
  const migrationsOf = (section: string) => /^migrations_dir\s*=\s*"([^"]+)"/m.exec(section)?.[1];
  const listedShards = sections.filter((section) => isTestD1(section) && bindingOf(section)?.startsWith('SHARD_'));
  const control = sections.find((section) => isTestD1(section) && bindingOf(section) === 'DB');
  const migrations =
    (shardMigrations && absolute(shardMigrations)) ??
    listedShards.map(migrationsOf).find(Boolean) ??
    (control && migrationsOf(control)) ??
    absolute('migrations');
  const kept = sections.filter((section) => !listedShards.includes(section));
  const added = Array.from({ length: shards }, (_, i) =>
    [
      '[[env.test.d1_databases]]',
      `binding = "SHARD_${i}"`,
      `database_name = "payment-service-test-shard-${i}"`,
      `database_id = "00000000-0000-4000-8000-${(0x5d000 + i).toString(16).padStart(12, '0')}"`,
      `migrations_dir = ${JSON.stringify(migrations)}`,
      '',
    ].join('\n'),
  );
  // Arrays of tables may gain elements anywhere in the file: the shards go last.
  return [
    ...kept,
    ...(kept.at(-1)?.endsWith('\n') ? [] : ['\n']),
    '\n# Added by bench/run.ts (--shards)\n',
    ...added,
  ].join('');
}

/** A wrangler config's relative paths made absolute, so that it can be written elsewhere. */
function absolutePaths(source: string, root: string): string {
  return source.replace(/^(main|directory|migrations_dir)\s*=\s*"([^"]+)"/gm, (_, key: string, path: string) => {
    return `${key} = ${JSON.stringify(isAbsolute(path) ? path : join(root, path))}`;
  });
}

/**
 * The service's config as the bench runs it with the platform models: without its `[assets]` (the explorer's files,
 * which the bench never asks for). Deployed, Cloudflare's asset router in front of the Worker is not the Worker's work
 * (developers.cloudflare.com/workers/static-assets/: requests to assets are free; with `run_worker_first` every
 * request goes on to the Worker); under wrangler dev it is one more worker on the same cores for every request.
 */
function platformConfig(config: string): string {
  if (PLATFORM !== 'model') return config;
  return config
    .split(/^(?=\[)/m)
    .filter((section) => !section.startsWith('[assets]'))
    .join('');
}

interface ModelResult {
  serviceMs: number;
  connections: number;
  create: Summary;
  /** workerd's CPU over the rounds, as a share of every core of the machine. */
  cpuShare: number;
  /** Per D1 binding: what its writer did during the rounds. */
  writers: {
    binding: string;
    calls: number;
    perCreate: number;
    busyShare: number;
    waitedMsPerCall: number;
    maxQueued: number;
  }[];
}

type WriterSnapshot = Record<string, { calls: number; busyMs: number; waitedMs: number; maxQueued: number }>;

interface PlatformModels {
  rate_limit: string | null;
  console: 'model' | 'local';
  console_lines: number;
}

/** The platform models the service runs with (bench/platform-model.ts); refuses a service without the ones asked. */
async function platformOf(server: Server): Promise<PlatformModels> {
  const answer = await http(server.baseUrl, 'GET', '/__bench/platform');
  expectStatus('platform', answer, 200);
  const platform = answer.body as PlatformModels;
  if (PLATFORM === 'model' && (platform.rate_limit === null || platform.console !== 'model'))
    throw new Error(`the service runs without the platform models: ${JSON.stringify(platform)}`);
  return platform;
}

async function writerSnapshot(server: Server): Promise<{ bindings: string[]; writers: WriterSnapshot }> {
  const answer = await http(server.baseUrl, 'GET', '/__bench/d1-writers');
  expectStatus('d1 writers', answer, 200);
  return answer.body as { bindings: string[]; writers: WriterSnapshot };
}

/**
 * Creates under the single-writer model: the service restarted on the same state with BENCH_D1_SERVICE_MS, a
 * warm-up, then ROUNDS rounds of MODEL_DURATION_S with MODEL_CONNECTIONS connections. Each database's writer is read
 * before and after the rounds, so its calls per create and the share of the time it was busy are the rounds' own.
 */
async function singleWriterModel(side: Side): Promise<ModelResult> {
  const connections = MODEL_CONNECTIONS;
  // One create per API key first, one at a time: the restarted isolate's key and method caches fill (a cold key costs
  // its lookups, which under the model would queue behind the whole load), then the warm-up.
  const stride = side.keyStride ?? 1;
  const first = counters.get(`${side.server.name}:create`) ?? 0;
  counters.set(`${side.server.name}:create`, first + stride);
  for (let k = 0; k < stride; k++)
    expectStatus('model: first create per key', await send(side.server.baseUrl, side.request.create(first + k)), 201);
  await load(side, 'create', WARMUP_S, connections);
  const before = await writerSnapshot(side.server);
  const rounds: Round[] = [];
  for (let round = 0; round < ROUNDS; round++) rounds.push(await load(side, 'create', MODEL_DURATION_S, connections));
  const after = await writerSnapshot(side.server);
  const create = summarize({ rounds });
  const seconds = rounds.reduce((sum, r) => sum + r.seconds, 0);
  const ticks = rounds.reduce((sum, r) => sum + r.cpuTicks, 0);
  const writers = after.bindings.map((binding) => {
    const a = after.writers[binding] ?? { calls: 0, busyMs: 0, waitedMs: 0, maxQueued: 0 };
    const b = before.writers[binding] ?? { calls: 0, busyMs: 0, waitedMs: 0, maxQueued: 0 };
    const calls = a.calls - b.calls;
    return {
      binding,
      calls,
      perCreate: create.requests > 0 ? calls / create.requests : NaN,
      busyShare: seconds > 0 ? (a.busyMs - b.busyMs) / (seconds * 1000) : NaN,
      waitedMsPerCall: calls > 0 ? (a.waitedMs - b.waitedMs) / calls : NaN,
      maxQueued: a.maxQueued,
    };
  });
  return {
    serviceMs: D1_SERVICE_MS,
    connections,
    create,
    cpuShare: seconds > 0 ? ticks / CLK_TCK / (seconds * os.cpus().length) : NaN,
    writers,
  };
}

function renderModel(model: ModelResult): string[] {
  const lines: string[] = [];
  const busiest = model.writers.reduce<ModelResult['writers'][number] | undefined>(
    (top, w) => (top === undefined || w.busyShare > top.busyShare ? w : top),
    undefined,
  );
  const ceiling = busiest && busiest.perCreate > 0 ? 1000 / (model.serviceMs * busiest.perCreate) : NaN;
  lines.push(`## Single-writer model: every D1 database one call at a time, ${model.serviceMs} ms each`);
  lines.push('');
  lines.push(
    `Create payment on the service alone, restarted on the same state with \`BENCH_D1_SERVICE_MS=${model.serviceMs}\` (bench/d1-single-writer.ts): each D1 database binding the Worker has (${model.writers.map((w) => `\`${w.binding}\``).join(', ')}) runs one statement or batch at a time, each holding its database ${model.serviceMs} ms, in arrival order; different databases run in parallel. ${model.connections} connections, ${ROUNDS} rounds × ${MODEL_DURATION_S} s after a ${WARMUP_S} s warm-up${SHARDS > 0 ? `; ${SHARDS} shard bindings added by the bench (\`--shards ${SHARDS}\`)` : ''}.`,
  );
  lines.push('');
  lines.push(
    '| creates/s | p50 ms | p99 ms | non-2xx | errors | ceiling of the busiest database (creates/s) | workerd CPU (share of all cores) |',
  );
  lines.push('| ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  lines.push(
    `| ${fmt(model.create.rps)} | ${fmt(model.create.p50)} | ${fmt(model.create.p99)} | ${model.create.non2xx} | ${model.create.errors} | ${fmt(ceiling)} | ${fmt(100 * model.cpuShare, 0)}% |`,
  );
  lines.push('');
  if (model.create.failures.length > 0) {
    lines.push(`Non-2xx answers: ${model.create.statuses}; first bodies:`);
    lines.push('');
    for (const body of model.create.failures) lines.push(`- \`${body.replaceAll('`', "'").replaceAll('\n', ' ')}\``);
    lines.push('');
  }
  lines.push('| D1 binding | calls | calls per create | busy (share of the time) | wait per call ms | deepest queue |');
  lines.push('| --- | ---: | ---: | ---: | ---: | ---: |');
  for (const w of model.writers)
    lines.push(
      `| \`${w.binding}\` | ${w.calls} | ${fmt(w.perCreate, 2)} | ${fmt(100 * w.busyShare, 0)}% | ${fmt(w.waitedMsPerCall)} | ${w.maxQueued} |`,
    );
  lines.push('');
  lines.push(
    `The ceiling is 1000 / (${model.serviceMs} ms × the busiest database's calls per create). A busy share near 100% with the CPU well below it means the database is the bottleneck, as the model intends; a CPU share near 100% means the local machine is, and the service time is too short for this machine.`,
  );
  return lines;
}

// ------------------------------------------------------------------ report

interface OperationResult {
  name: OperationName;
  service: ReturnType<typeof summarize>;
  baseline: ReturnType<typeof summarize>;
  serviceD1: Totals['d1'];
  baselineD1: Totals['d1'];
  ratio: number;
  roundRatios: number[];
  /** EXPLAIN QUERY PLAN of each statement the sampled service requests ran. */
  plans: QueryPlan[];
  /**
   * For an operation in ROUND_TRIP_SHAPED: the baseline in the service's shape, and its throughput as a
   * ratio to the plain baseline (what a service adding nothing but that way of querying D1 would score).
   */
  bound?: { summary: ReturnType<typeof summarize>; d1: Totals['d1']; ratio: number; roundRatios: number[] };
  /** The latency model's measurement, when it ran. */
  latency?: {
    service: ReturnType<typeof summarize>;
    baseline: ReturnType<typeof summarize>;
    serviceD1: Totals['d1'];
    baselineD1: Totals['d1'];
  };
}

interface QueryPlan {
  sql: string;
  plan: string[];
}

/**
 * A plan line that reads a whole table: `SCAN <table>` (SQLite's full scan), with or without an index
 * (a full index scan still reads every row). `SCAN CONSTANT ROW` (an INSERT ... SELECT of values), scans of
 * subquery results, and `SCAN json_each ... VIRTUAL TABLE` (the elements of one row's JSON array, e.g. an
 * endpoint's `enabled_events`) are not table scans.
 */
export const isTableScan = (detail: string) =>
  /^SCAN /.test(detail) && !/^SCAN (CONSTANT ROW|\(subquery|\w+ \(subquery|json_each\b.*VIRTUAL TABLE)/.test(detail);

async function explainStatements(server: Server, statements: StatementLog): Promise<QueryPlan[]> {
  if (statements.size === 0) return [];
  const answer = await http(server.baseUrl, 'POST', '/__bench/explain', { body: [...statements] });
  expectStatus('explain', answer, 200);
  return answer.body as QueryPlan[];
}

const fmt = (value: number, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
const d1Cell = (stats: D1Stats | null, pick: (s: D1Stats) => number) => (stats ? String(pick(stats)) : 'n/a');
/** Rows, marked when some statements could not be metered (their rows are missing from the count). */
const rowsCell = (stats: D1Stats | null, pick: (s: D1Stats) => number) =>
  stats ? `${pick(stats)}${stats.unmetered > 0 ? ` (+${stats.unmetered} unmetered)` : ''}` : 'n/a';

function machine() {
  const cpuinfo = existsSync('/proc/cpuinfo') ? readFileSync('/proc/cpuinfo', 'utf8') : '';
  const model = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1]?.trim() ?? os.cpus()[0]?.model ?? 'unknown';
  return {
    model,
    cores: os.cpus().length,
    memoryGiB: os.totalmem() / 2 ** 30,
    node: process.version,
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
  };
}

interface Target {
  label: string;
  ok: boolean | null;
  detail: string;
}

/** Throughput ratio to the baseline and serial D1 round trips per operation (the whole request, auth included). */
const TARGETS: Record<OperationName, { ratio: number; roundTrips: number | null }> = {
  create: { ratio: 0.7, roundTrips: 2 },
  get: { ratio: 0.8, roundTrips: 1 },
  replay: { ratio: 0.8, roundTrips: null },
  refund: { ratio: 0.7, roundTrips: 3 },
};

function targets(results: OperationResult[]): Target[] {
  const list: Target[] = [];
  for (const r of results) {
    const goal = TARGETS[r.name];
    list.push({
      label: `${LABELS[r.name]} ≥ ${goal.ratio}× baseline`,
      ok: r.ratio >= goal.ratio,
      detail:
        `${fmt(r.ratio, 2)}× (median of rounds ${fmt(percentile(r.roundRatios, 50), 2)}×)` +
        (r.bound
          ? `; the baseline itself in the service's shape (${shapeOf(r.name)}): ${fmt(r.bound.ratio, 2)}×, the service ${fmt(r.service.rps / r.bound.summary.rps, 2)}× that`
          : ''),
    });
    const total = r.serviceD1.total;
    if (goal.roundTrips !== null) {
      list.push({
        label: `${LABELS[r.name]} ≤ ${goal.roundTrips} serial D1 round trips`,
        ok: total ? total.roundTrips <= goal.roundTrips : null,
        detail: `${total ? total.roundTrips : 'n/a'} for the whole request, auth included (${r.serviceD1.operation ? `${r.serviceD1.operation.roundTrips} inside the idempotency object` : 'no idempotency object'})`,
      });
    }
    if (r.name === 'get') {
      const cpu = r.service.cpuMsPerRequest / r.baseline.cpuMsPerRequest;
      list.push({
        label: "workerd CPU per get payment ≤ 1.5× the baseline's",
        ok: Number.isFinite(cpu) ? cpu <= 1.5 : null,
        detail: `${fmt(cpu, 2)}× (${fmt(r.service.cpuMsPerRequest, 2)} against ${fmt(r.baseline.cpuMsPerRequest, 2)} ms)`,
      });
    }
    if (r.name === 'get')
      list.push({
        label: 'rows read per get payment ≤ 2',
        ok: total ? total.rowsRead <= 2 : null,
        detail: `${total ? total.rowsRead : 'n/a'} rows read`,
      });
  }
  const scans = results.flatMap((r) =>
    r.plans.filter((p) => p.plan.some(isTableScan)).map((p) => `${r.name}: ${p.sql.slice(0, 80)}`),
  );
  const explained = results.reduce((n, r) => n + r.plans.length, 0);
  list.push({
    label: 'no statement scans a table',
    ok: explained > 0 ? scans.length === 0 : null,
    detail: scans.length === 0 ? `${explained} statements explained, none scans` : scans.join('; '),
  });
  return list;
}

function renderMarkdown(
  results: OperationResult[],
  info: { workerd: string; date: string; seconds: number },
  notes: string,
  perKey: PerKeyResult | undefined,
  model: ModelResult | undefined,
): string {
  const m = machine();
  const lines: string[] = [];
  lines.push('# Benchmark: the service against its platform baseline');
  lines.push('');
  lines.push('Written by `npm run bench` (bench/run.ts); only the Notes section is kept from one run to the next.');
  lines.push('The baseline (bench/baseline) does only the unavoidable work of each operation on the same runtime:');
  lines.push('create = one Durable Object call + one D1 batch write; get = one indexed D1 read; replay = one Durable');
  lines.push(
    'Object call answering a stored body; refund = one Durable Object call + one D1 batch write. Ratios compare',
  );
  lines.push('the two measured in the same run, in alternating rounds, so a busy machine slows both alike. The');
  lines.push(
    'service queries D1 otherwise: in more serial round trips than one batch (create 2, refund 3), and through',
  );
  lines.push("a D1 session where an answer carries a bookmark (read replication: the get's read, an operation's last");
  lines.push("write), which wrangler's D1 makes dearer than the binding's own queries (`npm run bench:d1-sessions`).");
  lines.push("So the baseline also runs in the service's shape (its round trips, each as small as it can be, queried");
  lines.push(
    'as the service\'s are: "baseline in the service\'s shape"): its ratio is the most any service querying D1',
  );
  lines.push('that way can reach on this runtime.');
  lines.push('');
  lines.push('## Machine');
  lines.push('');
  lines.push(`- CPU: ${m.model}, ${m.cores} cores; memory ${fmt(m.memoryGiB, 1)} GiB; ${m.platform}`);
  lines.push(`- Node ${m.node}; ${info.workerd} (wrangler dev, local mode)`);
  lines.push(`- Date: ${info.date}; run took ${fmt(info.seconds / 60, 1)} min`);
  lines.push(
    `- Load: autocannon, ${CONNECTIONS} connections, warm-up ${WARMUP_S} s per side (discarded), ${ROUNDS} rounds × ${DURATION_S} s per side, each side first in turn (the order rotates by round)`,
  );
  lines.push(
    `- Pool: ${POOL} approved payments of ${LARGE} USD per side for reads and refunds (refunds spread over the pool)`,
  );
  lines.push(
    PLATFORM === 'model'
      ? "- Platform: the bench's models of the Rate Limiting binding, the console's transport and the static assets' router (bench/platform-model.ts); `BENCH_PLATFORM=local` runs wrangler dev's own emulation of them"
      : "- Platform: wrangler dev's own emulation of the Rate Limiting binding, the console's transport and the static assets' router (`BENCH_PLATFORM=local`)",
  );
  lines.push('');
  lines.push('## Results');
  lines.push('');
  lines.push(
    '| operation | side | req/s | ratio | p50 ms | p99 ms | errors | non-2xx | D1 statements | D1 round trips | rows read | rows written | workerd CPU ms/req |',
  );
  lines.push('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const r of results) {
    /** Operation label, side, its load summary, its sampled D1 work, its ratio cell. */
    type Row = [string, string, Summary, D1Stats | null, string];
    const sides: Row[] = [
      [LABELS[r.name], 'service', r.service, r.serviceD1.total, `**${fmt(r.ratio, 2)}×**`],
      ['', 'baseline', r.baseline, r.baselineD1.total, '1.00×'],
      ...(r.bound ? [['', SHAPED_LABEL, r.bound.summary, r.bound.d1.total, `${fmt(r.bound.ratio, 2)}×`] as Row] : []),
    ];
    for (const [label, side, s, d1, ratio] of sides) {
      lines.push(
        `| ${label} | ${side} | ${fmt(s.rps)} | ${ratio} | ${fmt(s.p50)} | ${fmt(s.p99)} | ${s.errors} | ${s.non2xx} | ${d1Cell(d1, (x) => x.statements)} | ${d1Cell(d1, (x) => x.roundTrips)} | ${rowsCell(d1, (x) => x.rowsRead)} | ${rowsCell(d1, (x) => x.rowsWritten)} | ${fmt(s.cpuMsPerRequest, 2)} |`,
      );
    }
  }
  lines.push('');
  lines.push(
    `D1 columns: the median of ${SAMPLES} single requests after the load, from \`X-D1-Stats\` (D1's own \`meta.rows_read\` / \`rows_written\`, the idempotency object's share included).`,
  );
  lines.push(
    "CPU: utime + stime of the side's workerd processes (wrangler's proxy and the Worker runtime) over its rounds, divided by its requests.",
  );
  lines.push('');
  lines.push('Per-round ratios (service ÷ baseline, requests/s):');
  lines.push('');
  for (const r of results) {
    const bound = r.bound ? ` (${SHAPED_LABEL}: ${r.bound.roundRatios.map((x) => fmt(x, 2)).join(', ')})` : '';
    lines.push(`- ${LABELS[r.name]}: ${r.roundRatios.map((x) => fmt(x, 2)).join(', ')}${bound}`);
  }
  const failing = results.flatMap((r) =>
    (['service', 'baseline'] as const)
      .filter((side) => r[side].non2xx > 0 || r[side].errors > 0)
      .map((side) => ({ r, side })),
  );
  if (failing.length > 0) {
    lines.push('');
    lines.push('Non-2xx answers and errors (status × count; first bodies):');
    lines.push('');
    for (const { r, side } of failing) {
      lines.push(`- ${LABELS[r.name]}, ${side}: ${r[side].statuses}; ${r[side].errors} connection errors`);
      for (const body of r[side].failures) lines.push(`  - \`${body.replaceAll('`', "'").replaceAll('\n', ' ')}\``);
    }
  }
  const withOperation = results.filter((r) => r.serviceD1.operation);
  if (withOperation.length > 0) {
    lines.push('');
    lines.push('Inside the idempotency object (`X-D1-Stats-Operation`):');
    lines.push('');
    for (const r of withOperation) {
      const o = r.serviceD1.operation!;
      lines.push(
        `- ${LABELS[r.name]}: ${o.statements} statements, ${o.roundTrips} round trips, ${o.rowsRead} rows read, ${o.rowsWritten} rows written`,
      );
    }
  }
  if (perKey) lines.push('', ...renderPerKey(perKey));
  if (model) lines.push('', ...renderModel(model));
  const withLatency = results.filter((r) => r.latency);
  if (withLatency.length > 0) {
    lines.push('');
    lines.push(`## Latency model: every D1 round trip + ${LATENCY_MS} ms`);
    lines.push('');
    lines.push(
      `Both sides restarted on the same state with \`BENCH_D1_DELAY_MS=${LATENCY_MS}\` (bench/d1-meter.ts waits that long before each D1 round trip, in the Worker and in the Durable Object), driven with ${LATENCY_CONNECTIONS} connections, ${ROUNDS} alternating rounds × ${LATENCY_DURATION_S} s per side: a Worker far from its database's primary pays every serial round trip in wall time.`,
    );
    lines.push('');
    lines.push(
      '| operation | service p50 ms | baseline p50 ms | service p99 ms | baseline p99 ms | serial D1 round trips (service / baseline) | p50 − baseline p50 |',
    );
    lines.push('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
    for (const r of withLatency) {
      const l = r.latency!;
      lines.push(
        `| ${LABELS[r.name]} | ${fmt(l.service.p50)} | ${fmt(l.baseline.p50)} | ${fmt(l.service.p99)} | ${fmt(l.baseline.p99)} | ${d1Cell(l.serviceD1.total, (x) => x.roundTrips)} / ${d1Cell(l.baselineD1.total, (x) => x.roundTrips)} | ${fmt(l.service.p50 - l.baseline.p50)} |`,
      );
    }
  }
  const explained = results.filter((r) => r.plans.length > 0);
  if (explained.length > 0) {
    lines.push('');
    lines.push('## Query plans');
    lines.push('');
    lines.push(
      "`EXPLAIN QUERY PLAN` of every statement the sampled service requests ran (parameters bound to NULL), from the service's own database. A `SCAN` of a table would read all of it.",
    );
    for (const r of explained) {
      lines.push('');
      lines.push(`### ${LABELS[r.name]}`);
      lines.push('');
      for (const p of r.plans) {
        lines.push(`- \`${p.sql.replaceAll('`', "'").replaceAll('\n', ' ').replace(/\s+/g, ' ')}\``);
        for (const detail of p.plan) lines.push(`  - ${isTableScan(detail) ? `**${detail}**` : detail}`);
      }
    }
  }
  lines.push('');
  lines.push('## Targets');
  lines.push('');
  for (const t of targets(results))
    lines.push(`- ${t.ok === null ? '?' : t.ok ? 'met' : '**missed**'}: ${t.label}: ${t.detail}`);
  lines.push('');
  const scale = previousScale();
  if (scale) lines.push(scale, '');
  lines.push('## Notes');
  lines.push('');
  lines.push(notes.trim() ? notes.trim() : '<!-- notes:start -->\n(none yet)\n<!-- notes:end -->');
  lines.push('');
  return lines.join('\n');
}

/** The Scale section of the previous RESULTS.md (written by `--scale`), kept verbatim by a full run. */
function previousScale(): string {
  if (!existsSync(RESULTS_FILE)) return '';
  const match = /<!-- scale:start -->[\s\S]*?<!-- scale:end -->/.exec(readFileSync(RESULTS_FILE, 'utf8'));
  return match ? match[0] : '';
}

/** The hand-written Notes of the previous RESULTS.md, kept verbatim. */
function previousNotes(): string {
  if (!existsSync(RESULTS_FILE)) return '';
  const text = readFileSync(RESULTS_FILE, 'utf8');
  const match = /<!-- notes:start -->[\s\S]*?<!-- notes:end -->/.exec(text);
  return match ? match[0] : '';
}

const platformVars = () =>
  PLATFORM === 'model' ? platformModelVars(readFileSync(join(ROOT, 'wrangler.toml'), 'utf8')) : [];

/** A `.dev.vars` of fresh random secrets for a throwaway local deployment. */
function writeDevVars(path: string) {
  writeFileSync(
    path,
    [
      `JWT_SIGNING_KEY=${randomBytes(32).toString('base64url')}`,
      `API_KEY_PEPPER=${randomBytes(32).toString('base64url')}`,
      `CREDENTIALS_ENCRYPTION_KEYS=k1:${randomBytes(32).toString('base64')}`,
      'ALLOW_INSECURE_WEBHOOKS=false',
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
}

// ------------------------------------------------------------------ main

async function main() {
  if (SCALE_COUNTS.length > 0) return scaleRun();
  const began = Date.now();
  tempDir = mkdtempSync(join(os.tmpdir(), 'payment-service-bench-'));
  const serviceState = join(tempDir, 'service-state');
  const baselineState = join(tempDir, 'baseline-state');
  mkdirSync(serviceState);
  mkdirSync(baselineState);
  const devVars = join(tempDir, '.dev.vars');
  writeDevVars(devVars);
  const baselineConfig = join('bench', 'baseline', 'wrangler.toml');
  // The service runs on a generated config: with --shards, listing SHARD_0 ... (shardedConfig; DB is the same
  // database); with the platform models, without the static assets' router (platformConfig).
  const serviceConfig: string[] = [];
  if (SHARDS > 0 || PLATFORM === 'model') {
    const file = join(tempDir, 'wrangler.toml');
    const source = readFileSync(join(ROOT, 'wrangler.toml'), 'utf8');
    writeFileSync(
      file,
      platformConfig(
        SHARDS > 0
          ? shardedConfig(source, SHARDS, ROOT, process.env.BENCH_SHARD_MIGRATIONS)
          : absolutePaths(source, ROOT),
      ),
    );
    serviceConfig.push('-c', file);
  }
  // The shards the service is given: the bench's own (--shards), else the ones wrangler.toml lists for `test`.
  const shardNames =
    SHARDS > 0 ? Array.from({ length: SHARDS }, (_, i) => `SHARD_${i}`) : databaseBindings('test').shards;

  log(`temporary state in ${tempDir}`);
  log(`applying migrations (service${SHARDS > 0 ? ` and its ${SHARDS} shards` : ''}, baseline)...`);
  for (const [args, name] of [
    ...['DB', ...shardNames].map(
      (binding) =>
        [
          [
            'd1',
            'migrations',
            'apply',
            binding,
            '--local',
            '--persist-to',
            serviceState,
            '--env',
            'test',
            ...serviceConfig,
          ],
          `service ${binding}`,
        ] as const,
    ),
    [['d1', 'migrations', 'apply', 'DB', '--local', '--persist-to', baselineState, '-c', baselineConfig], 'baseline'],
  ] as const) {
    const migrated = await runWrangler([...args], { capture: true, env: { CI: 'true' } });
    if (migrated.code !== 0) throw new Error(`${name} migrations failed (exit ${migrated.code}):\n${migrated.stdout}`);
  }
  const adminEmail = `bench-${RUN_ID}@example.com`;
  const adminPassword = randomBytes(18).toString('base64url');
  await ensureAdmin({
    env: 'test',
    target: ['--local', '--persist-to', serviceState],
    email: adminEmail,
    name: 'Bench Admin',
    password: adminPassword,
  });

  const delayVar = (ms: number) => (ms > 0 ? ['--var', `BENCH_D1_DELAY_MS:${ms}`] : []);
  const startService = (vars: string[]) =>
    startWrangler(
      'service',
      [
        'bench/instrumented.ts',
        ...serviceConfig,
        '--env',
        'test',
        '--persist-to',
        serviceState,
        '--env-file',
        devVars,
        ...platformVars(),
        ...vars,
      ],
      '/openapi.json',
    );
  const startBoth = (delayMs: number) =>
    Promise.all([
      startService(delayVar(delayMs)),
      startWrangler(
        'baseline',
        ['-c', baselineConfig, '--persist-to', baselineState, ...delayVar(delayMs)],
        '/payments/none',
      ),
    ]);
  log('starting the service and the baseline (wrangler dev)...');
  const [serviceServer, baselineServer] = await startBoth(0);
  const workerd = workerdVersion(workerdPids(serviceServer.child.pid!));
  log(`service on ${serviceServer.baseUrl}, baseline on ${baselineServer.baseUrl} (${workerd})`);
  const platform = await platformOf(serviceServer);
  log(`platform: rate limit ${platform.rate_limit ?? "wrangler's emulation"}, console ${platform.console}`);

  log(`creating the API key, the sandbox POS method and ${POOL} payments per side...`);
  const [service, baseline] = await Promise.all([
    prepareService(serviceServer, adminEmail, adminPassword),
    prepareBaseline(baselineServer),
  ]);

  const results: OperationResult[] = [];
  for (const operation of SELECTED) {
    log(`${LABELS[operation]}: warm-up ${WARMUP_S} s per side...`);
    const shaped = ROUND_TRIP_SHAPED[operation] !== undefined ? inServiceShape(baseline) : null;
    const sides: { name: 'service' | 'baseline' | 'bound'; side: Side }[] = [
      { name: 'service', side: service },
      { name: 'baseline', side: baseline },
      ...(shaped ? [{ name: 'bound' as const, side: shaped }] : []),
    ];
    for (const { side } of sides) await load(side, operation, WARMUP_S);
    const rounds: Record<'service' | 'baseline' | 'bound', Round[]> = { service: [], baseline: [], bound: [] };
    for (let round = 0; round < ROUNDS; round++) {
      // Each side first in turn, so a machine slowing down within a round slows each alike over the rounds.
      const order = sides.map((_, i) => sides[(i + round) % sides.length]!);
      for (const { name, side } of order) rounds[name].push(await load(side, operation, DURATION_S));
      const s = rounds.service.at(-1)!;
      const b = rounds.baseline.at(-1)!;
      const bound = rounds.bound.at(-1);
      log(
        `  round ${round + 1}/${ROUNDS}: service ${fmt(s.requests / s.seconds)} req/s, baseline ${fmt(b.requests / b.seconds)} req/s` +
          (bound ? `, ${SHAPED_LABEL} ${fmt(bound.requests / bound.seconds)} req/s` : ''),
      );
    }
    const serviceD1 = await sampleD1(service, operation);
    const baselineD1 = await sampleD1(baseline, operation);
    const serviceSummary = summarize({ rounds: rounds.service });
    const baselineSummary = summarize({ rounds: rounds.baseline });
    const result: OperationResult = {
      plans: await explainStatements(service.server, serviceD1.statements),
      name: operation,
      service: serviceSummary,
      baseline: baselineSummary,
      serviceD1,
      baselineD1,
      ratio: baselineSummary.rps > 0 ? serviceSummary.rps / baselineSummary.rps : NaN,
      roundRatios: serviceSummary.roundRps.map((rps, i) => rps / (baselineSummary.roundRps[i] || NaN)),
    };
    if (shaped) {
      const summary = summarize({ rounds: rounds.bound });
      result.bound = {
        summary,
        d1: await sampleD1(shaped, operation),
        ratio: baselineSummary.rps > 0 ? summary.rps / baselineSummary.rps : NaN,
        roundRatios: summary.roundRps.map((rps, i) => rps / (baselineSummary.roundRps[i] || NaN)),
      };
      log(
        `  ${SHAPED_LABEL} (${shapeOf(operation)}): ${fmt(result.bound.ratio, 2)}× the plain baseline ` +
          `(${fmt(summary.rps)} req/s, CPU ${fmt(summary.cpuMsPerRequest, 2)} ms/req); the service is ${fmt(serviceSummary.rps / summary.rps, 2)}× it`,
      );
    }
    results.push(result);
    const d1 = serviceD1.total;
    log(
      `  => ${fmt(result.ratio, 2)}× baseline (service ${fmt(serviceSummary.rps)} req/s p50 ${fmt(serviceSummary.p50)} p99 ${fmt(serviceSummary.p99)} ms, ` +
        `errors ${serviceSummary.errors}, non-2xx ${serviceSummary.non2xx}, CPU ${fmt(serviceSummary.cpuMsPerRequest, 2)} ms/req; ` +
        `statuses ${serviceSummary.statuses}; D1 ${d1 ? `${d1.statements} statements / ${d1.roundTrips} round trips / ${d1.rowsRead} read / ${d1.rowsWritten} written${d1.unmetered ? ` / ${d1.unmetered} unmetered` : ''}` : 'n/a'})`,
    );
    for (const body of [...serviceSummary.failures, ...baselineSummary.failures]) log(`  non-2xx: ${body}`);
  }

  let perKey: PerKeyResult | undefined;
  if (KEYLOAD_S > 0) {
    log(
      `per-key load: a quiet key at ${KEYLOAD_RATE} req/s for ${KEYLOAD_S} s alone, beside a flood over ${KEYS} keys, beside one key flooding...`,
    );
    perKey = await perKeyLoad(service);
    const { alone, spread, oneKey } = perKey;
    log(`  quiet alone: p50 ${fmt(alone.p50)} p99 ${fmt(alone.p99)} ms (${alone.statuses})`);
    log(
      `  beside a flood over ${KEYS} keys: quiet p50 ${fmt(spread.quiet.p50)} p99 ${fmt(spread.quiet.p99)} ms (${spread.quiet.statuses}); flood ${fmt(spread.flood.rps)} req/s (${spread.flood.statuses})`,
    );
    log(
      `  beside one key flooding: quiet p50 ${fmt(oneKey.quiet.p50)} p99 ${fmt(oneKey.quiet.p99)} ms (${oneKey.quiet.statuses}); flood ${fmt(oneKey.flood.rps)} req/s (${oneKey.flood.statuses})`,
    );
  }

  let runningService = serviceServer;
  let model: ModelResult | undefined;
  if (D1_SERVICE_MS > 0) {
    log(
      `single-writer model: restarting the service with every D1 database one call at a time, ${D1_SERVICE_MS} ms each...`,
    );
    await stopServer(serviceServer);
    runningService = await startService(['--var', `BENCH_D1_SERVICE_MS:${D1_SERVICE_MS}`]);
    model = await singleWriterModel({ ...service, server: runningService });
    log(
      `  creates ${fmt(model.create.rps)}/s, p50 ${fmt(model.create.p50)} p99 ${fmt(model.create.p99)} ms (${model.create.statuses}); CPU ${fmt(100 * model.cpuShare, 0)}% of the cores; ` +
        model.writers
          .map((w) => `${w.binding} ${fmt(w.perCreate, 2)} calls/create, busy ${fmt(100 * w.busyShare, 0)}%`)
          .join('; '),
    );
    for (const body of model.create.failures) log(`  non-2xx: ${body}`);
  }

  if (LATENCY_MS > 0) {
    log(`latency model: restarting both with every D1 round trip delayed by ${LATENCY_MS} ms...`);
    await Promise.all([stopServer(runningService), stopServer(baselineServer)]);
    const [slowService, slowBaseline] = await startBoth(LATENCY_MS);
    const sides = { service: { ...service, server: slowService }, baseline: { ...baseline, server: slowBaseline } };
    for (const result of results) {
      const operation = result.name;
      await load(sides.service, operation, 1, LATENCY_CONNECTIONS);
      await load(sides.baseline, operation, 1, LATENCY_CONNECTIONS);
      const rounds: Record<'service' | 'baseline', Round[]> = { service: [], baseline: [] };
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 === 0 ? [sides.service, sides.baseline] : [sides.baseline, sides.service];
        for (const side of order)
          rounds[side.server.name].push(await load(side, operation, LATENCY_DURATION_S, LATENCY_CONNECTIONS));
      }
      const serviceD1 = await sampleD1(sides.service, operation);
      const baselineD1 = await sampleD1(sides.baseline, operation);
      result.latency = {
        service: summarize({ rounds: rounds.service }),
        baseline: summarize({ rounds: rounds.baseline }),
        serviceD1,
        baselineD1,
      };
      log(
        `  ${LABELS[operation]}: p50 service ${fmt(result.latency.service.p50)} ms, baseline ${fmt(result.latency.baseline.p50)} ms`,
      );
    }
  }

  const markdown = renderMarkdown(
    results,
    { workerd, date: new Date().toISOString(), seconds: (Date.now() - began) / 1000 },
    previousNotes(),
    perKey,
    model,
  );
  writeFileSync(RESULTS_FILE, markdown);
  console.log('');
  console.log(markdown.slice(markdown.indexOf('## Results'), markdown.indexOf('## Notes')).trim());
  console.log('');
  log(`ratios to the baseline: ${results.map((r) => `${r.name} ${fmt(r.ratio, 2)}×`).join(', ')}`);
  log(`wrote ${RESULTS_FILE}`);
}

const watchdog = setTimeout(() => {
  console.error(`[bench] still running after ${DEADLINE_MS / 60_000} min: stopping.`);
  void cleanup().finally(() => process.exit(1));
}, DEADLINE_MS);
watchdog.unref();

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    console.error(`[bench] ${signal}: stopping.`);
    void cleanup().finally(() => process.exit(130));
  });
}

let exitCode = 0;
try {
  await main();
} catch (error) {
  console.error(`[bench] failed: ${(error as Error).stack ?? error}`);
  exitCode = 1;
} finally {
  await cleanup();
}
process.exit(exitCode);

// ------------------------------------------------------------------ scale: the single-writer model per shard count

interface ScaleResult {
  shards: number;
  model: ModelResult;
  /** Owners per shard, as the directory placed them. */
  placed: Record<string, number>;
}

/** `owners` merchants created by the admin (each with a sandbox POS method and a key), placed by the directory. */
async function prepareOwners(server: Server, adminEmail: string, adminPassword: string, owners: number) {
  const base = server.baseUrl;
  const admin = await http(base, 'POST', '/v1/auth/login', { body: { email: adminEmail, password: adminPassword } });
  expectStatus('admin login', admin, 201);
  const adminToken = admin.body.data.access_token as string;
  const made: { userId: string; key: string; methodId: string; shard: string }[] = [];
  for (let i = 0; i < owners; i++) {
    const email = `owner-${RUN_ID}-${i}@example.com`;
    const password = randomBytes(18).toString('base64url');
    const user = await http(base, 'POST', '/v1/users', {
      token: adminToken,
      body: { email, name: `Shop ${i}`, password },
    });
    expectStatus('create owner', user, 201);
    const login = await http(base, 'POST', '/v1/auth/login', { body: { email, password } });
    expectStatus('owner login', login, 201);
    const token = login.body.data.access_token as string;
    const key = await createApiKey(base, token, 'bench', ['payments:create', 'payments:read']);
    const methodId = await createSandboxMethod(base, token, [key]);
    const placement = await http(base, 'GET', `/v1/users/${user.body.data.id}/placement`, { token: adminToken });
    expectStatus('placement', placement, 200);
    made.push({
      userId: user.body.data.id,
      key: key.secret,
      methodId,
      shard: placement.body.data.shard,
    });
  }
  const placed: Record<string, number> = {};
  for (const owner of made) placed[owner.shard] = (placed[owner.shard] ?? 0) + 1;
  return { made, placed };
}

/** A fresh local deployment with `shards` shard databases: generated config, migrated, an admin, started. */
async function freshDeployment(shards: number, vars: string[]) {
  tempDir = mkdtempSync(join(os.tmpdir(), 'payment-service-scale-'));
  const state = join(tempDir, 'state');
  mkdirSync(state);
  const devVars = join(tempDir, '.dev.vars');
  writeDevVars(devVars);
  const config = join(tempDir, 'wrangler.toml');
  writeFileSync(config, platformConfig(shardedConfig(readFileSync(join(ROOT, 'wrangler.toml'), 'utf8'), shards, ROOT)));
  log(`${shards} shard(s): migrating the control database and the shards...`);
  for (const binding of ['DB', ...Array.from({ length: shards }, (_, i) => `SHARD_${i}`)]) {
    const migrated = await runWrangler(
      ['d1', 'migrations', 'apply', binding, '--local', '--persist-to', state, '--env', 'test', '-c', config],
      { capture: true, env: { CI: 'true' } },
    );
    if (migrated.code !== 0) throw new Error(`${binding} migrations failed:\n${migrated.stdout}`);
  }
  const adminEmail = `bench-${RUN_ID}@example.com`;
  const adminPassword = randomBytes(18).toString('base64url');
  await ensureAdmin({
    env: 'test',
    target: ['--local', '--persist-to', state],
    email: adminEmail,
    name: 'Bench Admin',
    password: adminPassword,
  });
  const server = await startWrangler(
    'service',
    [
      'bench/instrumented.ts',
      ...['-c', config, '--env', 'test', '--persist-to', state, '--env-file', devVars],
      ...platformVars(),
      ...vars,
    ],
    '/openapi.json',
  );
  return { server, adminEmail, adminPassword };
}

interface PlacementLatency {
  shard: string;
  delayMs: number;
  create: { p50: number; p90: number };
  get: { p50: number; p90: number };
}

/**
 * What placement buys: two shards, one whose D1 round trips take NEAR_MS (a primary near the merchant) and one FAR_MS
 * (across an ocean); the control database far too (its reads are cached). One merchant on each; sequential creates
 * and reads, timed from this client (the local Worker itself is next to the client).
 */
async function placementLatency(): Promise<PlacementLatency[]> {
  const delays: Record<string, number> = { SHARD_0: NEAR_MS!, SHARD_1: FAR_MS!, DB: FAR_MS! };
  const { server, adminEmail, adminPassword } = await freshDeployment(
    2,
    Object.entries(delays).flatMap(([binding, ms]) => ['--var', `BENCH_D1_DELAY_MS_${binding}:${ms}`]),
  );
  const { made } = await prepareOwners(server, adminEmail, adminPassword, 2);
  const out: PlacementLatency[] = [];
  for (const owner of made) {
    const create = (n: number): RequestSpec => ({
      method: 'POST',
      path: '/v1/payments',
      headers: {
        Authorization: `Bearer ${owner.key}`,
        ...json,
        'Idempotency-Key': `near-far-${RUN_ID}-${owner.userId}-${n}`,
      },
      body: JSON.stringify({
        amount: { value: '10.00', currency: 'USD' },
        external_reference: `near-far-${RUN_ID}-${owner.userId}-${n}`,
        payment_method: owner.methodId,
      }),
    });
    const timed = async (spec: RequestSpec, status: number) => {
      const t0 = performance.now();
      const answer = await send(server.baseUrl, spec);
      expectStatus('placement latency', answer, status);
      return { ms: performance.now() - t0, answer };
    };
    // Warm: the isolate's caches of the key, the method and the placement.
    for (let n = 0; n < 3; n++) await timed(create(n), 201);
    const creates: number[] = [];
    const gets: number[] = [];
    let last = '';
    for (let n = 3; n < 23; n++) {
      const made = await timed(create(n), 201);
      creates.push(made.ms);
      last = made.answer.body.data.id;
      gets.push(
        (
          await timed(
            { method: 'GET', path: `/v1/payments/${last}`, headers: { Authorization: `Bearer ${owner.key}` } },
            200,
          )
        ).ms,
      );
    }
    out.push({
      shard: owner.shard,
      delayMs: delays[owner.shard] ?? NaN,
      create: { p50: percentile(creates, 50), p90: percentile(creates, 90) },
      get: { p50: percentile(gets, 50), p90: percentile(gets, 90) },
    });
  }
  await stopServer(server);
  await cleanup();
  return out;
}

/**
 * For each shard count: a fresh deployment (generated config, migrated databases, an admin), BENCH_SCALE_OWNERS
 * merchants placed by the directory, then creates spread evenly over them under the single-writer model. The same
 * load each time, so the throughputs compare; perfect scaling is N times the one-shard throughput.
 */
async function scaleRun() {
  const began = Date.now();
  const results: ScaleResult[] = [];
  for (const shards of SCALE_COUNTS) {
    const { server, adminEmail, adminPassword } = await freshDeployment(shards, [
      '--var',
      `BENCH_D1_SERVICE_MS:${D1_SERVICE_MS}`,
    ]);
    log(`  ${SCALE_OWNERS} merchants...`);
    const { made, placed } = await prepareOwners(server, adminEmail, adminPassword, SCALE_OWNERS);
    const create = (n: number): RequestSpec => {
      const owner = made[n % made.length]!;
      return {
        method: 'POST',
        path: '/v1/payments',
        headers: { Authorization: `Bearer ${owner.key}`, ...json, 'Idempotency-Key': `scale-${RUN_ID}-${shards}-${n}` },
        body: JSON.stringify({
          amount: { value: '10.00', currency: 'USD' },
          external_reference: `scale-${RUN_ID}-${shards}-${n}`,
          payment_method: owner.methodId,
        }),
      };
    };
    const side: Side = {
      server,
      request: { create, get: create, replay: create, refund: create },
      keyStride: made.length,
    };
    const model = await singleWriterModel(side);
    log(
      `  ${shards} shard(s): ${fmt(model.create.rps)} creates/s, p99 ${fmt(model.create.p99)} ms (${model.create.statuses}); ` +
        model.writers.map((w) => `${w.binding} busy ${fmt(100 * w.busyShare, 0)}%`).join(', '),
    );
    results.push({ shards, model, placed });
    await stopServer(server);
    await cleanup();
  }
  log(`placement: one shard ${NEAR_MS} ms away, one ${FAR_MS} ms away...`);
  const placement = await placementLatency();
  const one = results.find((r) => r.shards === 1)?.model.create.rps;
  const lines = [
    '<!-- scale:start -->',
    `## Scale: creates per second with ${results.map((r) => r.shards).join(', ')} shards (single-writer model)`,
    '',
    `\`npm run bench -- --scale ${SCALE_COUNTS.join(',')}\` on ${new Date().toISOString()} (${machine().model}, ${os.cpus().length} cores; load before: ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(
        ' ',
      )}; ${((Date.now() - began) / 60000).toFixed(1)} min). Each shard count on a fresh deployment with that many shard databases, ${SCALE_OWNERS} merchants created through the API and placed by the directory (fewest owners first), and creates spread evenly over the merchants: ${MODEL_CONNECTIONS} connections, ${ROUNDS} rounds × ${MODEL_DURATION_S} s after a ${WARMUP_S} s warm-up. Every D1 database runs one call at a time, ${D1_SERVICE_MS} ms each (bench/d1-single-writer.ts), so the databases, not this machine's CPU, are the bottleneck while workerd's CPU share stays well under 100%.`,
    '',
    '| shards | merchants per shard | creates/s | × one shard | ratio to perfect (N ×) | p50 ms | p99 ms | non-2xx | busiest database (busy) | calls per create | workerd CPU |',
    '| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: |',
  ];
  for (const r of results) {
    const busiest = r.model.writers.reduce<ModelResult['writers'][number] | undefined>(
      (a, w) => (!a || w.busyShare > a.busyShare ? w : a),
      undefined,
    );
    const calls = r.model.writers.reduce((sum, w) => sum + (Number.isFinite(w.perCreate) ? w.perCreate : 0), 0);
    const speedup = one ? r.model.create.rps / one : NaN;
    lines.push(
      `| ${r.shards} | ${Object.entries(r.placed)
        .sort()
        .map(([s, n]) => `${s}: ${n}`)
        .join(
          ', ',
        )} | ${fmt(r.model.create.rps)} | ${fmt(speedup, 2)} | **${fmt(speedup / r.shards, 2)}** | ${fmt(r.model.create.p50)} | ${fmt(r.model.create.p99)} | ${r.model.create.non2xx} | ${busiest ? `${busiest.binding} (${fmt(100 * busiest.busyShare, 0)}%)` : 'n/a'} | ${fmt(calls, 2)} | ${fmt(100 * r.model.cpuShare, 0)}% |`,
    );
  }
  lines.push('', 'Per database (calls per create, busy share, mean wait per call):', '');
  for (const r of results) {
    lines.push(
      `- ${r.shards} shard(s): ${r.model.writers.map((w) => `${w.binding} ${fmt(w.perCreate, 2)} calls, ${fmt(100 * w.busyShare, 0)}% busy, ${fmt(w.waitedMsPerCall, 0)} ms waited`).join('; ')}`,
    );
  }
  lines.push(
    '',
    `### What placement buys: a shard ${NEAR_MS} ms from the Worker, another ${FAR_MS} ms away`,
    '',
    `Two shards on one deployment, every D1 round trip of \`SHARD_0\` delayed ${NEAR_MS} ms and of \`SHARD_1\` (and of the control database, whose reads the isolates cache) ${FAR_MS} ms (\`BENCH_D1_DELAY_MS_<binding>\`); one merchant on each; 20 sequential creates and reads each after 3 to warm the caches, timed at the client (the local Worker is next to it: the delay stands for the distance between the Worker and the shard's primary).`,
    '',
    '| shard | D1 round trip | create p50 ms | create p90 ms | get p50 ms | get p90 ms |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
    ...placement.map(
      (p) =>
        `| ${p.shard} | ${p.delayMs} ms | ${fmt(p.create.p50)} | ${fmt(p.create.p90)} | ${fmt(p.get.p50)} | ${fmt(p.get.p90)} |`,
    ),
  );
  lines.push('<!-- scale:end -->');
  const section = lines.join('\n');
  const current = existsSync(RESULTS_FILE) ? readFileSync(RESULTS_FILE, 'utf8') : '# Benchmark\n\n## Notes\n';
  const next = /<!-- scale:start -->[\s\S]*?<!-- scale:end -->/.test(current)
    ? current.replace(/<!-- scale:start -->[\s\S]*?<!-- scale:end -->/, section)
    : current.replace(/^## Notes/m, `${section}\n\n## Notes`);
  writeFileSync(RESULTS_FILE, next);
  log(`wrote the Scale section of ${RESULTS_FILE}`);
}
