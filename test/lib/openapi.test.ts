import { createRoute, z } from '@hono/zod-openapi';
import { describe, expect, it } from 'vitest';
import { appOf } from '../../src/app.ts';
import { handleError } from '../../src/middleware/error-handler.ts';
import { createRouter, jsonContent, operationOf, registerOnOnePath } from '../../src/lib/openapi.ts';

const app = appOf('test');

/** The router (src/lib/openapi.ts): one regular expression per method, and operations sharing one route. */

const Reply = z.object({ handled_by: z.string(), id: z.string(), action: z.string().optional() });

const special = createRoute({
  method: 'post',
  path: '/things/{id}/special',
  request: { params: z.object({ id: z.string() }) },
  responses: { 200: jsonContent(Reply, 'special') },
});
const general = createRoute({
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
  registerOnOnePath(router, [
    (r) => r.openapi(special, (c) => c.json({ handled_by: 'special', id: c.req.valid('param').id }, 200)),
    (r) =>
      r.openapi(general, (c) => {
        const { id, action } = c.req.valid('param');
        return c.json({ handled_by: 'general', id, action }, 200);
      }),
  ]);
  return { router, seen };
}

describe('registerOnOnePath', () => {
  it('hands each request to the operation whose fixed segment its path has, and names that operation', async () => {
    const { router, seen } = thingsRouter();
    const post = (path: string) => router.request(path, { method: 'POST' });
    expect(await (await post('/things/t1/special')).json()).toEqual({ handled_by: 'special', id: 't1' });
    expect(await (await post('/things/t1/open')).json()).toEqual({ handled_by: 'general', id: 't1', action: 'open' });
    // The general operation's own validation refuses what neither declares.
    const refused = await post('/things/t1/other');
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('invalid_request');
    expect((await router.request('/things/t1/special')).status).toBe(404);
    expect(seen).toEqual(['/things/{id}/special', '/things/{id}/{action}', '/things/{id}/{action}', null]);
    // Both are described as declared.
    const paths = Object.keys(
      router.getOpenAPIDocument({ openapi: '3.1.0', info: { title: 't', version: '1' } }).paths,
    );
    expect(paths).toEqual(['/things/{id}/special', '/things/{id}/{action}']);
  });

  it('refuses operations that are not the last one with fixed segments', () => {
    const other = createRoute({ ...special, method: 'get' });
    const longer = createRoute({ ...special, path: '/things/{id}/special/more' });
    const fixedAgainstFixed = createRoute({ ...special, path: '/others/{id}/special' });
    for (const route of [other, longer, fixedAgainstFixed]) {
      expect(() =>
        registerOnOnePath(createRouter(), [
          (r) => r.openapi(route, (c) => c.json({ handled_by: 'x', id: 'x' }, 200)),
          (r) => r.openapi(general, (c) => c.json({ handled_by: 'x', id: 'x' }, 200)),
        ]),
      ).toThrow(/registerOnOnePath/);
    }
    expect(() =>
      registerOnOnePath(createRouter(), [
        (r) => {
          r.openapi(special, (c) => c.json({ handled_by: 'x', id: 'x' }, 200));
          r.openapi({ ...special, path: '/others/{id}' }, (c) => c.json({ handled_by: 'x', id: 'x' }, 200));
        },
      ]),
    ).toThrow(/exactly one operation/);
    expect(() => registerOnOnePath(createRouter(), [() => undefined])).toThrow(/exactly one operation/);
  });
});

describe('the app router', () => {
  it('routes with one regular expression per method, and refuses at registration a path it cannot hold', () => {
    expect(app.router.name).toBe('RegExpRouter');
    const router = createRouter();
    router.openapi(special, (c) => c.json({ handled_by: 'special', id: 'x' }, 200));
    expect(() => router.openapi(general, (c) => c.json({ handled_by: 'general', id: 'x' }, 200))).toThrow(
      '/things/:id/:action',
    );
  });
});
