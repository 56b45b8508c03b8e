import { mount, newRouter, type AppRouter, type RouteGuards } from '../http/context';
import { parsePageRequest, toPage } from '../shared/pagination';
import { queryEnum } from '../shared/query';
import { authOf } from './auth.middleware';
import { presentKey, type KeyService } from './key.service';

import { accountApi, KEY_STATUSES } from './account.api';

/** GET /v1/account/api-keys (permission read, PRODUCT §5): a keyset page, newest first, `?status=` filter. */
export function accountRoutes(keys: KeyService, guards: RouteGuards): AppRouter {
  const r = newRouter();
  mount(r, accountApi.apiKeys, guards, async (ctx) => {
    const status = queryEnum(ctx.query, 'status', KEY_STATUSES);
    const page = parsePageRequest(ctx.query, { status });
    const rows = await keys.listPage(authOf(ctx).accountId, { status }, page);
    ctx.body = toPage(rows, page, presentKey);
  });
  return r;
}
