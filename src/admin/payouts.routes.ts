import { newRouter, type AppRouter } from '../http/context';
import { pathId } from '../http/path-id';
import type { PayoutCancels } from '../payouts/payout-cancel';
import { memberActor } from './actor';

/** `coinkeep payouts cancel`: an owner or admin of the paying account, with a code, ends a payout that is not mined (PRODUCT §14). */
export function payoutsAdminRoutes(cancels: PayoutCancels): AppRouter {
  const r = newRouter('/admin/payouts');
  r.post('/:pid/cancel', async (ctx) => {
    ctx.body = { payout: await cancels.request(pathId(ctx.params.pid, 'payout'), memberActor(ctx.state.body)) };
  });
  return r;
}
