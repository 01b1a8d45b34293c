// examples/api-types.ts is generated from /openapi.json and committed; it must match what the running
// service describes, so the example client cannot drift from the contract. Regenerate with
// `npm run generate:client` (with `npm start` running) when this fails.
import { readFileSync } from 'node:fs';
import { expect, inject, it } from 'vitest';
import { CLIENT_TYPES_PATH, generateClientTypes } from '../scripts/generate-client.ts';

it('examples/api-types.ts is what `npm run generate:client` makes from the live /openapi.json', async () => {
  const res = await fetch(`${inject('baseUrl')}/openapi.json`);
  expect(res.status).toBe(200);
  const generated = await generateClientTypes(await res.json());
  const committed = readFileSync(CLIENT_TYPES_PATH, 'utf8');
  // A plain equality check: the message names the first differing line instead of dumping 3,000 lines.
  if (generated !== committed) {
    const a = committed.split('\n');
    const b = generated.split('\n');
    const line = a.findIndex((text, i) => text !== b[i]);
    const at = line === -1 ? Math.min(a.length, b.length) : line;
    expect.fail(
      `examples/api-types.ts is stale: first difference at line ${at + 1}:\n  committed: ${a[at] ?? '(end)'}\n  generated: ${b[at] ?? '(end)'}\n` +
        'Run `npm start` and `npm run generate:client`, then commit examples/api-types.ts.',
    );
  }
});
