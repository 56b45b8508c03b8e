import type { Permission } from '../auth/auth.middleware';
import type { Catalog } from '../catalog/coins';
import type { Config } from '../config/schema';
import type { Store } from '../db/store';
import type { Outbox } from '../events/outbox';
import type { AppMiddleware } from '../http/context';
import { expireInvoicesJob } from '../jobs/expire-invoices.job';
import type { Ledger } from '../ledger/ledger';
import type { RateEngine } from '../rates/engine';
import type { Clock } from '../shared/clock';
import { unavailable } from '../shared/errors';
import type { Logger } from '../shared/logger';
import type { TargetGuard } from '../shared/target-guard';
import type { AddressAllocator } from '../wallet/allocator';
import { invoiceRoutes } from './invoice.routes';
import { InvoiceService } from './invoice.service';
import { InvoicePresenter } from './invoice.view';
import { PaymentSink } from './payment.sink';

export interface InvoicesDeps {
  config: Config;
  store: Store;
  catalog: Catalog;
  rates: RateEngine;
  /** The wallet's allocator; without one, invoices with a coin answer 503 unavailable. */
  allocator?: AddressAllocator;
  outbox: Outbox;
  ledger: Ledger;
  clock: Clock;
  logger: Logger;
  /** Checks an invoice's webhook_url. */
  guard: TargetGuard;
  authenticate: (permission: Permission | null) => AppMiddleware;
  idempotent: AppMiddleware;
}

/** Invoices wired: the service, its API routes, the payment sink for the chain core, the expiry job. */
export function createInvoices(deps: InvoicesDeps) {
  const presenter = new InvoicePresenter(deps.catalog, deps.config.base_url);
  const service = new InvoiceService({ ...deps, allocator: deps.allocator ?? noWallet, presenter });
  const sink = new PaymentSink({ invoices: service, ledger: deps.ledger, catalog: deps.catalog, clock: deps.clock });
  const routes = invoiceRoutes({
    invoices: service,
    catalog: deps.catalog,
    guard: deps.guard,
    testnet: deps.config.network === 'testnet',
    authenticate: deps.authenticate,
    idempotent: deps.idempotent,
    clock: deps.clock,
    logger: deps.logger,
  });
  return { service, presenter, sink, routes, expiryJob: expireInvoicesJob(service) };
}

const noWallet: AddressAllocator = {
  allocate: () => Promise.reject(unavailable('deposit addresses cannot be issued now; retry later')),
};
