import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The layering rules of .dependency-cruiser.cjs (docs/layout.md) hold on the tree (`npm run
 * lint`); here each is shown to bite: a tree seeded with one violation fails, the same tree without it
 * passes. The seeded trees live in a temporary folder, never in src/.
 */
const root = resolve(import.meta.dirname, '..');
const depcruise = join(root, 'node_modules', '.bin', 'depcruise');
let dir: string;

async function cruise(files: Record<string, string>, folders = ['src']): Promise<{ ok: boolean; output: string }> {
  const tree = await mkdtemp(join(dir, 'tree-'));
  await copyFile(join(root, '.dependency-cruiser.cjs'), join(tree, '.dependency-cruiser.cjs'));
  await copyFile(join(root, 'tsconfig.json'), join(tree, 'tsconfig.json'));
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(tree, path)), { recursive: true });
    await writeFile(join(tree, path), text);
  }
  try {
    const { stdout } = await promisify(execFile)(depcruise, [...folders, '--config', '.dependency-cruiser.cjs'], {
      cwd: tree,
    });
    return { ok: true, output: stdout };
  } catch (error) {
    return { ok: false, output: String((error as { stdout?: string }).stdout ?? error) };
  }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dependency-rules-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('dependency rules', () => {
  const http = { 'src/http/errors.ts': 'export const HTTP_STATUS = {};\n' };

  it('services never import the HTTP layer', async () => {
    const clean = await cruise({ ...http, 'src/services/payments/ok.ts': 'export const ok = 1;\n' });
    expect(clean.ok, clean.output).toBe(true);
    const seeded = await cruise({
      ...http,
      'src/services/payments/seeded.ts':
        "import { HTTP_STATUS } from '../../http/errors.ts';\nexport const s = HTTP_STATUS;\n",
    });
    expect(seeded.ok).toBe(false);
    expect(seeded.output).toContain('services-speak-the-domain');
  });

  it('the domain imports only the domain and lib', async () => {
    const seeded = await cruise({
      'src/services/x.ts': 'export const x = 1;\n',
      'src/domain/seeded.ts': "import { x } from '../services/x.ts';\nexport const s = x;\n",
    });
    expect(seeded.ok).toBe(false);
    expect(seeded.output).toContain('domain-is-pure');
  });

  it('no import cycles, type-only imports included', async () => {
    const clean = await cruise({
      'src/lib/a.ts': "import type { B } from './b.ts';\nexport type A = B | 1;\n",
      'src/lib/b.ts': 'export type B = 2;\n',
    });
    expect(clean.ok, clean.output).toBe(true);
    const seeded = await cruise({
      'src/lib/a.ts': "import type { B } from './b.ts';\nexport type A = B | 1;\n",
      'src/lib/b.ts': "import type { A } from './a.ts';\nexport type B = A[] | 2;\n",
    });
    expect(seeded.ok).toBe(false);
    expect(seeded.output).toContain('no-cycles');
  });

  it('connectors use plain zod, never Hono', async () => {
    const packages = {
      'node_modules/zod/package.json': '{ "name": "zod", "main": "index.js" }\n',
      'node_modules/zod/index.js': 'export const z = {};\n',
      'node_modules/@hono/zod-openapi/package.json': '{ "name": "@hono/zod-openapi", "main": "index.js" }\n',
      'node_modules/@hono/zod-openapi/index.js': 'export const z = {};\n',
    };
    const clean = await cruise({
      ...packages,
      'src/connectors/x.ts': "import { z } from 'zod';\nexport const x = z;\n",
    });
    expect(clean.ok, clean.output).toBe(true);
    const seeded = await cruise({
      ...packages,
      'src/connectors/x.ts': "import { z } from '@hono/zod-openapi';\nexport const x = z;\n",
    });
    expect(seeded.ok).toBe(false);
    expect(seeded.output).toContain('connectors-speak-zod');
  });

  it('the dashboard imports only itself, the generated client types and its browser packages', async () => {
    const tree = {
      'examples/api-types.ts': 'export interface paths {}\n',
      'node_modules/preact/package.json': '{ "name": "preact", "main": "index.js" }\n',
      'node_modules/preact/index.js': 'export const h = 1;\n',
      'node_modules/hono/package.json': '{ "name": "hono", "main": "index.js" }\n',
      'node_modules/hono/index.js': 'export const Hono = 1;\n',
      'src/lib/money.ts': 'export const money = 1;\n',
      'dashboard/src/ok.ts':
        "import type { paths } from '../../examples/api-types.ts';\nimport { h } from 'preact';\nexport type P = paths;\nexport const x = h;\n",
    };
    const clean = await cruise(tree, ['dashboard']);
    expect(clean.ok, clean.output).toBe(true);
    for (const seeded of [
      "import { money } from '../../src/lib/money.ts';\nexport const s = money;\n",
      "import { Hono } from 'hono';\nexport const s = Hono;\n",
    ]) {
      const result = await cruise({ ...tree, 'dashboard/src/seeded.ts': seeded }, ['dashboard']);
      expect(result.ok, seeded).toBe(false);
      expect(result.output).toContain('dashboard-is-an-api-client');
    }
  });
});
