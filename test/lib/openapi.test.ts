import { createRoute, z } from '@hono/zod-openapi';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { appOf } from '../../src/app.ts';
import { handleError } from '../../src/middleware/error-handler.ts';
import { createRouter, jsonContent, openapiPerValue, operationOf } from '../../src/lib/openapi.ts';

const app = appOf('test');

/** The router (src/lib/openapi.ts): a stock OpenAPIHono, and an operation routed once per value of a parameter. */

const Reply = z.object({ handled_by: z.string(), id: z.string(), action: z.string().optional() });

const special = createRoute({
  operationId: 'special',
  method: 'post',
  path: '/things/{id}/special',
  request: { params: z.object({ id: z.string() }) },
  responses: { 200: jsonContent(Reply, 'special') },
});
const general = createRoute({
  operationId: 'general',
  method: 'post',
  path: '/things/{id}/{action}',
  request: { params: z.object({ id: z.string(), action: z.enum(['open', 'close']) }) },
  responses: { 200: jsonContent(Reply, 'general') },
});

function thingsRouter() {
  const router = createRouter();
  const seen: (string | null)[] = [];
  router.use('*', async (c, next) => {
    seen.push(operationOf(c)?.path ?? null);
    await next();
  });
  router.onError(handleError);
  router.openapi(special, (c) => c.json({ handled_by: 'special', id: c.req.valid('param').id }, 200));
  openapiPerValue(router, general, 'action', (c) => {
    const { id, action } = c.req.valid('param');
    return c.json({ handled_by: 'general', id, action }, 200);
  });
  return { router, seen };
}

describe('openapiPerValue', () => {
  it('routes each value apart, beside a fixed segment, names the declared operation and describes it once', async () => {
    const { router, seen } = thingsRouter();
    const post = (path: string) => router.request(path, { method: 'POST' });
    expect(await (await post('/things/t1/special')).json()).toEqual({ handled_by: 'special', id: 't1' });
    expect(await (await post('/things/t1/open')).json()).toEqual({ handled_by: 'general', id: 't1', action: 'open' });
    expect(await (await post('/things/t1/close')).json()).toEqual({ handled_by: 'general', id: 't1', action: 'close' });
    // A value the operation does not declare is no route of it.
    expect((await post('/things/t1/other')).status).toBe(404);
    expect(seen).toEqual(['/things/{id}/special', '/things/{id}/{action}', '/things/{id}/{action}', null]);
    expect(router.router.name).toBe('SmartRouter + RegExpRouter');
    const paths = Object.keys(
      router.getOpenAPIDocument({ openapi: '3.1.0', info: { title: 't', version: '1' } }).paths,
    );
    expect(paths).toEqual(['/things/{id}/special', '/things/{id}/{action}']);
  });

  it('refuses a parameter that is not an enum', () => {
    expect(() =>
      openapiPerValue(createRouter(), general, 'id', (c) => c.json({ handled_by: 'x', id: 'x' }, 200)),
    ).toThrow(/not an enum parameter/);
  });
});

describe('the app router', () => {
  it('routes with one regular expression per method: no route shape sends Hono to its trie router', async () => {
    expect((await app.request('/openapi.json', {}, env)).status).toBe(200);
    expect(app.router.name).toBe('SmartRouter + RegExpRouter');
    // The shape that would: a parameter where another path of the same method has a fixed segment.
    const router = createRouter();
    router.openapi(special, (c) => c.json({ handled_by: 'special', id: 'x' }, 200));
    router.openapi(general, (c) => c.json({ handled_by: 'general', id: 'x' }, 200));
    await router.request('/things/t1/special', { method: 'POST' });
    expect(router.router.name).toBe('SmartRouter + TrieRouter');
  });
});
