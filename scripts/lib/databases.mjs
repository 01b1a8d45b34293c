// The D1 databases of a deployment, read from wrangler.toml: the control database (`DB`) and every shard
// (`SHARD_<n>`), in that order. `npm start`, `npm run db:migrate` (the deploy scripts), the bench and the chaos run
// apply migrations to, or read from, each of them; adding a shard to wrangler.toml is all they need.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './admin.mjs';

/** Binding names of `[[env.<env>.d1_databases]]` in a wrangler config file (default: the project's). */
export function databaseBindings(env, configPath = join(ROOT, 'wrangler.toml')) {
  const text = readFileSync(configPath, 'utf8');
  const blocks = text.split(/^\[\[/m).filter((block) => block.startsWith(`env.${env}.d1_databases]]`));
  const names = blocks.map((block) => /^binding\s*=\s*"([A-Z0-9_]+)"/m.exec(block)?.[1]).filter(Boolean);
  const shards = names.filter((name) => /^SHARD_\d+$/.test(name));
  if (!names.includes('DB') || shards.length === 0) {
    throw new Error(`wrangler.toml: env.${env} needs a DB binding and at least one SHARD_<n> binding`);
  }
  return { control: 'DB', shards };
}
