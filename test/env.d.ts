import type { D1Migration } from 'cloudflare:test';
import type { Env as Deployment } from '../src/env.ts';

// `env` of `cloudflare:workers` is the `test` deployment of wrangler.toml (vitest.config.ts). The generated
// Cloudflare.Env (worker-configuration.d.ts) has every binding optional, because the top level of wrangler.toml,
// which is never deployed, has none, and a base interface cannot make them required: members declared here win.
// test/env.test.ts fails to type-check when one is missing.
declare global {
  namespace Cloudflare {
    interface Env {
      TEST_CONTROL_MIGRATIONS: D1Migration[];
      TEST_SHARD_MIGRATIONS: D1Migration[];
      /** A shard database the backfill test builds before the unreleased migrations (test/db/shard-backfills.test.ts). */
      MIGRATION_DB: D1Database;
      /** A third shard for the move model test, bound as SHARD_2 in that test's own bindings only. */
      MOVE_THIRD_SHARD: D1Database;
      TIGHT_API_KEY_RATE_LIMIT: RateLimit;
      DB: Deployment['DB'];
      SHARD_0: Deployment['SHARD_0'];
      SHARD_1: Deployment['SHARD_1'];
      ASSETS: Deployment['ASSETS'];
      WEBHOOKS: Deployment['WEBHOOKS'];
      ENVIRONMENT: Deployment['ENVIRONMENT'];
      ALLOW_INSECURE_WEBHOOKS: Deployment['ALLOW_INSECURE_WEBHOOKS'];
      JWT_SIGNING_KEY: Deployment['JWT_SIGNING_KEY'];
      API_KEY_PEPPER: Deployment['API_KEY_PEPPER'];
      CREDENTIALS_ENCRYPTION_KEYS: Deployment['CREDENTIALS_ENCRYPTION_KEYS'];
      RATE_LIMITER: Deployment['RATE_LIMITER'];
      IDEMPOTENCY: Deployment['IDEMPOTENCY'];
      API_KEY_RATE_LIMIT: Deployment['API_KEY_RATE_LIMIT'];
      OWNER_MOVES: Deployment['OWNER_MOVES'];
    }
  }
}
