import type { Config } from '../config/schema';
import { newRouter, type AppRouter } from '../http/context';
import type { RateEngine } from '../rates/engine';

/** `coinkeep status`: what runs, where, since when. Chains add their rows with the chain issues. */
export function statusAdminRoutes(deps: { config: Config; apiUrl: string; startedAt: Date; rates: RateEngine }): AppRouter {
  const r = newRouter('/admin');
  r.get('/status', (ctx) => {
    ctx.body = {
      status: 'running',
      pid: process.pid,
      network: deps.config.network,
      api_url: deps.apiUrl,
      base_url: deps.config.base_url,
      data_dir: deps.config.data_dir,
      database: deps.config.database.url.startsWith('sqlite:') ? 'sqlite' : 'postgres',
      started_at: deps.startedAt.toISOString(),
      uptime_seconds: Math.floor(process.uptime()),
      chains: [],
    };
  });
  return r;
}
