// The bench's load (run.ts, profile.ts): each side's requests, autocannon driving a server, what its rounds come to.
import autocannon from 'autocannon';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { paymentBody, type RequestSpec, send, sendOk, withContentType } from './api.ts';
import type { D1Stats } from './d1.ts';
import { CLK_TCK, type Server, workerdTicks } from './servers.ts';

export const OPERATIONS = ['create', 'get', 'replay', 'refund'] as const;
export type Operation = (typeof OPERATIONS)[number];
const RUN_ID = randomBytes(4).toString('hex');
export const LARGE = '1000000.00';

/** Builds the n-th request of each operation; requests n and n + keys go with the same API key. */
export interface Side {
  server: Server;
  request: Record<Operation, (n: number) => RequestSpec>;
  keys: number;
}

export const refund = (path: string, key: string, headers: Record<string, string> = {}): RequestSpec => ({
  method: 'POST',
  path: `${path}/refunds`,
  headers: { ...headers, 'Idempotency-Key': key },
  body: JSON.stringify({ amount: { value: '0.01', currency: 'USD' } }),
});

/** `prefix`: its routes', `/v1` or none (the baseline); `keyOf`, `methodOf`: the n-th request's credential, method. */
type Requests = { prefix: string } & Record<'keyOf' | 'methodOf', (n: number) => any>;

/** The n-th create of series `name`, with an Idempotency-Key and a reference of its own. */
export const creates =
  ({ prefix, keyOf, methodOf }: Requests, name: string, value = '10.00') =>
  (n: number): RequestSpec => ({
    method: 'POST',
    path: `${prefix}/payments`,
    headers: { ...keyOf(n), 'Idempotency-Key': `${name}-${RUN_ID}-${n}` },
    body: paymentBody(`${name}-${RUN_ID}-${n}`, value, methodOf(n)),
  });

/**
 * A side's requests, after it made `pool` large approved payments for the reads and refunds to spread over, and one
 * replay seed per key (which also fills the isolate's key and method caches).
 */
export async function side(server: Server, options: Requests & { keys: number; pool: number }): Promise<Side> {
  const { prefix, keys, keyOf, pool: size } = options;
  const create = (name: string) => creates(options, name, name === 'pool' ? LARGE : '10.00');
  const pool: string[] = [];
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < size; i = next++) {
      const answer = await send(server.baseUrl, create('pool')(i));
      if (answer.body?.data?.status !== 'approved') throw new Error(`${server.name} pool: ${answer.text}`);
      pool[i] = answer.body.data.id;
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  // A replay is of the same key's earlier request (idempotency is per credential): one seed per key.
  const replays = Array.from({ length: keys }, (_, k) => create('replay')(k));
  for (const replay of replays) await send(server.baseUrl, replay);
  const payment = (n: number) => `${prefix}/payments/${pool[n % size]}`;
  const request: Side['request'] = {
    create: create('create'),
    get: (n) => ({ method: 'GET', path: payment(n), headers: keyOf(n) }),
    replay: (n) => replays[n % keys]!,
    refund: (n) => refund(payment(n), `refund-${RUN_ID}-${n}`, keyOf(n)),
  };
  return { server, request, keys };
}

/** Request numbers are global per counter, so every request of a run gets fresh keys. */
const counters = new Map<string, number>();
export const nextNumber = (counter: string, step = 1) => {
  const n = counters.get(counter) ?? 0;
  counters.set(counter, n + step);
  return n;
};

/** Drives `server` with `request` for `seconds`: as fast as `connections` allow, or at `overallRate` per second. */
export async function drive(
  server: Server,
  counter: string,
  request: (n: number) => RequestSpec,
  seconds: number,
  connections: number,
  overallRate?: number,
) {
  const [latencies, statuses, failures] = [[] as number[], new Map<number, number>(), [] as string[]];
  const ticks = workerdTicks(server);
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
            setupRequest: (base) => ({ ...base, ...withContentType(request(nextNumber(counter))) }),
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
    instance.on('response', (_client, _status, _bytes, ms) => latencies.push(ms));
  });
  const { duration, requests, non2xx, errors } = result;
  return {
    seconds: duration,
    requests: requests.total,
    non2xx: non2xx + errors,
    ...{ latencies, statuses, failures, cpuTicks: workerdTicks(server) - ticks },
  };
}
export type Round = Awaited<ReturnType<typeof drive>>;

export const percentile = (values: number[], p: number) =>
  values.length === 0 ? NaN : [...values].sort((a, b) => a - b)[Math.max(0, Math.ceil((p / 100) * values.length) - 1)]!;

export function summarize(rounds: Round[]) {
  const sum = (pick: (r: Round) => number) => rounds.reduce((total, r) => total + pick(r), 0);
  const [seconds, requests, ticks] = [sum((r) => r.seconds), sum((r) => r.requests), sum((r) => r.cpuTicks)];
  const latencies = rounds.flatMap((r) => r.latencies);
  const statuses = new Map<number, number>();
  for (const r of rounds) for (const [status, n] of r.statuses) statuses.set(status, (statuses.get(status) ?? 0) + n);
  return {
    rps: seconds > 0 ? requests / seconds : 0,
    requests,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    non2xx: sum((r) => r.non2xx),
    cpuMsPerRequest: ((ticks / CLK_TCK) * 1000) / requests,
    /** workerd's CPU as a share of every core of the machine. */
    cpuShare: ticks / CLK_TCK / (seconds * os.cpus().length),
    roundRps: rounds.map((r) => r.requests / r.seconds),
    statuses: [...statuses]
      .sort(([a], [b]) => a - b)
      .map(([status, n]) => `${status}×${n}`)
      .join(' '),
    failures: rounds.flatMap((r) => r.failures).slice(0, 3),
  };
}
export type Summary = ReturnType<typeof summarize>;

/**
 * `request`'s requests one at a time after 3 to warm up, `samples` of them or until `done`: latency, workerd's CPU per
 * request (less swayed than latency by what else this machine runs; not while others load it too), the D1 work of the
 * middle one by rows read (a request that missed a cache reads more), a list's total.
 */
export async function oneAtATime(
  server: Server,
  request: (n: number) => RequestSpec,
  samples: number,
  done?: () => boolean,
) {
  const [ms, d1] = [[] as number[], [] as (D1Stats | null)[]];
  let [total, ticks] = [undefined as number | undefined, 0];
  for (let n = 0; done ? !done() : n < samples + 3; n++) {
    if (n === 3) ticks = workerdTicks(server);
    const began = performance.now();
    const answer = await sendOk(server.baseUrl, request(n));
    if (n < 3) continue;
    ms.push(performance.now() - began);
    d1.push(answer.d1);
    total = answer.body?.pagination?.total;
  }
  const cpu = done ? NaN : ((workerdTicks(server) - ticks) * 1000) / CLK_TCK / ms.length;
  d1.sort((a, b) => (a?.rowsRead ?? 0) - (b?.rowsRead ?? 0));
  return { p50: percentile(ms, 50), p95: percentile(ms, 95), cpu, d1: d1[Math.ceil(d1.length / 2) - 1] ?? null, total };
}
export type Measure = Awaited<ReturnType<typeof oneAtATime>>;

/** This machine, and its load average now. */
export const machine = () =>
  `${os.cpus()[0]?.model}, ${os.cpus().length} cores; Node ${process.version}; load ${os.loadavg().map((l) => l.toFixed(1))}`;
export const fmt = (value: number, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
