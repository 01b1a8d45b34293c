// The Worker entry `npm run bench` serves instead of src/index.ts (`wrangler dev bench/instrumented.ts
// --env test`): the same app, queue consumer, cron and Durable Objects, with the D1 binding wrapped by the
// bench's meter (bench/d1-meter.ts) at the two places a request's D1 work happens, the Worker and the
// idempotency object. The service's own code knows nothing of it, and this entry is never deployed.
//
// - Every response carries `X-D1-Stats` (the request's statements, round trips and rows) and
//   `X-D1-Statements` (the SQL it ran), the idempotency object's share included (and alone in
//   `X-D1-Stats-Operation`): the object reports its share beside its answer, and the Worker's namespace is
//   wrapped so that share is collected on the way back.
// - `BENCH_D1_DELAY_MS_<binding>` (a var) does the same for that one database (the placement latency of --scale).
// - `BENCH_D1_DELAY_MS` (a var) makes every D1 round trip wait that long first, on both sides of the
//   object: the latency model of a Worker far from the database's primary.
// - `BENCH_D1_SERVICE_MS` (a var) puts every D1 database binding under the single-writer model
//   (bench/d1-single-writer.ts): one call at a time per database, each holding it that long; `GET /__bench/d1-writers`
//   answers what each database's writer did in this isolate (calls, busy and waiting time, deepest queue).
// - Every binding that is a D1 database is modelled and metered (`DB` today, `SHARD_0`, `SHARD_1`, ... when the
//   Worker has them), found by what it is, not by name.
// - `POST /__bench/explain` with `[[sql, parameter count], ...]` answers each statement's
//   `EXPLAIN QUERY PLAN` (parameters bound to NULL), run on the service's own database (`DB`).
// The object's bindings are the Worker's, wrapped once per isolate too; each `execute` is metered on its own (found
// through the async context) and its statements are fetched only for a request that asks for them (sampled ones,
// sent one at a time, where no other call of the same key overlaps).
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Env } from '../src/env.ts';
import { shardsOf } from '../src/db/shards.ts';
import service, { IdempotencyStore as ServiceIdempotencyStore, RateLimiter } from '../src/index.ts';
import type { OperationAnswer, OperationRequest } from '../src/services/idempotency.ts';
import { d1BindingNames, singleWriterStats, withSingleWriters } from './d1-single-writer.ts';
import { modelConsole, modelledConsoleLines, parseRateLimit, rateLimitModel } from './platform-model.ts';
import {
  addD1Stats,
  D1_OPERATION_STATS_HEADER,
  D1_STATEMENTS_HEADER,
  D1_STATEMENTS_REQUEST_HEADER,
  D1_STATS_HEADER,
  emptyD1Stats,
  encodeStatements,
  formatD1Stats,
  meteredD1,
  parseD1Stats,
  type D1Stats,
  type StatementLog,
  type StatsTarget,
} from './d1-meter.ts';

type BenchEnv = Env & {
  BENCH_D1_DELAY_MS?: string;
  BENCH_D1_SERVICE_MS?: string;
  /** `limit/period`: the Rate Limiting binding replaced by its model (bench/platform-model.ts). */
  BENCH_RATE_LIMIT?: string;
  /** `model`: the console's local forwarding replaced by its model. */
  BENCH_CONSOLE?: string;
};

const millisecondsOf = (value: string | undefined) => {
  const ms = Number(value ?? 0);
  return Number.isFinite(ms) && ms > 0 ? ms : 0;
};

/**
 * `env` with every D1 database binding under the single-writer model (when `BENCH_D1_SERVICE_MS` is set), then
 * metered into `stats` (the latency model's delay, when set, is waited before a call queues for its database).
 */
