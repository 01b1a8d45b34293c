// `npm start`: the local `test` deployment in one command, offline, no account.
//   1. creates `.dev.vars` from `.dev.vars.example` when missing, every `generate` value freshly random;
//   2. applies the D1 migrations to the local database (.wrangler/state);
//   3. makes sure the bootstrap admin exists (BOOTSTRAP_ADMIN_EMAIL / BOOTSTRAP_ADMIN_PASSWORD);
//   4. runs `wrangler dev --env test` on http://localhost:${PORT:-8787}.
// Running it again keeps `.dev.vars`, the database and the admin as they are.
// PAYMENT_SERVICE_STATE_DIR=<dir> (optional; the Node test project uses it) keeps everything in <dir>
// instead: the vars file is <dir>/.dev.vars (created the same way, given to wrangler dev with --env-file)
// and the local D1 / Durable Object state is <dir>/state (--persist-to); the developer's data is untouched.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
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

console.log('Applying the D1 migrations to the local database...');
const migrated = await runWrangler(['d1', 'migrations', 'apply', 'DB', '--local', ...PERSIST, '--env', ENV], {
  env: { CI: 'true' },
});
if (migrated.code !== 0) fail(`applying the migrations failed (exit ${migrated.code}).`);

const email = vars.BOOTSTRAP_ADMIN_EMAIL || 'admin@example.com';
const password = vars.BOOTSTRAP_ADMIN_PASSWORD || 'admin-password';
if (!isPlausibleEmail(email)) fail('BOOTSTRAP_ADMIN_EMAIL is not an email address.');
const admin = await ensureAdmin({ env: ENV, target: ['--local', ...PERSIST], email, name: 'Local Admin', password });
if (admin.created === true) console.log(`Bootstrap admin created: ${admin.email}`);
else if (admin.created === false)
  console.log(`Bootstrap admin present: ${admin.email} (an existing user is never changed).`);
else console.log(`Bootstrap admin ensured: ${admin.email}`);

const port = process.env.PORT || '8787';
console.log(
  `Prepared in ${((Date.now() - started) / 1000).toFixed(1)} s. Starting wrangler dev on http://localhost:${port} (docs: /docs)...`,
);

const child = spawn(
  process.execPath,
  [wranglerBin(), 'dev', '--env', ENV, '--port', port, '--ip', '127.0.0.1', ...PERSIST, ...VARS_FILE],
  {
    cwd: ROOT,
    stdio: 'inherit',
    // Offline by default: no metrics, and no fetch of the `Request.cf` sample from the network.
    env: { CLOUDFLARE_CF_FETCH_ENABLED: 'false', ...process.env, WRANGLER_SEND_METRICS: 'false' },
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
