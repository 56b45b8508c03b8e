import test from 'ava';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from '../../../src/http/app';
import { newRouter, type AppRouter } from '../../../src/http/context';
import { silentLogger } from '../../../src/shared/logger';

/** Routers that say which one answered (and with which parameters). */
function routers(): AppRouter[] {
  const answer = (name: string) => (ctx: { params?: Record<string, string>; body: unknown }) => {
    ctx.body = { by: name, params: ctx.params ?? {} };
  };
  const things = newRouter();
  things.get('/v1/things', answer('things'));
  things.get('/v1/things/:id', answer('thing'));
  const early = newRouter();
  early.get('/:section/special', answer('early, any path'));
  const later = newRouter();
  later.post('/v1/things', answer('later, same key'));
  later.get('/v1/things/:id/parts', answer('parts'));
  const admin = newRouter('/admin/accounts/:account');
  admin.get('/keys', answer('admin'));
  const health = newRouter();
  health.get('/healthz', answer('health'));
  return [early, things, later, admin, health];
}

async function serve(t: import('ava').ExecutionContext) {
  const app = createApp({ logger: silentLogger, trustProxy: 0, routers: routers() });
  const server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return async (path: string, method = 'GET') => {
    const res = await fetch(base + path, { method });
    return { status: res.status, body: (await res.json()) as { by?: string; params?: Record<string, string>; error?: { code: string } } };
  };
}

test("each request reaches the router with its route, whatever the case or trailing slash, in the routers' order", async (t) => {
  const call = await serve(t);
  t.like(await call('/v1/things'), { status: 200, body: { by: 'things' } });
  t.like(await call('/V1/Things/'), { status: 200, body: { by: 'things' } });
  t.like(await call('/v1/things/abc'), { status: 200, body: { by: 'thing', params: { id: 'abc' } } });
  t.like(await call('/v1/things/abc/parts'), { status: 200, body: { by: 'parts', params: { id: 'abc' } } });
  t.like(await call('/v1/things', 'POST'), { status: 200, body: { by: 'later, same key' } });
  t.like(await call('/admin/accounts/acc-1/keys'), { status: 200, body: { by: 'admin', params: { account: 'acc-1' } } });
  t.like(await call('/healthz'), { status: 200, body: { by: 'health' } });
  // A router whose route starts with a parameter sees every request, before the routers after it.
  t.like(await call('/v1/special'), { status: 200, body: { by: 'early, any path' } });
  t.like(await call('/things/special'), { status: 200, body: { by: 'early, any path' } });
});

test('a path no router has, or a method its router lacks, is 404 not_found', async (t) => {
  const call = await serve(t);
  for (const [path, method] of [
    ['/v1/nothing', 'GET'],
    ['/', 'GET'],
    ['/v1', 'GET'],
    ['/healthz/more', 'GET'],
    ['/v1/things/abc', 'POST'],
    ['//v1//things', 'GET'],
  ] as const) {
    const res = await call(path, method);
    t.is(res.status, 404, `${method} ${path}`);
    t.is(res.body.error?.code, 'not_found', `${method} ${path}`);
  }
});
