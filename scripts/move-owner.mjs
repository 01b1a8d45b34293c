// `npm run owners:move -- --user <usr_...> --shard <SHARD_n> [--url <base URL>]`: the operator's command that moves
// an owner's data to another shard (docs/shards.md). It signs in as an admin (ADMIN_EMAIL and ADMIN_PASSWORD, or
// the bootstrap admin of .dev.vars locally) and calls `PUT /v1/users/{user_id}/placement`, which answers once the
// copy is checked and the directory points at the new shard; the owner's writes answer a retryable 503 meanwhile.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './lib/admin.mjs';

const args = process.argv.slice(2);
const option = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const user = option('--user');
const shard = option('--shard');
const base = option('--url') ?? `http://127.0.0.1:${process.env.PORT ?? 8787}`;
if (!user || !shard) {
  console.error('usage: npm run owners:move -- --user <usr_...> --shard <SHARD_n> [--url <base URL>]');
  process.exit(2);
}

function devVar(name) {
  const file = join(ROOT, '.dev.vars');
  if (!existsSync(file)) return undefined;
  const line = readFileSync(file, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${name}=`));
  return line?.slice(name.length + 1).trim();
}

const email = process.env.ADMIN_EMAIL ?? devVar('BOOTSTRAP_ADMIN_EMAIL');
const password = process.env.ADMIN_PASSWORD ?? devVar('BOOTSTRAP_ADMIN_PASSWORD');
if (!email || !password) {
  console.error('Set ADMIN_EMAIL and ADMIN_PASSWORD (an admin of that deployment).');
  process.exit(2);
}

const json = async (res) => ({ status: res.status, body: await res.json().catch(() => null) });
const login = await json(
  await fetch(`${base}/v1/auth/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ email, password }),
  }),
);
if (login.status !== 201) {
  console.error(`Signing in failed: ${login.status} ${login.body?.error?.code ?? ''}`);
  process.exit(1);
}
console.log(`Moving ${user} to ${shard} (its writes answer 503 until the move ends; about a minute)...`);
const moved = await json(
  await fetch(`${base}/v1/users/${encodeURIComponent(user)}/placement`, {
    method: 'PUT',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${login.body.data.access_token}` },
    body: JSON.stringify({ shard }),
  }),
);
if (moved.status !== 200) {
  console.error(`The move failed: ${moved.status} ${JSON.stringify(moved.body?.error ?? moved.body)}`);
  process.exit(1);
}
console.log(`Done: ${user} is on ${moved.body.data.shard}.`);
