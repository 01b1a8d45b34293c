import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, inject, it } from 'vitest';

/**
 * The dashboard's first load stays within its budget: at most 60 KB (60,000 bytes) of script and style,
 * gzipped, measured on what the server serves for /dashboard (docs/dashboard.md, "Bundle size").
 */
const BUDGET_BYTES = 60_000;
const base = inject('baseUrl');

describe('the dashboard’s first load', () => {
  it(`is at most ${BUDGET_BYTES} bytes of script and style, gzipped`, async () => {
    const page = await (await fetch(`${base}/dashboard`)).text();
    const files = [...page.matchAll(/<(?:script[^>]*\bsrc|link[^>]*rel="stylesheet"[^>]*\bhref)="([^"]+)"/g)].map(
      (match) => match[1]!,
    );
    expect(files.filter((file) => file.endsWith('.js'))).toHaveLength(1);
    expect(files.filter((file) => file.endsWith('.css'))).toHaveLength(1);
    let gzipped = 0;
    for (const file of files) {
      const res = await fetch(`${base}${file}`);
      expect(res.status, file).toBe(200);
      gzipped += gzipSync(Buffer.from(await res.arrayBuffer()), { level: 9 }).length;
    }
    console.log(`dashboard first load: ${gzipped} bytes of script and style, gzipped (budget ${BUDGET_BYTES})`);
    expect(gzipped).toBeGreaterThan(0);
    expect(gzipped).toBeLessThanOrEqual(BUDGET_BYTES);
  });

  it('is the whole app: no other script is built that the first load would not count', () => {
    const built = readdirSync(join(import.meta.dirname, '..', 'public', 'dashboard', 'assets'));
    expect(built.filter((file) => file.endsWith('.js'))).toHaveLength(1);
  });
});
