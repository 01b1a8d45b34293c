// The Worker entry the bench serves instead of src/index.ts (bench/servers.ts): the same app, queue consumer, cron,
// Workflow and Durable Objects, with every D1 binding (`DB`, `SHARD_<n>`) metered (bench/d1.ts) in the Worker and in the
// idempotency object, whose share comes back beside its answer. Every response carries `X-D1-Stats`, the whole
// request's. Vars: `BENCH_D1_SERVICE_MS`, the single-writer model (its writers at
// `GET /__bench/d1-writers`); `BENCH_RATE_LIMIT` and `BENCH_CONSOLE`, the platform models (bench/platform-model.ts).
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Env } from '../src/env.ts';
import service, { OwnerMoveWorkflow, IdempotencyStore as ServiceIdempotencyStore, RateLimiter } from '../src/index.ts';
import type { OperationAnswer, OperationRequest } from '../src/services/idempotency.ts';
import {
  addD1Stats,
  D1_STATS_HEADER,
  emptyD1Stats,
  instrumentedEnv as instrumentedD1Env,
  singleWriterStats,
  type D1Stats,
} from './d1.ts';
import { modelConsole, parseRateLimit, rateLimitModel } from './platform-model.ts';

type BenchEnv = Env & { BENCH_D1_SERVICE_MS?: string; BENCH_RATE_LIMIT?: string; BENCH_CONSOLE?: string };

/** The D1 work of the request (or idempotent operation) running: its context's. */
const requestStats = new AsyncLocalStorage<D1Stats>();
/** Calls made outside any request (the queue, the cron) are counted here and never reported. */
const unattributed = emptyD1Stats();
const currentStats = () => requestStats.getStore() ?? unattributed;

let wrapped: BenchEnv | undefined;

/**
 * The service's `env` as the bench hands it over, built once per isolate like the runtime's own: the service keeps
 * per-isolate state keyed by its bindings (Drizzle clients, the shard list), which bindings wrapped afresh for every
 * request would rebuild on each one, a cost no deployment pays. Each call is counted in its request's meter.
 */
function instrumentedEnv(env: BenchEnv): BenchEnv {
  if (!wrapped) {
    const serviceMs = Number(env.BENCH_D1_SERVICE_MS ?? 0) || 0;
    const modelled = instrumentedD1Env(env, currentStats, serviceMs);
    const rateLimit = parseRateLimit(env.BENCH_RATE_LIMIT);
    wrapped = {
      ...modelled,
      IDEMPOTENCY: collectingOperations(env.IDEMPOTENCY),
      ...(rateLimit ? { API_KEY_RATE_LIMIT: rateLimitModel(rateLimit) } : {}),
    };
    if (env.BENCH_CONSOLE === 'model') modelConsole();
  }
  return wrapped;
}

export { OwnerMoveWorkflow, RateLimiter };

export class IdempotencyStore extends ServiceIdempotencyStore {
  constructor(ctx: DurableObjectState, env: BenchEnv) {
    // The runtime hands every object of the isolate the Worker's own `env` (one object), so the service's per-isolate
    // state keyed by it is built once, as in a deployment.
    super(ctx, instrumentedEnv(env));
  }

  override async execute(request: OperationRequest): Promise<OperationAnswer & { d1?: D1Stats }> {
    // Its own meter, found by the wrapped bindings through the async context, as a request's is in the Worker.
    const d1 = emptyD1Stats();
    const answer = await requestStats.run(d1, () => super.execute(request));
    return { ...answer, d1 };
  }
}

/** The `IDEMPOTENCY` namespace as the Worker sees it, whose stubs add each answer's D1 share to the request's meter. */
function collectingOperations(binding: BenchEnv['IDEMPOTENCY']) {
  return new Proxy(binding, {
    get(target, prop) {
      if (prop !== 'get') {
        const value = Reflect.get(target, prop, target);
        return typeof value === 'function' ? value.bind(target) : value;
      }
      return (id: DurableObjectId) =>
        new Proxy(target.get(id), {
          get(stub, p) {
            if (p !== 'execute') return Reflect.get(stub, p);
            return async (request: OperationRequest) => {
              const answer = (await stub.execute(request)) as OperationAnswer & { d1?: D1Stats };
              addD1Stats(currentStats(), answer.d1 ?? null);
              return answer;
            };
          },
        });
    },
  });
}

export default {
  ...service,
  async fetch(request, env, ctx) {
    const { pathname } = new URL(request.url);
    if (pathname === '/__bench/d1-writers') return Response.json(singleWriterStats());
    const stats = emptyD1Stats();
    const response = await requestStats.run(stats, () => service.fetch(request, instrumentedEnv(env), ctx));
    // The app's own responses (the bench serves no static assets, whose headers are immutable).
    response.headers.set(D1_STATS_HEADER, JSON.stringify(stats));
    return response;
  },
} satisfies ExportedHandler<BenchEnv>;
