// Models of platform parts that wrangler dev emulates far more expensively than deployed, so that the bench's CPU per
// request is the service's, not the emulator's: the Rate Limiting binding and the console's transport (installed by
// bench/instrumented.ts; the static assets' router is left out of the config by bench/servers.ts).

/** The `test` deployment's `API_KEY_RATE_LIMIT` in wrangler.toml's text, as `limit/period` (`500/10`). */
export function testRateLimit(wranglerToml: string): string {
  const block = wranglerToml
    .split(/^\[\[/m)
    .find((b) => b.startsWith('env.test.ratelimits]]') && /^name\s*=\s*"API_KEY_RATE_LIMIT"/m.test(b));
  const simple = block && /^simple\s*=\s*\{\s*limit\s*=\s*(\d+)\s*,\s*period\s*=\s*(\d+)\s*\}/m.exec(block);
  if (!simple) throw new Error('wrangler.toml: no API_KEY_RATE_LIMIT with `simple = { limit, period }` in env.test');
  return `${simple[1]}/${simple[2]}`;
}

/** The `wrangler dev` arguments of both models (vars: `.dev.vars` gives only the declared secrets). */
export const platformModelVars = (wranglerToml: string) => [
  '--var',
  `BENCH_RATE_LIMIT:${testRateLimit(wranglerToml)}`,
  '--var',
  'BENCH_CONSOLE:model',
];

/** `limit/period` as `testRateLimit` writes it. */
export function parseRateLimit(text: string | undefined): { limit: number; periodSeconds: number } | null {
  const match = /^(\d+)\/(\d+)$/.exec(text ?? '');
  return match ? { limit: Number(match[1]), periodSeconds: Number(match[2]) } : null;
}

/**
 * The Workers Rate Limiting binding as deployed: counters kept in memory where the request lands, no round trip
 * (developers.cloudflare.com/workers/runtime-apis/bindings/rate-limit/). wrangler dev emulates each `limit()` with a
 * fetch to a Durable Object that reads and writes a SQLite row. Same rule as that emulation: windows aligned to the
 * wall clock, a refused call not counted.
 */
export function rateLimitModel(rule: { limit: number; periodSeconds: number }, now = () => Date.now()): RateLimit {
  const counts = new Map<string, number>();
  let current = -1;
  return {
    async limit({ key }) {
      const epoch = Math.floor(now() / (rule.periodSeconds * 1000));
      // Every key rolls over at the same instant: the old window's counters go together, so the map stays bounded.
      if (epoch !== current) {
        counts.clear();
        current = epoch;
      }
      const count = counts.get(key) ?? 0;
      if (count >= rule.limit) return { success: false };
      counts.set(key, count + 1);
      return { success: true };
    },
  };
}

/**
 * The console as deployed: a line is handed to the runtime, which ships it with the invocation's logs. Under wrangler
 * dev every line is also forwarded to wrangler's process and printed, which costs the local runtime more than the rest
 * of a read. The service still builds every line (its `JSON.stringify`); the model drops it. Installed once per isolate.
 */
export function modelConsole(): void {
  for (const level of ['log', 'info', 'warn', 'error'] as const) console[level] = () => {};
}
