// `npm run bench:profile`: a V8 CPU profile of the service's Worker isolate under a load of one operation (default:
// get payment), through wrangler dev's inspector, the service started as `npm run bench` starts it (bench/servers.ts).
// Prints where the isolate's time goes: the functions with the most self time, and the time by package or source file
// (a sample counts for every package on its stack, once). Measurement only; nothing of it runs in the service.
//   BENCH_PROFILE_OP=get|replay|create|refund   BENCH_PROFILE_SECONDS=8   BENCH_PROFILE_CONNECTIONS=8   BENCH_PROFILE_TOP=30
//   BENCH_PROFILE_POOL=256 (payments the reads and refunds are spread over, as `npm run bench` spreads them)
import { auth, merchant } from './api.ts';
import { drive, OPERATIONS, type Operation, side } from './load.ts';
import { runGuarded, startService, tempDir } from './servers.ts';

const OP = (process.env.BENCH_PROFILE_OP ?? 'get') as Operation;
if (!OPERATIONS.includes(OP)) throw new Error(`BENCH_PROFILE_OP: one of ${OPERATIONS.join(', ')}`);
const SECONDS = Number(process.env.BENCH_PROFILE_SECONDS ?? 8);
const CONNECTIONS = Number(process.env.BENCH_PROFILE_CONNECTIONS ?? 8);
// Each API key may send 500 requests per 10 s in `test` (docs/limits.md): the load is spread over this many keys,
// so that the profile is of the operation, not of its 429 answers.
const KEYS = 16;
// Spread over as many payments as the bench's pool, so that each payment has as few refunds.
const POOL = Number(process.env.BENCH_PROFILE_POOL ?? 256);

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; scriptId?: string };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The Worker's inspector target (wrangler dev lists the user Worker among its targets). */
async function workerTarget(inspectorUrl: string): Promise<string> {
  const targets = (await (await fetch(`${inspectorUrl}/json`)).json()) as {
    webSocketDebuggerUrl: string;
    title?: string;
  }[];
  const target = targets.find((t) => !/proxy/i.test(t.title ?? '')) ?? targets[0];
  if (!target) throw new Error(`no inspector target at ${inspectorUrl}`);
  return target.webSocketDebuggerUrl;
}

function inspector(url: string) {
  // wrangler's inspector proxy accepts the DevTools front end's origin (or none); Node's WebSocket sends its own.
  const ws = new WebSocket(url, {
    headers: { Origin: 'https://devtools.devprod.cloudflare.dev' },
  } as unknown as string[]);
  let next = 1;
  const waiting = new Map<number, (result: any) => void>();
  ws.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data));
    if (message.id && waiting.has(message.id)) {
      waiting.get(message.id)!(message.result);
      waiting.delete(message.id);
    }
  });
  const opened = new Promise<void>((resolve, reject) => {
    ws.addEventListener('open', () => resolve());
    ws.addEventListener('error', () => reject(new Error('inspector connection failed')));
  });
  return {
    opened,
    send: (method: string, params: Record<string, unknown> = {}) =>
      new Promise<any>((resolve) => {
        const id = next++;
        waiting.set(id, resolve);
        ws.send(JSON.stringify({ id, method, params }));
      }),
    close: () => ws.close(),
  };
}

/**
 * Where a bundled line comes from: wrangler bundles the Worker with esbuild, which writes a `// <path>` comment
 * before each module it inlines (`// src/lib/ids.ts`, `// node_modules/hono/dist/hono-base.js`). Built from the
 * bundle's source, read back through the inspector after the profile stopped.
 */
type ModuleMap = (scriptId: string | undefined, line: number) => string | null;

function moduleMapOf(sources: Map<string, string>): ModuleMap {
  const starts = new Map<string, { line: number; path: string }[]>();
  for (const [scriptId, text] of sources) {
    const list: { line: number; path: string }[] = [];
    text.split('\n').forEach((line, index) => {
      const match = /^\/\/ (\S+\.[cm]?[jt]s)$/.exec(line);
      if (match) list.push({ line: index, path: match[1]! });
    });
    starts.set(scriptId, list);
  }
  return (scriptId, line) => starts.get(scriptId ?? '')?.findLast((start) => start.line <= line)?.path ?? null;
}

