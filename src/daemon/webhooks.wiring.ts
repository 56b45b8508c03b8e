import type { Config } from '../config/schema';
import type { Sealer } from '../db/seal';
import type { Store } from '../db/store';
import type { Outbox } from '../events/outbox';
import type { RouteGuards } from '../http/context';
import { deliverWebhooksJob } from '../jobs/deliver-webhooks.job';
import type { Clock } from '../shared/clock';
import type { Logger } from '../shared/logger';
import type { Resolver, TargetGuard } from '../shared/target-guard';
import { AttemptStore } from '../webhooks/attempt.store';
import { CallbackSecrets } from '../webhooks/callback-secret';
import { DeliveryService } from '../webhooks/delivery.service';
import { DeliverySigner } from '../webhooks/delivery-signer';
import { DEFAULT_LIMITS, WebhookDispatcher, type DispatcherLimits } from '../webhooks/dispatcher';
import { EndpointService } from '../webhooks/endpoint.service';
import { HttpTransport } from '../webhooks/http-transport';
import { WebhookSecrets } from '../webhooks/secrets';
import { ThreadTransport } from '../webhooks/thread-transport';
import { webhookRoutes } from '../webhooks/webhook.routes';
import { webhooksAdminRoutes } from '../admin/webhooks.routes';
import type { DaemonModule } from './module';

export interface WebhooksDeps {
  config: Config;
  store: Store;
  sealer: Sealer;
  outbox: Outbox;
  clock: Clock;
  logger: Logger;
  /** The auth and Idempotency-Key guards the routes are mounted with. */
  guards: RouteGuards;
  /** The daemon's shutdown signal. */
  signal: AbortSignal;
  /** Checks endpoint URLs, and every attempt's connection when the transport runs on this thread. */
  guard: TargetGuard;
  /** Tests: the DNS resolver the guard was given (DNS rebinding without a DNS server). */
  resolve?: Resolver;
  /** Tests and benchmarks: other concurrency bounds or attempt timeout. */
  limits?: DispatcherLimits;
  timeoutMs?: number;
}

/** Webhooks wired: endpoints, the delivery log, the dispatcher woken by the outbox, and its job; attempts a stop interrupted are taken up again. */
export async function createWebhooks(deps: WebhooksDeps) {
  const secrets = new WebhookSecrets(deps.sealer);
  const callbackSecrets = new CallbackSecrets({ store: deps.store, secrets, clock: deps.clock });
  const limits = deps.limits ?? DEFAULT_LIMITS;
  // On its own thread, unless a test brings its own resolver (a function stays on this thread).
  const { allow_private_targets: allowPrivate, dns } = deps.config.webhooks;
  const transport = deps.resolve
    ? new HttpTransport(deps.guard, { timeoutMs: deps.timeoutMs })
    : new ThreadTransport({ allowPrivate, dns, timeoutMs: deps.timeoutMs, ...limits });
  const attempts = new AttemptStore(deps.store, callbackSecrets);
  const signer = new DeliverySigner({ secrets, callbackSecrets });
  const dispatcher = new WebhookDispatcher({ attempts, signer, transport, clock: deps.clock, logger: deps.logger, signal: deps.signal }, limits);
  await dispatcher.recoverInterrupted();
  deps.outbox.onEmit(() => dispatcher.wake());
  const endpoints = new EndpointService({ store: deps.store, secrets, clock: deps.clock, changed: (id) => dispatcher.endpointChanged(id) });
  const deliveries = new DeliveryService({
    store: deps.store,
    clock: deps.clock,
    outbox: deps.outbox,
    wake: () => dispatcher.rescan(),
    fanOut: () => dispatcher.tick(),
  });
  const module: DaemonModule = {
    routes: [webhookRoutes({ endpoints, deliveries, guard: deps.guard, guards: deps.guards })],
    adminRoutes: [webhooksAdminRoutes({ deliveries, callbackSecrets })],
    jobs: [{ job: deliverWebhooksJob(dispatcher), runAtStart: true }],
    close: () => dispatcher.close(),
  };
  return { module, endpoints, deliveries, callbackSecrets, dispatcher };
}
