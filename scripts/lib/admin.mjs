// Shared by scripts/start.mjs (local bootstrap admin) and scripts/create-admin.mjs (deployed
// environments): hashes the password with the Worker's own code (src/domain/passwords.ts, scrypt) and
// inserts the admin with `wrangler d1 execute`, only when no user has that email yet.
// Needs Node 22.18+ (TypeScript type stripping) to import the .ts files; `npm start` / `npm run` use
// the project's own Node 22 from node_modules/.bin.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, normalizeEmail } from '../../src/domain/accounts.ts';
import { hashPassword } from '../../src/domain/passwords.ts';
import { BUSINESS_SCOPES } from '../../src/domain/scopes.ts';
import { newId } from '../../src/lib/ids.ts';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');

// The Worker's own rules: an admin gets every business scope; passwords and emails as for any user.
export { BUSINESS_SCOPES, MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, normalizeEmail };

export function isPlausibleEmail(email) {
  return email.length <= 254 && /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email);
}

/** A SQLite string literal: single quotes doubled; NUL refused (it would cut the statement). */
export function sqlString(value) {
  const text = String(value);
  if (text.includes('\0')) throw new Error('NUL character in SQL string');
  return `'${text.replaceAll("'", "''")}'`;
}

/** `INSERT ... SELECT ... WHERE NOT EXISTS`: running it twice leaves one admin. */
export async function buildInsertAdminSql({ email, name, password, now = Date.now() }) {
  const normalized = normalizeEmail(email);
  const id = newId('usr');
  const hash = await hashPassword(password);
  const sql =
    'INSERT INTO users (id, email, name, role, scopes, password_hash, created_at, updated_at)\n' +
    `SELECT ${sqlString(id)}, ${sqlString(normalized)}, ${sqlString(name)}, 'admin', ${sqlString(JSON.stringify(BUSINESS_SCOPES))}, ` +
    `${sqlString(hash)}, ${Math.trunc(now)}, ${Math.trunc(now)}\n` +
    `WHERE NOT EXISTS (SELECT 1 FROM users WHERE email = ${sqlString(normalized)});\n` +
    'SELECT changes() AS inserted;\n';
  return { sql, id, email: normalized };
}

/** Path of the project's wrangler entry point (run with this Node, never a global wrangler). */
export const wranglerBin = () => {
  const require = createRequire(import.meta.url);
  const pkgPath = require.resolve('wrangler/package.json');
  const bin = JSON.parse(readFileSync(pkgPath, 'utf8')).bin.wrangler;
  return join(dirname(pkgPath), bin);
};

/** Runs the project's wrangler with this Node; resolves with its exit code and captured stdout. */
export function runWrangler(args, { capture = false, env = {} } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [wranglerBin(), ...args], {
      cwd: ROOT,
      env: { ...process.env, WRANGLER_SEND_METRICS: 'false', ...env },
      stdio: ['ignore', capture ? 'pipe' : 'inherit', 'inherit'],
    });
    let stdout = '';
    if (capture) child.stdout.on('data', (chunk) => (stdout += chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), stdout }));
  });
}

/**
 * Inserts the admin unless a user with that email exists. `target` is `['--local']` or `['--remote']`.
 * Returns `created` true/false when wrangler reports the number of changed rows, null when it does not.
 */
export async function ensureAdmin({ env, target, email, name, password }) {
  const { sql, id, email: normalized } = await buildInsertAdminSql({ email, name, password });
  const dir = mkdtempSync(join(tmpdir(), 'payment-service-admin-'));
  const file = join(dir, 'admin.sql');
  try {
    writeFileSync(file, sql, { mode: 0o600 });
    const { code, stdout } = await runWrangler(
      ['d1', 'execute', 'DB', '--env', env, ...target, '--file', file, '--yes', '--json'],
      { capture: true },
    );
    if (code !== 0) {
      process.stderr.write(stdout);
      throw new Error(`wrangler d1 execute failed (exit ${code})`);
    }
    return { id, email: normalized, created: changedRows(stdout) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Reads `inserted` (local) or `Rows written` (remote import summary) from wrangler's --json output. */
function changedRows(stdout) {
  let results;
  try {
    results = JSON.parse(stdout.slice(stdout.indexOf('[')));
  } catch {
    return null;
  }
  const rows = (Array.isArray(results) ? results : []).flatMap((r) => (Array.isArray(r?.results) ? r.results : []));
  for (const row of rows) {
    if (typeof row?.inserted === 'number') return row.inserted > 0;
  }
  for (const row of rows) {
    if (typeof row?.['Rows written'] === 'number') return row['Rows written'] > 0;
  }
  return null;
}
