// `npm run bench:profile`: a V8 CPU profile of the service's Worker isolate under a load of one operation
// (default: get payment), through wrangler dev's inspector. Prints where the isolate's time goes: the
// functions with the most self time, and the time by package or source file (a sample counts for every
// package on its stack, once). Measurement only; nothing of it runs in the service.
//   BENCH_PLATFORM=local (wrangler's emulation of rate limiting and the console; default: the bench's models)
//   BENCH_PROFILE_OP=get|replay|create|refund   BENCH_PROFILE_SECONDS=8   BENCH_PROFILE_CONNECTIONS=8   BENCH_PROFILE_TOP=30
//   BENCH_PROFILE_OUT=file.cpuprofile (the whole profile, for DevTools)
//   BENCH_PROFILE_POOL=256 (payments the reads and refunds are spread over, as `npm run bench` spreads them)
import autocannon from 'autocannon';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startLocalServer } from '../scripts/lib/local-server.ts';
import { platformModelVars } from './platform-model.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OP = process.env.BENCH_PROFILE_OP ?? 'get';
const SECONDS = Number(process.env.BENCH_PROFILE_SECONDS ?? 8);
const CONNECTIONS = Number(process.env.BENCH_PROFILE_CONNECTIONS ?? 8);
const INSPECTOR = 'http://127.0.0.1:9229';
// Each API key may send 500 requests per 10 s in `test` (docs/limits.md): the load is spread over this many keys,
// so that the profile is of the operation, not of its 429 answers.
const KEYS = 16;
// A refund reads its payment's earlier refunds: spread over as many payments as the bench's pool, each has as few.
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

async function api(base: string, method: string, path: string, token?: string, body?: unknown, key?: string) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
      ...(body ? { 'Content-Type': 'application/json' } : {}),
      ...(key ? { 'Idempotency-Key': key } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, json: (await res.json()) as any };
}

