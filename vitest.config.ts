import { cloudflareTest, readD1Migrations } from '@cloudflare/vitest-plugin';
import { defineConfig } from 'vitest/config';

// Tests run inside workerd with the `test` environment of wrangler.toml: real D1, Durable Objects and
// static assets. Secrets are fixed test values here, never the developer's `.dev.vars`.
const SECRETS = {
  JWT_SIGNING_KEY: 'test-jwt-signing-key-0123456789abcdef0123456789',
  API_KEY_PEPPER: 'test-api-key-pepper-0123456789abcdef',
  CREDENTIALS_ENCRYPTION_KEYS: 'k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=',
};
// wrangler.toml requires these secrets (`secrets.required`): without a `.dev.vars`, wrangler reads them from the
// process environment, and warns for every test file when they are not there (and, at its `log` level, says where
// it found them). The bindings below win either way.
Object.assign(process.env, SECRETS);
process.env.WRANGLER_LOG ??= 'warn';

export default defineConfig(async () => {
  const [control, shard] = await Promise.all([
    readD1Migrations('./migrations/control'),
    readD1Migrations('./migrations/shard'),
  ]);
  return {
    plugins: [
      cloudflareTest({
        wrangler: { configPath: './wrangler.toml', environment: 'test' },
        miniflare: {
          bindings: {
            TEST_CONTROL_MIGRATIONS: control,
            TEST_SHARD_MIGRATIONS: shard,
            ...SECRETS,
            ALLOW_INSECURE_WEBHOOKS: 'false',
          },
          // The two shards of wrangler.toml's `test` deployment stay; test/db/shard-backfills.test.ts brings a database
          // of its own to the schema before the unreleased migrations, then upgrades it. MOVE_THIRD_SHARD: a third shard
          // for the move model test (test/services/move-model.test.ts), which binds it as SHARD_2 in its own bindings
          // only, so that every other test keeps the deployment's two shards.
          d1Databases: { MIGRATION_DB: 'shard-backfills', MOVE_THIRD_SHARD: 'move-third-shard' },
          // A per-key limit low enough to reach in a test (test/middleware/auth-rate-limit.test.ts puts it in
          // place of the deployment's API_KEY_RATE_LIMIT); the deployment's own limit stays for every other test.
          ratelimits: { TIGHT_API_KEY_RATE_LIMIT: { namespace_id: '9001', simple: { limit: 3, period: 60 } } },
        },
      }),
    ],
    test: {
      setupFiles: ['./test/setup.ts'],
      include: ['test/**/*.test.ts'],
      testTimeout: 30_000,
      // Every request writes an access-log line (src/middleware/access-log.ts): still recorded for the
      // leak scan (test/setup.ts) and readable by tests, but not printed.
      onConsoleLog: (line: string) => !line.includes('"event":"request"'),
      hookTimeout: 30_000,
    },
  };
});
