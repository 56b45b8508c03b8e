import { newRouter, type AppRouter } from './context';

/** Liveness: answers once the daemon is serving. */
export function healthRoutes(): AppRouter {
  const r = newRouter();
  r.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  return r;
}

export interface Readiness {
  ready: boolean;
  store: boolean;
  chains_waiting: string[];
}

/** Readiness: 200 only when the store answers and every chain is past its first contact; 503 otherwise, saying what waits. */
export function readyRoutes(check: () => Promise<Readiness>): AppRouter {
  const r = newRouter();
  r.get('/readyz', async (ctx) => {
    const state = await check();
    ctx.status = state.ready ? 200 : 503;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { status: state.ready ? 'ready' : 'not_ready', store: state.store ? 'ok' : 'unreachable', chains_waiting: state.chains_waiting };
  });
  return r;
}
