import type { ParsedUrlQuery } from 'node:querystring';
import { authOf } from '../auth/auth.middleware';
import { mount, newRouter, type AppRouter, type RouteGuards } from '../http/context';
import { pathId } from '../http/path-id';
import { parsePageRequest } from '../shared/pagination';
import { queryEnum, queryString, queryUuid } from '../shared/query';
import { validationError } from '../shared/errors';
import { strayApi } from './stray.api';
import type { StrayFilters, StrayService } from './stray.service';
import { STRAY_STATUSES } from './stray.state';

export interface StrayRouteDeps {
  strays: StrayService;
  guards: RouteGuards;
}

const NETWORK_MAX = 64;

export function parseStrayFilters(q: ParsedUrlQuery): StrayFilters {
  const network = queryString(q, 'network');
  if (network !== undefined && (network.length === 0 || network.length > NETWORK_MAX))
    throw validationError('network', `network must be 1 to ${NETWORK_MAX} characters`);
  return { status: queryEnum(q, 'status', STRAY_STATUSES), network, invoice_id: queryUuid(q, 'invoice_id') };
}

/** GET /v1/strays, GET /v1/strays/{id}, POST /v1/strays/{id}/credit (its /refund is a refund's: refund.routes.ts). */
export function strayRoutes(deps: StrayRouteDeps): AppRouter {
  const r = newRouter();
  const { strays } = deps;
  const idOf = (raw: string | undefined) => pathId(raw, 'stray payment');

  mount(r, strayApi.list, deps.guards, async (ctx) => {
    const filters = parseStrayFilters(ctx.query);
    ctx.body = await strays.page(authOf(ctx).accountId, filters, parsePageRequest(ctx.query, { list: 'strays', ...filters }));
  });

  mount(r, strayApi.get, deps.guards, async (ctx) => {
    ctx.body = await strays.get(authOf(ctx).accountId, idOf(ctx.params.id));
  });

  mount(r, strayApi.credit, deps.guards, async (ctx) => {
    ctx.body = await strays.credit(authOf(ctx).accountId, idOf(ctx.params.id));
  });

  return r;
}
