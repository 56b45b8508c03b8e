import { authOf } from '../auth/auth.middleware';
import { mount, newRouter, type AppRouter, type RouteGuards } from '../http/context';
import { pathId } from '../http/path-id';
import { parsePageRequest } from '../shared/pagination';
import type { TargetGuard } from '../shared/target-guard';
import { parseDeliveryFilters, type DeliveryService } from './delivery.service';
import { parseCreateEndpoint, parseRotateSecret, parseUpdateEndpoint } from './endpoint.request';
import type { EndpointService } from './endpoint.service';
import { webhookApi } from './webhook.api';

export interface WebhookRouteDeps {
  endpoints: EndpointService;
  deliveries: DeliveryService;
  guard: TargetGuard;
  /** The auth and Idempotency-Key guards `mount` builds each route's from (its declaration says which). */
  guards: RouteGuards;
}

/** The webhook routes of SPEC "Endpoints": read for GET, create_invoice for changes. */
export function webhookRoutes(deps: WebhookRouteDeps): AppRouter {
  const r = newRouter();
  const { endpoints, deliveries } = deps;
  const endpointId = (raw: string) => pathId(raw, 'webhook endpoint');
  const deliveryId = (raw: string) => pathId(raw, 'webhook delivery');

  mount(r, webhookApi.listEndpoints, deps.guards, async (ctx) => {
    ctx.body = await endpoints.list(authOf(ctx).accountId, parsePageRequest(ctx.query, {}));
  });
  mount(r, webhookApi.createEndpoint, deps.guards, async (ctx) => {
    const { accountId } = authOf(ctx);
    const input = await parseCreateEndpoint(ctx.state.body, deps.guard, accountId);
    ctx.status = 201;
    ctx.body = await endpoints.create(accountId, input);
  });
  mount(r, webhookApi.getEndpoint, deps.guards, async (ctx) => {
    ctx.body = await endpoints.get(authOf(ctx).accountId, endpointId(ctx.params.id));
  });
  mount(r, webhookApi.updateEndpoint, deps.guards, async (ctx) => {
    const id = endpointId(ctx.params.id);
    // The id is checked before the body so another account's endpoint is not_found whatever the body.
    const { accountId } = authOf(ctx);
    await endpoints.find(accountId, id);
    ctx.body = await endpoints.update(accountId, id, await parseUpdateEndpoint(ctx.state.body, deps.guard, accountId));
  });
  mount(r, webhookApi.deleteEndpoint, deps.guards, async (ctx) => {
    ctx.body = await endpoints.remove(authOf(ctx).accountId, endpointId(ctx.params.id));
  });
  mount(r, webhookApi.rotateSecret, deps.guards, async (ctx) => {
    const id = endpointId(ctx.params.id);
    await endpoints.find(authOf(ctx).accountId, id);
    ctx.body = await endpoints.rotateSecret(authOf(ctx).accountId, id, parseRotateSecret(ctx.state.body));
  });

  mount(r, webhookApi.listDeliveries, deps.guards, async (ctx) => {
    const filters = parseDeliveryFilters(ctx.query);
    ctx.body = await deliveries.list(authOf(ctx).accountId, filters, parsePageRequest(ctx.query, { ...filters }));
  });
  mount(r, webhookApi.getDelivery, deps.guards, async (ctx) => {
    ctx.body = await deliveries.get(authOf(ctx).accountId, deliveryId(ctx.params.id));
  });
  mount(r, webhookApi.retryDelivery, deps.guards, async (ctx) => {
    ctx.body = await deliveries.retry(authOf(ctx).accountId, deliveryId(ctx.params.id));
  });
  return r;
}
