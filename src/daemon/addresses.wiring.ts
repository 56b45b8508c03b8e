import { ArchivedAddresses } from '../chains/archived-addresses';
import type { WatchedAddresses } from '../chains/watched-addresses';
import type { Catalog } from '../catalog/coins';
import type { Config } from '../config/schema';
import type { Store } from '../db/store';
import type { Outbox } from '../events/outbox';
import type { RouteGuards } from '../http/context';
import type { MoneyMovement } from '../money/money-movement';
import type { Clock } from '../shared/clock';
import type { Logger } from '../shared/logger';
import type { AddressAllocator } from '../wallet/allocator';
import { DepositHandler } from '../addresses/deposit.handler';
import { staticAddressRoutes } from '../addresses/static-address.routes';
import { StaticAddressService } from '../addresses/static-address.service';
import { archiveStaticAddressesJob, mergeAddressSearchJob } from '../jobs/archive-static-addresses.job';

export interface StaticAddressesDeps {
  config: Config;
  store: Store;
  catalog: Catalog;
  allocator: AddressAllocator;
  outbox: Outbox;
  money: MoneyMovement;
  watched: WatchedAddresses;
  clock: Clock;
  logger: Logger;
  /** The auth and Idempotency-Key guards the routes are mounted with. */
  guards: RouteGuards;
}

/** Static addresses wired: the service, its API routes, the deposit handler for the transfer router, the automatic archive job and the search index's upkeep. */
export function createStaticAddresses(deps: StaticAddressesDeps) {
  const service = new StaticAddressService({ ...deps, archived: new ArchivedAddresses(deps.watched) });
  const deposits = new DepositHandler({ addresses: service, money: deps.money });
  const routes = staticAddressRoutes({ ...deps, addresses: service });
  return { service, deposits, routes, archiveJob: archiveStaticAddressesJob(service, deps.config.static_addresses.archive_after_days), searchJob: mergeAddressSearchJob(service) };
}
