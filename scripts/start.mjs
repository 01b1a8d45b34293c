// `npm start`: the local `test` deployment in one command, offline, no account.
//   1. creates `.dev.vars` from `.dev.vars.example` when missing, every `generate` value freshly random;
//   2. applies the D1 migrations to the local databases (.wrangler/state): the control database and every shard
//      (two by default), saying in one line what it applied;
//   3. makes sure the bootstrap admin exists (BOOTSTRAP_ADMIN_EMAIL / BOOTSTRAP_ADMIN_PASSWORD);
//   4. runs `wrangler dev --env test` on http://127.0.0.1:${PORT:-8787} and says so once it answers;
//   5. fires the scheduled handler at the start of every minute, as the cron trigger does in a deployment.
// Running it again keeps `.dev.vars`, the database and the admin as they are.
// PAYMENT_SERVICE_STATE_DIR=<dir> (optional; the Node test project uses it) keeps everything in <dir>
// instead: the vars file is <dir>/.dev.vars (created the same way, given to wrangler dev with --env-file)
// and the local D1 / Durable Object state is <dir>/state (--persist-to); the developer's data is untouched.
// Arguments after the script's name go to wrangler dev as they are (`npm start -- --var NAME:value`).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname, join, resolve } from 'node:path';

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  console.error(
    `npm start needs Node 22.18+ (found ${process.version}); run it through npm, which uses the project's own Node.`,
  );
  process.exit(1);
}
const { ensureAdmin, isPlausibleEmail, ROOT, runWrangler, wranglerBin } = await import('./lib/admin.mjs');

const STATE_DIR = process.env.PAYMENT_SERVICE_STATE_DIR ? resolve(process.env.PAYMENT_SERVICE_STATE_DIR) : null;
const DEV_VARS = STATE_DIR ? join(STATE_DIR, '.dev.vars') : join(ROOT, '.dev.vars');
// Extra wrangler arguments for a separate state directory (none by default: .dev.vars, .wrangler/state).
const PERSIST = STATE_DIR ? ['--persist-to', join(STATE_DIR, 'state')] : [];
const VARS_FILE = STATE_DIR ? ['--env-file', DEV_VARS] : [];
const EXAMPLE = join(ROOT, '.dev.vars.example');
const ENV = 'test';

const generators = {
  JWT_SIGNING_KEY: () => randomBytes(32).toString('base64url'),
  API_KEY_PEPPER: () => randomBytes(32).toString('base64url'),
  CREDENTIALS_ENCRYPTION_KEYS: () => `k1:${randomBytes(32).toString('base64')}`,
};

function createDevVars() {
  mkdirSync(dirname(DEV_VARS), { recursive: true });
  const lines = readFileSync(EXAMPLE, 'utf8').split('\n');
  const out = lines.map((line) => {
    const match = /^([A-Z0-9_]+)=generate\s*$/.exec(line);
    if (!match) return line;
    const name = match[1];
    return `${name}=${(generators[name] ?? (() => randomBytes(32).toString('base64url')))()}`;
  });
  writeFileSync(DEV_VARS, out.join('\n'), { mode: 0o600, flag: 'wx' });
}