const metered = (env: BenchEnv, stats: StatsTarget, statements: StatementLog | (() => StatementLog | null)) => {
  // A copy: the runtime's `env` is shared by every request and must never be wrapped in place.
  const modelled = { ...withSingleWriters(env, millisecondsOf(env.BENCH_D1_SERVICE_MS)) } as Record<string, unknown>;
  const delayMs = millisecondsOf(env.BENCH_D1_DELAY_MS);
  for (const name of d1BindingNames(modelled)) {
    // `BENCH_D1_DELAY_MS_<binding>` puts one database farther than the others (bench/run.ts, placement latency).
    const own = millisecondsOf(Reflect.get(env, `BENCH_D1_DELAY_MS_${name}`) as string | undefined);
    modelled[name] = meteredD1(modelled[name] as D1Database, stats, { delayMs: own || delayMs, statements });
  }
  return modelled as BenchEnv;
};

/** One request's meter: its D1 calls, the statements they ran, and the idempotency object's share. */
interface RequestMeter {
  stats: D1Stats;
  statements: StatementLog;
  /** Whether the request asked for its statements (`X-Bench-Statements`): then the object's are fetched too. */
  wantsStatements: boolean;
  operation?: OperationD1['d1'];
}

const requestMeter = new AsyncLocalStorage<RequestMeter>();
/** Calls made outside any request (none today) are counted here and never reported. */
const unattributed: RequestMeter = { stats: emptyD1Stats(), statements: new Map(), wantsStatements: false };
const currentMeter = () => requestMeter.getStore() ?? unattributed;

const wrappedEnvs = new WeakMap<object, BenchEnv>();

/**
 * The service's `env` as the bench hands it over, built once per isolate like the runtime's own: the service keeps
 * per-isolate state keyed by its bindings (Drizzle clients, the shard list), which bindings wrapped afresh for every
 * request would rebuild on each one, a cost no deployment pays. Each call is counted in its request's meter.
 */
function instrumentedEnv(env: BenchEnv): BenchEnv {
  let wrapped = wrappedEnvs.get(env);
  if (!wrapped) {
    const rateLimit = parseRateLimit(env.BENCH_RATE_LIMIT);
    wrapped = {
      ...metered(
        env,
        () => currentMeter().stats,
        () => currentMeter().statements,
      ),
      IDEMPOTENCY: collectingOperations(env.IDEMPOTENCY, (d1) => (currentMeter().operation = d1)),
      ...(rateLimit ? { API_KEY_RATE_LIMIT: rateLimitModel(rateLimit) } : {}),
    };
    if (env.BENCH_CONSOLE === 'model') modelConsole();
    wrappedEnvs.set(env, wrapped);
  }
  return wrapped;
}

export { RateLimiter };

export class IdempotencyStore extends ServiceIdempotencyStore {
  /** The statements of this object's last `execute`, for a sampled request that asks for them. */
  private last: StatementLog = new Map();

  constructor(ctx: DurableObjectState, env: BenchEnv) {
    // The runtime hands every object of the isolate the Worker's own `env` (one object), so the service's
    // per-isolate state keyed by it is built once. Wrapped afresh per object, it would be rebuilt for every new
    // idempotency key, a cost no deployment pays and the baseline's object does not have.
    super(ctx, instrumentedEnv(env));
  }

  override async execute(request: OperationRequest): Promise<OperationAnswer & OperationD1> {
    // Its own meter, found by the wrapped bindings through the async context, as a request's is in the Worker.
    const meter: RequestMeter = { stats: emptyD1Stats(), statements: new Map(), wantsStatements: false };
    const answer = await requestMeter.run(meter, () => super.execute(request));
    this.last = meter.statements;
    return { ...answer, d1: { stats: formatD1Stats(meter.stats) } };
  }

  /** The statements as pairs, asked for by a second call only when the request wants them (a sampled request). */
  async lastStatements(): Promise<{ sql: string; parameters: number }[]> {
    return [...this.last].map(([sql, parameters]) => ({ sql, parameters }));
  }
}

/** The object's share of a request's D1 work, beside its answer (the service ignores it). */
interface OperationD1 {
  d1?: { stats: string; statements?: [string, number][] };
}

