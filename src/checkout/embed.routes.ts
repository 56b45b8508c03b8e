import { authOf, type Permission } from '../auth/auth.middleware';
import { mount, newRouter, type AppMiddleware, type AppRouter } from '../http/context';
import { embedApi } from './embed.api';
import { parseEmbedOrigins, type EmbedService } from './embed.service';

/** GET /v1/embed (read) and PUT /v1/embed (create_invoice, as the other settings of what payers and callbacks see). */
export function embedRoutes(deps: { embed: EmbedService; testnet: boolean; authenticate: (permission: Permission | null) => AppMiddleware }): AppRouter {
  const r = newRouter();
  mount(r, embedApi.get, deps.authenticate('read'), async (ctx) => {
    ctx.body = { allowed_origins: await deps.embed.get(authOf(ctx).accountId) };
  });
  mount(r, embedApi.set, deps.authenticate('create_invoice'), async (ctx) => {
    const origins = parseEmbedOrigins(ctx.state.body, deps.testnet);
    ctx.body = { allowed_origins: await deps.embed.set(authOf(ctx).accountId, origins) };
  });
  return r;
}
