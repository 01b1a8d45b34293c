import { exports } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';

describe('smoke', () => {
  it('answers unknown routes in the envelope', async () => {
    const res = await exports.default.fetch('http://api.test/v1/nope');
    expect(res.status).toBe(404);
    const body = await res.json<{ error: { code: string; request_id: string } }>();
    expect(body.error.code).toBe('not_found');
    expect(res.headers.get('x-request-id')).toBe(body.error.request_id);
  });
});
