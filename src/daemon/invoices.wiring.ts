import type { Catalog } from '../catalog/coins';
import type { Config } from '../config/schema';
import type { Store } from '../db/store';
import type { Outbox } from '../events/outbox';
import type { RefundPageSource } from '../refunds/refund-page.source';
import type { RouteGuards } from '../http/context';
import { expireInvoicesJob } from '../jobs/expire-invoices.job';
import type { MoneyMovement } from '../money/money-movement';
import type { RateEngine } from '../rates/engine';
import type { Clock } from '../shared/clock';
import { unavailable } from '../shared/errors';
import type { Logger } from '../shared/logger';
import type { TargetGuard } from '../shared/target-guard';
import type { AddressAllocator } from '../wallet/allocator';
import { invoiceRoutes } from '../invoices/invoice.routes';
import { InvoiceService } from '../invoices/invoice.service';
import { InvoicePresenter } from '../invoices/invoice.view';
import { InvoicePaymentHandler } from '../invoices/payment.handler';
import { TokenBuckets } from '../auth/token-bucket';
import { checkoutRoutes } from '../checkout/checkout.routes';
import { CheckoutService } from '../checkout/checkout.service';
import { StatusStreams } from '../checkout/status-stream';
import { embedRoutes } from '../checkout/embed.routes';
import { EmbedService } from '../checkout/embed.service';
import type { DaemonModule } from './module';

export interface InvoicesDeps {
  config: Config;
  store: Store;
  catalog: Catalog;
  rates: RateEngine;
  /** The wallet's allocator; without one, invoices with a coin answer 503 unavailable. */
  allocator?: AddressAllocator;
  outbox: Outbox;
  money: MoneyMovement;
  clock: Clock;
  logger: Logger;
  /** Checks an invoice's webhook_url. */
  guard: TargetGuard;
  /** The auth and Idempotency-Key guards the routes are mounted with. */
  guards: RouteGuards;
  /**
   * The refunds' payer pages (PRODUCT §16), served under /pay/{id}/refund/{token}: the refund
   * service supplies it; without it those routes answer 404.
   */
  refundPages?: RefundPageSource;
  /** The daemon's shutdown signal: open status streams end on it (the API server's close waits for open requests). */
  signal?: AbortSignal;
}

/** Invoices wired: the service, its API routes and the payment page, the payment handler, the expiry job; invoices due expire at start. */
export async function createInvoices(deps: InvoicesDeps) {
  const presenter = new InvoicePresenter(deps.catalog, deps.config.base_url);
  const service = new InvoiceService({ ...deps, allocator: deps.allocator ?? noWallet, presenter });
  const payments = new InvoicePaymentHandler({ invoices: service, money: deps.money });
  const routes = invoiceRoutes({
    invoices: service,
    catalog: deps.catalog,
    guard: deps.guard,
    testnet: deps.config.network === 'testnet',
    guards: deps.guards,
    clock: deps.clock,
    logger: deps.logger,
  });
  const embed = new EmbedService(deps.store, deps.clock);
  const checkout = new CheckoutService({
    store: deps.store,
    catalog: deps.catalog,
    rates: deps.rates,
    invoices: service,
    chains: deps.config.chains,
    clock: deps.clock,
  });
  const streams = new StatusStreams({ changes: service.changes, read: (id) => checkout.fresh(id), now: () => Date.now() });
  deps.signal?.addEventListener('abort', () => streams.close(), { once: true });
  await service.expireDue();
  const module: DaemonModule = {
    routes: [
      routes,
      checkoutRoutes({ checkout, buckets: new TokenBuckets(() => deps.clock.now().getTime()), refundPages: deps.refundPages, streams }),
      embedRoutes({ embed, testnet: deps.config.network === 'testnet', guards: deps.guards }),
    ],
    jobs: [{ job: expireInvoicesJob(service) }],
    transfers: [{ purposes: ['invoice'], direction: 'incoming', handler: payments }],
    close: () => streams.close(),
  };
  return { module, service, presenter };
}

const noWallet: AddressAllocator = {
  allocate: () => Promise.reject(unavailable('deposit addresses cannot be issued now; retry later')),
};
