import { applyD1Migrations } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterAll, expect, vi } from 'vitest';
import { conformanceMismatches } from './helpers/conformance.ts';
import { findLeaks, recordLogLine } from './helpers/leak-scan.ts';

// Every test file starts from the migrated schemas, control and both shards (a no-op when already applied).
await applyD1Migrations(env.DB, env.TEST_CONTROL_MIGRATIONS);
await Promise.all(
  [env.SHARD_0, env.SHARD_1].map((shard) => applyD1Migrations(shard, env.TEST_SHARD_MIGRATIONS, 'd1_shard_migrations')),
);

// The Worker runs in the tests' isolate, so its log lines pass through this console.
for (const level of ['log', 'info', 'warn', 'error'] as const) {
  const original = console[level].bind(console);
  vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
    recordLogLine(args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' '));
    original(...args);
  });
}

// No secret used by this file may appear in any response or log line but the one that issued it.
afterAll(() => {
  expect(findLeaks()).toEqual([]);
});

// Every response this file received through `call` matches the served /openapi.json: route described,
// status declared, body valid against the declared schema (test/helpers/conformance.ts).
afterAll(() => {
  expect(conformanceMismatches()).toEqual([]);
});
