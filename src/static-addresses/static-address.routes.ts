import { authOf } from '../auth/auth.middleware';
import type { Catalog } from '../catalog/coins';
import type { StaticAddressRow } from '../db/entities/static-address';
import { mount, newRouter, type AppRouter, type RouteGuards } from '../http/context';
import { staticAddressApi } from './static-address.api';
import { pathId } from '../http/path-id';
import { fieldColumns, listHandler, type ExportableList } from '../http/export';
import type { Clock } from '../shared/clock';
import type { Logger } from '../shared/logger';
import { parseCreateStaticAddress, parseStaticAddressFilters, type StaticAddressFilters } from './static-address.request';
import type { StaticAddressService } from './static-address.service';
import { STATIC_ADDRESS_FIELDS, type StaticAddressView } from './static-address.view';

export interface StaticAddressRouteDeps {
  addresses: StaticAddressService;
  catalog: Catalog;
  /** The auth and Idempotency-Key guards `mount` builds each route's from (its declaration says which). */
  guards: RouteGuards;
  clock: Clock;
  logger: Logger;
}

/** POST/GET /v1/addresses, GET /v1/addresses/{id}, POST /v1/addresses/{id}/archive and /restore. */
export function staticAddressRoutes(deps: StaticAddressRouteDeps): AppRouter {
  const r = newRouter();
  const { addresses } = deps;
  const idOf = (raw: string | undefined) => pathId(raw, 'address');

  mount(r, staticAddressApi.create, deps.guards, async (ctx) => {
    const req = parseCreateStaticAddress(ctx.state.body, deps.catalog);
    ctx.status = 201;
    ctx.body = await addresses.create(authOf(ctx).accountId, req);
  });

  const list: ExportableList<StaticAddressFilters, StaticAddressView, StaticAddressRow> = {
    name: 'addresses',
    columns: fieldColumns(STATIC_ADDRESS_FIELDS),
    parseFilters: parseStaticAddressFilters,
    source: addresses,
  };
  mount(r, staticAddressApi.list, deps.guards, listHandler(list, deps));

  mount(r, staticAddressApi.get, deps.guards, async (ctx) => {
    ctx.body = await addresses.get(authOf(ctx).accountId, idOf(ctx.params.id));
  });

  mount(r, staticAddressApi.archive, deps.guards, async (ctx) => {
    ctx.body = await addresses.archive(authOf(ctx).accountId, idOf(ctx.params.id));
  });

  mount(r, staticAddressApi.restore, deps.guards, async (ctx) => {
    ctx.body = await addresses.restore(authOf(ctx).accountId, idOf(ctx.params.id));
  });

  return r;
}
