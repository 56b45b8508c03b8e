import { newRouter, type AppMiddleware, type AppRouter } from '../http/context';
import { authOf, type Permission } from './auth.middleware';
import type { KeyService } from './key.service';

/** GET /v1/account/api-keys (permission read, PRODUCT §5). */
export function accountRoutes(keys: KeyService, authenticate: (p: Permission | null) => AppMiddleware): AppRouter {
  const r = newRouter('/v1');
  r.get('/account/api-keys', authenticate('read'), async (ctx) => {
    ctx.body = { items: await keys.list(authOf(ctx).accountId) };
  });
  return r;
}
