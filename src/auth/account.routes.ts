import { mount, newRouter, type AppMiddleware, type AppRouter } from '../http/context';
import { parsePageRequest, toPage } from '../shared/pagination';
import { queryEnum } from '../shared/query';
import { authOf, type Permission } from './auth.middleware';
import { presentKey, type KeyService } from './key.service';

import { accountApi, KEY_STATUSES } from './account.api';

/** GET /v1/account/api-keys (permission read, PRODUCT §5): a keyset page, newest first, `?status=` filter. */
export function accountRoutes(keys: KeyService, authenticate: (p: Permission | null) => AppMiddleware): AppRouter {
  const r = newRouter();
  mount(r, accountApi.apiKeys, authenticate('read'), async (ctx) => {
    const status = queryEnum(ctx.query, 'status', KEY_STATUSES);
    const page = parsePageRequest(ctx.query, { status });
    const rows = await keys.listPage(authOf(ctx).accountId, { status }, page);
    ctx.body = toPage(rows, page, presentKey);
  });
  return r;
}
