import { applyD1Migrations } from 'cloudflare:test';
import { env } from 'cloudflare:workers';

// Every test file starts from the migrated schema (the call is a no-op when already applied).
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
