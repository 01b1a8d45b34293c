import { describe, expect, it } from 'vitest';
import { call, createKey, seedSession, TEST_PASSWORD } from '../helpers/api.ts';
import { isTracked, LeakScanner, recordedCounts } from '../helpers/leak-scan.ts';

// test/setup.ts runs the suite scanner after every file; these tests show that it can fail, and that
// the secrets of a real flow are in fact tracked (a scan that tracks nothing would pass vacuously).
describe('the leak scanner', () => {
  it('allows a secret only in the response that issued it', () => {
    const scan = new LeakScanner();
    const issuing = scan.recordResponse('POST /v1/account/api-keys', 201, '{"data":{"secret":"sk_test_abcdefgh"}}');
    scan.trackSecret('api_key_secret', 'sk_test_abcdefgh', issuing);
    expect(scan.findLeaks()).toEqual([]);
    scan.recordResponse('GET /v1/account/api-keys', 200, '{"data":[{"prefix":"sk_test_abcd"}]}');
    expect(scan.findLeaks()).toEqual([]);
    scan.recordResponse('GET /v1/oops', 500, 'the key was sk_test_abcdefgh');
    expect(scan.findLeaks()).toEqual([{ kind: 'api_key_secret', where: 'response #3 GET /v1/oops (500)' }]);
  });

  it('finds a password in any response or log line', () => {
    const scan = new LeakScanner();
    scan.trackSecret('password', 'correct-horse-battery');
    scan.recordResponse('POST /v1/auth/login', 401, '{"error":{"code":"invalid_credentials"}}');
    expect(scan.findLeaks()).toEqual([]);
    scan.recordLogLine('{"event":"login","password":"correct-horse-battery"}');
    expect(scan.findLeaks()).toEqual([{ kind: 'password', where: 'log line' }]);
  });

  it('tracks the password, refresh token and API key secret of a real flow', async () => {
    const before = recordedCounts();
    const session = await seedSession();
    const key = await createKey(session, ['payments:read']);
    const refreshed = await call('POST', '/v1/auth/refresh', { body: { refresh_token: session.refreshToken } });
    expect(refreshed.status).toBe(201);
    expect(isTracked(TEST_PASSWORD)).toBe(true);
    expect(isTracked(session.refreshToken)).toBe(true);
    expect(isTracked(refreshed.body.data.refresh_token)).toBe(true);
    expect(isTracked(key.secret)).toBe(true);
    expect(recordedCounts().responses).toBeGreaterThan(before.responses);
  });
});
