import { newRouter, type AppRouter } from './context';

/** Liveness: answers once the daemon is serving. */
export function healthRoutes(): AppRouter {
  const r = newRouter();
  r.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  return r;
}