/** A short name for where a frame's code comes from: a package, or a source file of this repository. */
function originOf(frame: ProfileNode['callFrame'], modules: ModuleMap): string {
  const bundled = modules(frame.scriptId, frame.lineNumber);
  const url = bundled ?? frame.url;
  if (!url) return '(native / runtime)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const src = /((?:src|bench)\/.+?\.ts)/.exec(url);
  return src ? src[1]! : url.split('/').slice(-2).join('/');
}

const TOP = Number(process.env.BENCH_PROFILE_TOP ?? 30);

function summarize(profile: Profile, modules: ModuleMap) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const nameOf = (node: ProfileNode) =>
    `${node.callFrame.functionName || '(anonymous)'}  ${originOf(node.callFrame, modules)}`;
  const [self, inclusiveFunction, inclusive] = [new Map<string, number>(), new Map<string, number>(), new Map()];
  const add = (map: Map<string, number>, key: string, dt: number) => map.set(key, (map.get(key) ?? 0) + dt);
  let total = 0;
  profile.samples.forEach((id, i) => {
    const [dt, node] = [profile.timeDeltas[i] ?? 0, byId.get(id)!];
    if (node.callFrame.functionName === '(idle)' || node.callFrame.functionName === '(program)') return;
    total += dt;
    add(self, nameOf(node), dt);
    // A sample counts once for each function and each origin on its stack.
    const seen = new Set<string>();
    // The root frame (no parent) is no function of the program.
    for (let at: number | undefined = id; at !== undefined && parent.has(at); at = parent.get(at)) {
      const frame = byId.get(at)!;
      for (const [map, key] of [
        [inclusiveFunction, nameOf(frame)],
        [inclusive, originOf(frame.callFrame, modules)],
      ] as const) {
        if (seen.has(key)) continue;
        seen.add(key);
        add(map, key, dt);
      }
    }
  });
  const pct = (us: number) => `${((100 * us) / total).toFixed(1)}%`;
  const top = (title: string, map: Map<string, number>) => {
    console.log(`\n${title}, top ${TOP}:`);
    for (const [key, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, TOP))
      console.log(`  ${pct(us).padStart(6)}  ${key}`);
  };
  console.log(`\nbusy samples: ${(total / 1000).toFixed(0)} ms of CPU in the isolate`);
  top('self time', self);
  top('time with the function on the stack (inclusive)', inclusiveFunction);
  top('time with the source file or package on the stack (inclusive)', inclusive);
}

await runGuarded(async () => {
  const { server, token } = await startService(tempDir('profile'));
  const { keys, method } = await merchant(server.baseUrl, token, KEYS);
  // Reads and refunds spread over a pool of payments as `npm run bench` spreads them; a create or a replay needs none.
  const pool = OP === 'get' || OP === 'refund' ? POOL : 1;
  const keyOf = (n: number) => auth(keys[n % KEYS]!.secret);
  const load = await side(server, { prefix: '/v1', keys: KEYS, keyOf, methodOf: () => method, pool });
  const session = inspector(await workerTarget(server.inspectorUrl));
  await session.opened;
  await session.send('Profiler.enable');
  await session.send('Profiler.setSamplingInterval', { interval: 200 });
  await session.send('Profiler.start');
  const round = await drive(server, OP, load.request[OP], SECONDS, CONNECTIONS);
  const { profile } = (await session.send('Profiler.stop')) as { profile: Profile };
  // The bundle's text, to name the source module of each bundled line (moduleMapOf).
  await session.send('Debugger.enable');
  const sources = new Map<string, string>();
  for (const scriptId of new Set(profile.nodes.map((n) => n.callFrame.scriptId).filter((id) => id && id !== '0'))) {
    const answer = (await session.send('Debugger.getScriptSource', { scriptId })) as { scriptSource?: string };
    if (answer?.scriptSource) sources.set(scriptId!, answer.scriptSource);
  }
  session.close();
  console.log(
    `${OP}: ${(round.requests / round.seconds).toFixed(0)} req/s, ${round.requests} requests, non-2xx ${round.non2xx}`,
  );
  summarize(profile, moduleMapOf(sources));
});
