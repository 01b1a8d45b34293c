// `npm run owners:move -- --user <usr_...> --shard <SHARD_n> [--url <base URL>]`: the operator's command that moves
// an owner's data to another shard (docs/shards.md; docs/SCALE.md, "Moves"). It signs in as an admin (ADMIN_EMAIL and ADMIN_PASSWORD,
// or the bootstrap admin of .dev.vars locally) and calls `PUT /v1/users/{user_id}/placement`, which starts the move
// (202) or joins the one running, then follows it with `GET` until it ends; the owner's writes answer a retryable 503
// meanwhile. Stopping this command stops nothing: the move is a durable job; run it again to follow it. Naming the
// shard the owner is on cancels a move that has not flipped yet.
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
const auth = { Authorization: `Bearer ${login.body.data.access_token}` };
const placementUrl = `${base}/v1/users/${encodeURIComponent(user)}/placement`;
const moved = await json(
  await fetch(placementUrl, {
    method: 'PUT',
    headers: { 'Content-Type': 'application/json', ...auth },
    body: JSON.stringify({ shard }),
  }),
);
if (moved.status !== 200 && moved.status !== 202) {
  console.error(`The move was refused: ${moved.status} ${JSON.stringify(moved.body?.error ?? moved.body)}`);
  process.exit(1);
}
const describe = (move) => `${move.id} ${move.from} -> ${move.to}: ${move.status}, step ${move.step}`;
if (moved.status === 200) {
  const move = moved.body.data.move;
  console.log(
    move?.status === 'canceled' && moved.body.data.moving_to === null && move.from === shard
      ? `Canceled the running move ${describe(move)}; ${user} stays on ${shard}.`
      : `${user} is on ${moved.body.data.shard}: nothing to move.`,
  );
  process.exit(0);
}
let move = moved.body.data.move;
console.log(`Moving ${user}: ${describe(move)} (its writes answer 503 until the move flips; about a minute)...`);
// Follow it (the access token lasts 15 minutes; a move of a large owner may outlast it: sign in again then).
let last = '';
while (move.status === 'running') {
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const read = await json(await fetch(placementUrl, { headers: auth }));
  if (read.status === 401) {
    console.error('The session expired; run the command again to follow the move (it goes on meanwhile).');
    process.exit(1);
  }
  if (read.status !== 200) continue;
  move = read.body.data.move;
  if (describe(move) !== last) {
    last = describe(move);
    console.log(`  ${last}`);
  }
}
if (move.status !== 'done') {
  console.error(`The move ended ${move.status}: ${move.reason ?? ''}`);
  process.exit(1);
}
console.log(`Done: ${user} is on ${move.to}; ${JSON.stringify(move.rows_copied)} rows copied.`);
