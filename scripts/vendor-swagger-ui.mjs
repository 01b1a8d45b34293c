// Copies Swagger UI's files from node_modules into public/docs/assets so the Worker serves /docs
// itself (offline, strict CSP). Runs on `npm install` (postinstall); the copies are not committed.
import { copyFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const source = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const target = join(root, 'public/docs/assets/swagger-ui-dist');
mkdirSync(target, { recursive: true });
for (const file of ['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png']) {
  copyFileSync(join(source, file), join(target, file));
}
