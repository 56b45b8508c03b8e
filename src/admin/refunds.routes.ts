import type { RefundStatus } from '../db/entities/refund';
import { newRouter, type AppRouter } from '../http/context';
import { pathId } from '../http/path-id';
import type { RefundService } from '../refunds/refund.service';
import { REFUND_STATUSES } from '../refunds/refund.state';
import { validationError } from '../shared/errors';
import { memberActor } from './actor';

/** `coinkeep refunds list|show|cancel` (PRODUCT §16): members read, and any member cancels with a two-factor code. */
export function refundsAdminRoutes(refunds: RefundService): AppRouter {
  const r = newRouter('/admin/accounts/:id');
  r.get('/refunds', async (ctx) => {
    const status = ctx.query.status;
    if (status !== undefined && !REFUND_STATUSES.includes(status as RefundStatus))
      throw validationError('status', `status must be one of ${REFUND_STATUSES.join(', ')}`);
    ctx.body = { items: await refunds.listForMember(ctx.params.id!, memberActor(ctx.query), status as RefundStatus | undefined) };
  });
  r.get('/refunds/:rid', async (ctx) => {
    ctx.body = await refunds.getForMember(ctx.params.id!, memberActor(ctx.query), pathId(ctx.params.rid, 'refund'));
  });
  r.post('/refunds/:rid/cancel', async (ctx) => {
    ctx.body = await refunds.cancelForMember(ctx.params.id!, pathId(ctx.params.rid, 'refund'), memberActor(ctx.state.body));
  });
  return r;
}
