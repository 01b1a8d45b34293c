import { defineConfig } from 'drizzle-kit';

// `npm run db:generate` writes every shard database's SQL migrations from its schema (bindings `SHARD_*`).
export default defineConfig({
  dialect: 'sqlite',
  schema: './src/db/schema/data-plane.ts',
  out: './migrations/shard',
});
