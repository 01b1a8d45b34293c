import { defineConfig } from 'drizzle-kit';

// `npm run db:generate` writes the control database's SQL migrations from its schema (binding `DB`, wrangler.toml).
export default defineConfig({
  dialect: 'sqlite',
  schema: './src/db/schema/control-plane.ts',
  out: './migrations/control',
});
