import type { KeyService } from '../auth/key.service';
import { newRouter, type AppContext, type AppRouter } from '../http/context';
import { validationError } from '../shared/errors';

const actorOf = (ctx: AppContext) => {
  const { as, otp } = ctx.state.body;
  if (typeof as !== 'string' || as === '') throw validationError('as', 'name the member you act as (--as EMAIL)');
  if (otp !== undefined && typeof otp !== 'string') throw validationError('otp', 'otp must be a string');
  return { email: as, otp: otp === '' ? undefined : otp };
};

/** `coinkeep keys ...` and `coinkeep withdraw-requests ...`. */
export function keysAdminRoutes(keys: KeyService): AppRouter {
  const r = newRouter('/admin/accounts/:account');
  r.get('/keys', async (ctx) => {
    ctx.body = { items: await keys.list(ctx.params.account!) };
  });
  r.post('/keys', async (ctx) => {
    ctx.status = 201;
    ctx.body = await keys.create(ctx.params.account!, actorOf(ctx), ctx.state.body);
  });
  r.get('/keys/:key', async (ctx) => {
    ctx.body = { key: await keys.show(ctx.params.account!, ctx.params.key!) };
  });
  const actions = {
    rotate: keys.rotate,
    disable: keys.disable,
    enable: keys.enable,
    revoke: keys.revoke,
    'require-rotation': keys.requireRotation,
  } as const;
  for (const [name, fn] of Object.entries(actions)) {
    r.post(`/keys/:key/${name}`, async (ctx) => {
      ctx.body = await fn.call(keys, ctx.params.account!, ctx.params.key!, actorOf(ctx));
    });
  }
  r.post('/keys/:key/update', async (ctx) => {
    ctx.body = await keys.update(ctx.params.account!, ctx.params.key!, actorOf(ctx), (ctx.state.body.changes ?? {}) as Record<string, unknown>);
  });
  r.get('/withdraw-requests', async (ctx) => {
    ctx.body = { items: await keys.withdrawRequests(ctx.params.account!) };
  });
  r.post('/withdraw-requests/:id/approve', async (ctx) => {
    ctx.body = await keys.approveRequest(ctx.params.account!, ctx.params.id!, actorOf(ctx));
  });
  r.post('/withdraw-requests/:id/reject', async (ctx) => {
    ctx.body = await keys.rejectRequest(ctx.params.account!, ctx.params.id!, actorOf(ctx));
  });
  return r;
}
