// Runs examples/merchant-flow.ts as a merchant would (`node examples/merchant-flow.ts`, BASE_URL set)
// against the test server: log in, API key, sandbox QR method, link, QR payment, recovery after a lost
// answer, test-helper approval, partial and full refund, every webhook received and verified, the same
// events at an account webhook endpoint (registered and pinged first) verified with its own secret, and the
// catch-up through GET /v1/events. It exits 0 only when all of it held.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect, inject, it } from 'vitest';

const SCRIPT = join(import.meta.dirname, '..', 'examples', 'merchant-flow.ts');

function run(env: Record<string, string>) {
  return new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [SCRIPT], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

it('the example merchant flow completes against the local server, webhooks verified', async () => {
  const { code, output } = await run({
    BASE_URL: inject('baseUrl'),
    ADMIN_EMAIL: inject('adminEmail'),
    ADMIN_PASSWORD: inject('adminPassword'),
  });
  expect(output).not.toContain('merchant-flow failed');
  expect(code, output).toBe(0);
  expect(output).toContain(
    'payment.pending, payment.approved, payment.refunded:partially_refunded, payment.refunded:refunded',
  );
  expect(output).toMatch(/merchant-flow: 4 events listed, each delivered/);
  expect(output).toMatch(
    /merchant-flow: webhook endpoint we_[0-9a-z]+ \(\*\) registered; ping verified \(204 in \d+ ms\)/,
  );
  expect(output).toMatch(
    /merchant-flow: webhook endpoint received and verified with its own secret: (payment\.[a-z_:]+(, )?){4}; each event listed with 2 deliveries/,
  );
  expect(output).toMatch(
    /merchant-flow: recovered payment pay_[0-9a-z]+ \(pending\) after a lost answer, from the conflict's payment_id/,
  );
  expect(output).toMatch(
    /merchant-flow: caught up with GET \/v1\/events: 4 events of the payment since \S+, 0 not received by webhook; payment refunded/,
  );
  expect(output).toMatch(/merchant-flow: done: \{"paymentId":"pay_[0-9a-z]+","events":4,"webhooks":\d+\}/);
});
