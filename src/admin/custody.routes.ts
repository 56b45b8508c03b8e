import type { CustodyService } from '../custody/custody.service';
import { newRouter, type AppRouter } from '../http/context';
import { memberActor } from './actor';

/** `coinkeep custody list|set|remove` (PRODUCT §18): members read; owners and admins change, with a two-factor code. */
export function custodyAdminRoutes(custody: CustodyService): AppRouter {
  const r = newRouter('/admin/accounts/:id');
  r.get('/custody', async (ctx) => {
    ctx.body = { items: await custody.list(ctx.params.id!, memberActor(ctx.query)) };
  });
  r.post('/custody', async (ctx) => {
    ctx.body = await custody.set(ctx.params.id!, memberActor(ctx.state.body), ctx.state.body);
  });
  r.post('/custody/remove', async (ctx) => {
    ctx.body = await custody.remove(ctx.params.id!, memberActor(ctx.state.body), ctx.state.body);
  });
  return r;
}
