import { describe, expect, it } from 'vitest';
import { call, createKey, seedSession } from '../helpers/api.ts';

describe('a first flow', () => {
  it('logs in, creates an API key, and uses it', async () => {
    const admin = await seedSession({ role: 'admin' });
    const me = await call('GET', '/v1/auth/me', { token: admin.accessToken });
    expect(me.status).toBe(200);
    expect(me.body.data.role).toBe('admin');
    const key = await createKey(admin, ['payments:read']);
    expect(key.secret).toMatch(/^sk_test_[A-Za-z0-9_-]{43}$/);
    const list = await call('GET', '/v1/account/api-keys', { token: admin.accessToken });
    expect(list.status).toBe(200);
    expect(list.body.pagination).toEqual({ limit: 50, offset: 0, total: 1 });
    expect(list.text).not.toContain(key.secret);
    const refreshed = await call('POST', '/v1/auth/refresh', { body: { refresh_token: admin.refreshToken } });
    expect(refreshed.status).toBe(201);
    const reuse = await call('POST', '/v1/auth/refresh', { body: { refresh_token: admin.refreshToken } });
    expect(reuse.status).toBe(401);
    const after = await call('POST', '/v1/auth/refresh', {
      body: { refresh_token: refreshed.body.data.refresh_token },
    });
    expect(after.status).toBe(401);
    const spec = await call('GET', '/openapi.json');
    expect(spec.status).toBe(200);
    expect(spec.body.openapi).toBe('3.1.0');
  });
});