/** The Worker's inspector target (wrangler dev lists the user Worker among its targets). */
async function workerTarget(): Promise<string> {
  const targets = (await (await fetch(`${INSPECTOR}/json`)).json()) as {
    webSocketDebuggerUrl: string;
    title?: string;
  }[];
  const target = targets.find((t) => !/proxy/i.test(t.title ?? '')) ?? targets[0];
  if (!target) throw new Error('no inspector target on :9229');
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
  return (scriptId, line) => {
    const list = scriptId === undefined ? undefined : starts.get(scriptId);
    if (!list || list.length === 0) return null;
    let lo = 0;
    let hi = list.length - 1;
    if (line < list[0]!.line) return null;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (list[mid]!.line <= line) lo = mid;
      else hi = mid - 1;
    }
    return list[lo]!.path;
  };
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
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const inclusiveFunction = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    const node = byId.get(id)!;
    if (node.callFrame.functionName === '(idle)' || node.callFrame.functionName === '(program)') return;
    total += dt;
    const key = nameOf(node);
    self.set(key, (self.get(key) ?? 0) + dt);
    const seenOrigins = new Set<string>();
    const seenFunctions = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)!;
      const origin = originOf(frame.callFrame, modules);
      if (!seenOrigins.has(origin)) {
        seenOrigins.add(origin);
        inclusive.set(origin, (inclusive.get(origin) ?? 0) + dt);
      }
      const name = nameOf(frame);
      if (!seenFunctions.has(name) && frame.callFrame.functionName !== '(root)') {
        seenFunctions.add(name);
        inclusiveFunction.set(name, (inclusiveFunction.get(name) ?? 0) + dt);
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

async function main() {
  const stateDir = mkdtempSync(join(tmpdir(), 'payment-service-profile-'));
  // The service as `npm run bench` runs it: its instrumented entry with the platform models (bench/platform-model.ts),
  // unless BENCH_PLATFORM=local profiles wrangler's own emulation.
  const wranglerArgs =
    process.env.BENCH_PLATFORM === 'local'
      ? []
      : ['bench/instrumented.ts', ...platformModelVars(readFileSync(join(ROOT, 'wrangler.toml'), 'utf8'))];
  const server = await startLocalServer({
    logFile: join(ROOT, 'test-results', 'profile-server.log'),
    stateDir,
    wranglerArgs,
  });
  try {
    const base = server.baseUrl;
    const token = (
      await api(base, 'POST', '/v1/auth/login', undefined, { email: server.adminEmail, password: server.adminPassword })
    ).json.data.access_token;
    const keys: { id: string; secret: string }[] = [];
    for (let k = 0; k < KEYS; k++) {
      const created = await api(base, 'POST', '/v1/account/api-keys', token, {
        name: `profile ${k}`,
        scopes: ['payments:create', 'payments:read', 'refunds:create'],
      });
      keys.push(created.json.data);
    }
    const connectors = (await api(base, 'GET', '/v1/connectors?limit=100', token)).json.data;
    const version = connectors
      .filter((c: any) => c.provider === 'sandbox' && c.type === 'pos')
      .flatMap((c: any) => c.versions)[0];
    const method = (
      await api(base, 'POST', '/v1/account/payment-methods', token, {
        connector_definition_version_id: version.id,
        name: 'Profile POS',
        credentials: { api_key: `sandbox-${randomBytes(8).toString('hex')}` },
      })
    ).json.data;
    for (const key of keys) {
      await api(base, 'POST', `/v1/account/payment-methods/${method.id}/api-keys`, token, { api_key_id: key.id });
    }
    const body = {
      amount: { value: '1000.00', currency: 'USD' },
      external_reference: `profile-${randomUUID()}`,
      payment_method: method.id,
    };
    // A replay is of the same key's earlier request (idempotency is per credential): one per key.
    const idem = randomUUID();
    const payments: { id: string }[] = [];
    for (const key of keys) payments.push((await api(base, 'POST', '/v1/payments', key.secret, body, idem)).json.data);
    // Only the reads and the refunds are spread over payments; a create or a replay needs none beyond these.
    for (let p = payments.length; (OP === 'get' || OP === 'refund') && p < POOL; p++) {
      const reference = { ...body, external_reference: `profile-${randomUUID()}` };
      payments.push(
        (await api(base, 'POST', '/v1/payments', keys[p % KEYS]!.secret, reference, randomUUID())).json.data,
      );
    }

    const session = inspector(await workerTarget());
    await session.opened;
    await session.send('Profiler.enable');
    await session.send('Profiler.setSamplingInterval', { interval: 200 });
    await session.send('Profiler.start');
    const requestOf = (k: number) => {
      const key = keys[k % KEYS]!;
      if (OP === 'refund')
        return {
          method: 'POST' as const,
          path: `/v1/payments/${payments[k % payments.length]!.id}/refunds`,
          headers: {
            Authorization: `Bearer ${key.secret}`,
            'Content-Type': 'application/json',
            'Idempotency-Key': randomUUID(),
          },
          body: JSON.stringify({ amount: { value: '0.01', currency: 'USD' } }),
        };
      if (OP === 'create')
        return {
          method: 'POST' as const,
          path: '/v1/payments',
          headers: {
            Authorization: `Bearer ${key.secret}`,
            'Content-Type': 'application/json',
            'Idempotency-Key': randomUUID(),
          },
          body: JSON.stringify({ ...body, external_reference: `profile-${randomUUID()}` }),
        };
      return OP === 'replay'
        ? {
            method: 'POST' as const,
            path: '/v1/payments',
            headers: {
              Authorization: `Bearer ${key.secret}`,
              'Content-Type': 'application/json',
              'Idempotency-Key': idem,
            },
            body: JSON.stringify(body),
          }
        : {
            method: 'GET' as const,
            path: `/v1/payments/${payments[k % payments.length]!.id}`,
            headers: { Authorization: `Bearer ${key.secret}` },
          };
    };
    let sent = 0;
    const result = await autocannon({
      url: base,
      connections: CONNECTIONS,
      duration: SECONDS,
      requests: [{ setupRequest: (request) => ({ ...request, ...requestOf(sent++) }) }],
    });
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
      `${OP}: ${result.requests.average.toFixed(0)} req/s, ${result.requests.total} requests, non-2xx ${result.non2xx}`,
    );
    const modules = moduleMapOf(sources);
    summarize(profile, modules);
    // The whole profile, for Chrome DevTools (Performance > Load profile) or a closer look, each bundled frame
    // named by the source module it comes from (the bundle itself is gone with the server).
    if (process.env.BENCH_PROFILE_OUT) {
      for (const node of profile.nodes) {
        const module = modules(node.callFrame.scriptId, node.callFrame.lineNumber);
        if (module) node.callFrame.url = module;
      }
      writeFileSync(process.env.BENCH_PROFILE_OUT, JSON.stringify(profile));
    }
  } finally {
    await server.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

await main();
