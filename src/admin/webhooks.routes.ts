import { newRouter, type AppRouter } from '../http/context';
import { pathId } from '../http/path-id';
import { parsePageRequest } from '../shared/pagination';
import { queryTime } from '../shared/query';
import { validationError } from '../shared/errors';
import { parseDeliveryFilters, type DeliveryService } from '../webhooks/delivery.service';
import type { CallbackSecrets } from '../webhooks/callback-secret';

interface Webhooks {
  deliveries: DeliveryService;
  callbackSecrets: CallbackSecrets;
}

/** `coinkeep webhooks deliveries|replay|ping|secret`: the cabinet's webhook actions for an operator. */
export function webhooksAdminRoutes(webhooks: Webhooks): AppRouter {
  const r = newRouter('/admin/accounts/:account/webhooks');
  const { deliveries, callbackSecrets } = webhooks;

  r.get('/deliveries', async (ctx) => {
    const filters = parseDeliveryFilters(ctx.query);
    ctx.body = await deliveries.list(ctx.params.account!, filters, parsePageRequest(ctx.query, { ...filters }));
  });
  r.post('/deliveries/:id/replay', async (ctx) => {
    ctx.body = { delivery: await deliveries.retry(ctx.params.account!, pathId(ctx.params.id!, 'webhook delivery')) };
  });
  r.post('/deliveries/replay-exhausted', async (ctx) => {
    const raw = ctx.state.body.since;
    if (typeof raw !== 'string') throw validationError('since', 'since is required (an RFC 3339 time)');
    const since = queryTime({ since: raw }, 'since')!;
    ctx.body = await deliveries.replayExhausted(ctx.params.account!, since);
  });
  r.post('/endpoints/:id/ping', async (ctx) => {
    const message = ctx.state.body.message ?? 'ping';
    if (typeof message !== 'string' || message.length > 500) throw validationError('message', 'message must be a string of at most 500 characters');
    ctx.body = { delivery: await deliveries.ping(ctx.params.account!, pathId(ctx.params.id!, 'webhook endpoint'), message) };
  });
  r.post('/callback-secret', async (ctx) => {
    ctx.body = { callback_secret: await callbackSecrets.show(ctx.params.account!, ctx.state.body.rotate === true) };
  });
  return r;
}
