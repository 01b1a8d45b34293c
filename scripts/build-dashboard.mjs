// Builds the merchant dashboard (dashboard/src, Preact) into public/dashboard with esbuild: one script and one
// stylesheet named by their content's hash, and the index.html that names them (from dashboard/index.html). Runs
// on `npm install` (postinstall, after Swagger UI is vendored) and before the Node tests; the output is not
// committed. `npm run build:dashboard` runs it by hand; it prints the gzipped size of what a first load fetches.
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const source = join(root, 'dashboard');
const target = join(root, 'public', 'dashboard');
const PUBLIC_PATH = '/dashboard/assets';

export async function buildDashboard({ log = console.log } = {}) {
  rmSync(target, { recursive: true, force: true });
  const assets = join(target, 'assets');
  mkdirSync(assets, { recursive: true });
  const result = await build({
    absWorkingDir: root,
    entryPoints: { app: join(source, 'src', 'main.tsx') },
    bundle: true,
    // One file each: the first load is exactly the script and the stylesheet index.html names (the budget test
    // measures them); a lazy chunk would escape that measure.
    splitting: false,
    format: 'esm',
    target: ['chrome111', 'firefox115', 'safari16.4'],
    minify: true,
    legalComments: 'none',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    tsconfig: join(source, 'tsconfig.json'),
    outdir: assets,
    entryNames: '[name]-[hash]',
    metafile: true,
    logLevel: 'warning',
  });
  const outputs = Object.keys(result.metafile.outputs).map((path) => join(root, path));
  const script = outputs.find((path) => path.endsWith('.js'));
  const style = outputs.find((path) => path.endsWith('.css'));
  if (!script || !style) throw new Error('build-dashboard: esbuild wrote no script or no stylesheet');
  const url = (path) => `${PUBLIC_PATH}/${relative(assets, path)}`;
  const html = readFileSync(join(source, 'index.html'), 'utf8')
    .replace('%SCRIPT%', url(script))
    .replace('%STYLE%', url(style));
  writeFileSync(join(target, 'index.html'), html);
  copyFileSync(join(source, 'favicon.svg'), join(assets, 'favicon.svg'));
  const gzipped = [script, style].reduce((sum, path) => sum + gzipSync(readFileSync(path)).length, 0);
  log(`Dashboard built into public/dashboard: ${(gzipped / 1000).toFixed(1)} kB gzipped (script and style).`);
  return { script: url(script), style: url(style), gzipped };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await buildDashboard();