/**
 * The `IDEMPOTENCY` namespace as the Worker sees it, whose stubs hand each answer's D1 share to `collect`:
 * the Worker's own code passes the answer on and never looks at it.
 */
function collectingOperations(binding: BenchEnv['IDEMPOTENCY'], collect: (d1: OperationD1['d1']) => void) {
  return new Proxy(binding, {
    get(target, prop) {
      if (prop === 'get') {
        return (id: DurableObjectId) => {
          const stub = target.get(id) as DurableObjectStub<IdempotencyStore>;
          return new Proxy(stub, {
            get(s, p) {
              if (p !== 'execute') return Reflect.get(s, p);
              return async (request: OperationRequest) => {
                const answer = (await s.execute(request)) as OperationAnswer & OperationD1;
                const d1 = answer.d1;
                if (d1 && currentMeter().wantsStatements) {
                  d1.statements = (await s.lastStatements()).map(({ sql, parameters }) => [sql, parameters]);
                }
                collect(d1);
                return answer;
              };
            },
          });
        };
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

async function explain(request: Request, env: BenchEnv): Promise<Response> {
  const statements = (await request.json()) as [string, number][];
  const plans = [];
  // A statement runs on the control database or on a shard: it is explained by the first that has its tables.
  const databases = [env.DB, ...shardsOf(env).map((shard) => shard.d1)];
  for (const [sql, parameters] of statements) {
    plans.push({ sql, plan: await planOf(databases, sql, parameters) });
  }
  return Response.json(plans);
}

async function planOf(databases: D1Database[], sql: string, parameters: number): Promise<string[]> {
  let failure: unknown;
  for (const d1 of databases) {
    try {
      const rows = await d1
        .prepare(`EXPLAIN QUERY PLAN ${sql}`)
        .bind(...Array.from({ length: parameters }, () => null))
        .all<{ detail: string }>();
      return rows.results.map((row) => row.detail);
    } catch (error) {
      failure = error;
    }
  }
  throw failure;
}

function headersWritable(response: Response): boolean {
  try {
    response.headers.set(D1_STATS_HEADER, '');
    return true;
  } catch {
    return false;
  }
}

export default {
  ...service,
  async fetch(request, env, ctx) {
    const { pathname } = new URL(request.url);
    if (pathname === '/__bench/explain' && request.method === 'POST') return explain(request, env);
    if (pathname === '/__bench/platform' && request.method === 'GET') {
      instrumentedEnv(env);
      return Response.json({
        rate_limit: parseRateLimit(env.BENCH_RATE_LIMIT) ? env.BENCH_RATE_LIMIT : null,
        console: env.BENCH_CONSOLE === 'model' ? 'model' : 'local',
        console_lines: modelledConsoleLines(),
      });
    }
    if (pathname === '/__bench/d1-writers' && request.method === 'GET') {
      return Response.json({ bindings: d1BindingNames(env), writers: singleWriterStats() });
    }
    const wantsStatements = request.headers.has(D1_STATEMENTS_REQUEST_HEADER);
    const meter: RequestMeter = { stats: emptyD1Stats(), statements: new Map(), wantsStatements };
    const response = await requestMeter.run(meter, () => service.fetch(request, instrumentedEnv(env), ctx));
    const { stats, statements, operation } = meter;
    if (operation) {
      addD1Stats(stats, parseD1Stats(operation.stats));
      for (const [sql, parameters] of operation.statements ?? []) statements.set(sql, parameters);
    }
    // A response passed through from a binding (static assets) has immutable headers: those are copied.
    const answer = headersWritable(response) ? response : new Response(response.body, response);
    if (operation) answer.headers.set(D1_OPERATION_STATS_HEADER, operation.stats);
    answer.headers.set(D1_STATS_HEADER, formatD1Stats(stats));
    if (wantsStatements) answer.headers.set(D1_STATEMENTS_HEADER, encodeStatements(statements));
    return answer;
  },
} satisfies ExportedHandler<BenchEnv>;
