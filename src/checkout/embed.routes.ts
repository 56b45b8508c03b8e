import { authOf } from '../auth/auth.middleware';
import { mount, newRouter, type AppRouter, type RouteGuards } from '../http/context';
import { embedApi } from './embed.api';
import { parseEmbedOrigins, type EmbedService } from './embed.service';

/** GET /v1/embed (read) and PUT /v1/embed (create_invoice, as the other settings of what payers and callbacks see). */
export function embedRoutes(deps: { embed: EmbedService; testnet: boolean; guards: RouteGuards }): AppRouter {
  const r = newRouter();
  mount(r, embedApi.get, deps.guards, async (ctx) => {
    ctx.body = { allowed_origins: await deps.embed.get(authOf(ctx).accountId) };
  });
  mount(r, embedApi.set, deps.guards, async (ctx) => {
    const origins = parseEmbedOrigins(ctx.state.body, deps.testnet);
    ctx.body = { allowed_origins: await deps.embed.set(authOf(ctx).accountId, origins) };
  });
  return r;
}
