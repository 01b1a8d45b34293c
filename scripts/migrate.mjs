// `npm run db:migrate -- --env <test|live> [--remote|--local]`: applies the migrations to every database of a
// deployment, as wrangler.toml lists them: the control database (migrations/control) and each shard
// (migrations/shard, tracked in `d1_shard_migrations`, so a database that is both, after an upgrade from one
// database, keeps the two apart). The deploy scripts run it before `wrangler deploy`.
import { databaseBindings } from './lib/databases.mjs';
import { runWrangler } from './lib/admin.mjs';

const args = process.argv.slice(2);
const env = args[args.indexOf('--env') + 1];
if (!args.includes('--env') || !['test', 'live'].includes(env)) {
  console.error('usage: npm run db:migrate -- --env <test|live> [--remote|--local]');
  process.exit(2);
}
const target = args.includes('--local') ? '--local' : '--remote';
const { control, shards } = databaseBindings(env);
for (const binding of [control, ...shards]) {
  console.log(`Applying the migrations of ${binding} (${env}, ${target.slice(2)})...`);
  const { code } = await runWrangler(['d1', 'migrations', 'apply', binding, target, '--env', env]);
  if (code !== 0) {
    console.error(
      `Migrating ${binding} failed (exit ${code}); the databases before it are migrated, it and those after are not.`,
    );
    process.exit(code);
  }
}
