import { defineConfig } from 'drizzle-kit';

// `npm run db:generate` writes SQL migrations from the schema; wrangler applies them (`migrations_dir`).
export default defineConfig({
  dialect: 'sqlite',
  schema: './src/db/schema/index.ts',
  out: './migrations',
});
