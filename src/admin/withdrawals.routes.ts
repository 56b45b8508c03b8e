import { newRouter, type AppRouter } from '../http/context';
import { pathId } from '../http/path-id';
import { validationError } from '../shared/errors';
import type { WithdrawalService } from '../withdrawals/withdrawal.service';
import type { WhitelistService } from '../withdrawals/whitelist.service';
import { WITHDRAWAL_STATUSES } from '../withdrawals/withdrawal.state';
import type { WithdrawalStatus } from '../db/entities/withdrawals';
import { memberActor } from './actor';

/** `coinkeep withdrawals` and `coinkeep whitelist`: members read and cancel, owners and admins decide and change. */
export function withdrawalsAdminRoutes(withdrawals: WithdrawalService, whitelist: WhitelistService): AppRouter {
  const r = newRouter('/admin/accounts/:id');
  r.get('/withdrawals', async (ctx) => {
    const status = ctx.query.status;
    if (status !== undefined && !WITHDRAWAL_STATUSES.includes(status as WithdrawalStatus))
      throw validationError('status', `status must be one of ${WITHDRAWAL_STATUSES.join(', ')}`);
    ctx.body = { items: await withdrawals.listForMember(ctx.params.id!, memberActor(ctx.query), status as WithdrawalStatus | undefined) };
  });
  r.get('/withdrawals/:wid', async (ctx) => {
    ctx.body = await withdrawals.getForMember(ctx.params.id!, memberActor(ctx.query), pathId(ctx.params.wid, 'withdrawal'));
  });
  for (const decision of ['approve', 'reject'] as const) {
    r.post(`/withdrawals/:wid/${decision}`, async (ctx) => {
      ctx.body = await withdrawals.decide(ctx.params.id!, pathId(ctx.params.wid, 'withdrawal'), memberActor(ctx.state.body), decision);
    });
  }
  r.post('/withdrawals/:wid/cancel', async (ctx) => {
    ctx.body = await withdrawals.cancelForMember(ctx.params.id!, pathId(ctx.params.wid, 'withdrawal'), memberActor(ctx.state.body));
  });
  r.get('/whitelist', async (ctx) => {
    ctx.body = { items: await whitelist.list(ctx.params.id!, memberActor(ctx.query)) };
  });
  r.post('/whitelist', async (ctx) => {
    ctx.status = 201;
    ctx.body = await whitelist.add(ctx.params.id!, memberActor(ctx.state.body), ctx.state.body);
  });
  r.post('/whitelist/:eid/remove', async (ctx) => {
    ctx.body = await whitelist.remove(ctx.params.id!, memberActor(ctx.state.body), pathId(ctx.params.eid, 'whitelist entry'));
  });
  return r;
}