function readDevVars() {
  const vars = {};
  for (const line of readFileSync(DEV_VARS, 'utf8').split('\n')) {
    const match = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (!match) continue;
    let value = match[2];
    if (/^(['"]).*\1$/.test(value)) value = value.slice(1, -1);
    vars[match[1]] = value;
  }
  return vars;
}

const seconds = (since) => ((Date.now() - since) / 1000).toFixed(1);

function fail(message) {
  console.error(`npm start: ${message}`);
  process.exit(1);
}

const started = Date.now();

if (existsSync(DEV_VARS)) {
  console.log('Using the existing .dev.vars.');
} else {
  createDevVars();
  console.log('Created .dev.vars with freshly generated local secrets (never commit it).');
}
const vars = readDevVars();
const missing = Object.keys(generators).filter((name) => !vars[name] || vars[name] === 'generate');
if (missing.length > 0)
  fail(`.dev.vars lacks a value for ${missing.join(', ')}; delete it to have a fresh one generated.`);

// wrangler prints a table of the migrations for every one it applies (hundreds of lines on a fresh database): the
// output is kept for a failure, and a success is one line. The control database and every shard (wrangler.toml).
const { databaseBindings } = await import('./lib/databases.mjs');
const { control, shards } = databaseBindings(ENV);
let applied = 0;
for (const binding of [control, ...shards]) {
  const migrated = await runWrangler(['d1', 'migrations', 'apply', binding, '--local', ...PERSIST, '--env', ENV], {
    capture: true,
    env: { CI: 'true' },
  });
  if (migrated.code !== 0) {
    process.stdout.write(migrated.stdout);
    fail(`applying the migrations to ${binding} failed (exit ${migrated.code}).`);
  }
  applied += new Set([...migrated.stdout.matchAll(/│ (\S+\.sql)\s+│ ✅/g)].map((match) => match[1])).size;
}
console.log(
  applied > 0
    ? `Migrations applied: ${applied}, to the control database and ${shards.length} shards (${shards.join(', ')}).`
    : `Migrations: the control database and ${shards.length} shards are up to date.`,
);

const email = vars.BOOTSTRAP_ADMIN_EMAIL || 'admin@example.com';
const password = vars.BOOTSTRAP_ADMIN_PASSWORD || 'admin-password';
if (!isPlausibleEmail(email)) fail('BOOTSTRAP_ADMIN_EMAIL is not an email address.');
const admin = await ensureAdmin({ env: ENV, target: ['--local', ...PERSIST], email, name: 'Local Admin', password });
if (admin.created === true) console.log(`Bootstrap admin created: ${admin.email}`);
else if (admin.created === false)
  console.log(`Bootstrap admin present: ${admin.email} (an existing user is never changed).`);
else console.log(`Bootstrap admin ensured: ${admin.email}`);

const port = process.env.PORT || '8787';
const HOST = '127.0.0.1';
const base = `http://${HOST}:${port}`;
console.log(`Prepared in ${seconds(started)} s. Starting wrangler dev...`);

// With a vars file (--env-file) wrangler also reads the required secrets from its own environment: only the file
// may set them, as `.dev.vars` does otherwise.
const childEnv = { CLOUDFLARE_CF_FETCH_ENABLED: 'false', ...process.env, WRANGLER_SEND_METRICS: 'false' };
for (const name of Object.keys(generators)) delete childEnv[name];
const child = spawn(
  process.execPath,
  // --test-scheduled: this script fires the scheduled handler itself, so wrangler's warning that nothing does is
  // wrong here (the flag also serves `/__scheduled`).
  // The extra arguments first: wrangler's array options (`--env-file`) would take a positional entry after them.
  [
    wranglerBin(),
    'dev',
    ...process.argv.slice(2),
    '--env',
    ENV,
    '--port',
    port,
    '--ip',
    HOST,
    '--test-scheduled',
    ...PERSIST,
    ...VARS_FILE,
  ],
  {
    cwd: ROOT,
    stdio: 'inherit',
    // Offline by default: no metrics, and no fetch of the `Request.cf` sample from the network.
    env: childEnv,
  },
);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  });
}
child.on('error', (error) => fail(`could not start wrangler dev: ${error.message}`));
child.on('exit', (code, signal) =>
  process.exit(code ?? (signal ? 128 + (signal === 'SIGINT' ? 2 : signal === 'SIGHUP' ? 1 : 15) : 0)),
);
const running = () => child.exitCode === null && child.signalCode === null;

// Ready: the port accepts a connection, then the Worker answers (wrangler holds the request until it is loaded).
const portOpen = () =>
  new Promise((resolve) => {
    const socket = connect({ host: HOST, port: Number(port) }, () => {
      socket.end();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
while (running() && !(await portOpen())) await new Promise((resolve) => setTimeout(resolve, 200));
let ready = false;
try {
  const res = await fetch(`${base}/openapi.json`, { signal: AbortSignal.timeout(120_000) });
  await res.arrayBuffer();
  if (!res.ok) throw new Error(`GET /openapi.json answered ${res.status}`);
  ready = true;
} catch (error) {
  if (running()) console.error(`npm start: the Worker did not answer (${error.message}); see wrangler's output above.`);
}

// Crons do not fire under `wrangler dev`: the `* * * * *` trigger of wrangler.toml (QR expiry, reconciliation, the
// webhook relay) is fired here at the start of every minute, through the route wrangler dev runs it on.
const SCHEDULED = `${base}/cdn-cgi/local/scheduled?cron=*+*+*+*+*`;
function fireScheduled() {
  fetch(SCHEDULED, { signal: AbortSignal.timeout(55_000) }).then(
    async (res) => {
      await res.arrayBuffer();
      if (!res.ok) console.error(`npm start: the scheduled handler answered ${res.status}.`);
    },
    (error) => running() && console.error(`npm start: could not fire the scheduled handler: ${error.message}`),
  );
}
function everyMinute() {
  setTimeout(
    () => {
      fireScheduled();
      everyMinute();
    },
    60_000 - (Date.now() % 60_000),
  );
}
if (running()) everyMinute();
if (running() && ready) {
  console.log(
    `\nnpm start: ready in ${seconds(started)} s on ${base} (explorer ${base}/docs, contract ${base}/openapi.json).\n` +
      `The scheduled jobs run at the start of every minute; run them now: curl -s "${SCHEDULED}"\n`,
  );
}
