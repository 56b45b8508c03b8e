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
import { DepositHandler } from '../static-addresses/deposit.handler';
import { staticAddressRoutes } from '../static-addresses/static-address.routes';
import { StaticAddressService } from '../static-addresses/static-address.service';
import { archiveStaticAddressesJob, mergeAddressSearchJob } from '../jobs/archive-static-addresses.job';
import type { DaemonModule } from './module';

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

/**
 * Static addresses wired: the service, its API routes, the deposit handler, the automatic archive
 * job and, on SQLite, the address search index's upkeep.
 */
export function createStaticAddresses(deps: StaticAddressesDeps) {
  const service = new StaticAddressService({ ...deps, archived: new ArchivedAddresses(deps.watched) });
  const module: DaemonModule = {
    routes: [staticAddressRoutes({ ...deps, addresses: service })],
    jobs: [
      { job: archiveStaticAddressesJob(service, deps.config.static_addresses.archive_after_days), runAtStart: true },
      ...(deps.store.dialect === 'sqlite' ? [{ job: mergeAddressSearchJob(service) }] : []),
    ],
    transfers: [{ purposes: ['static'], direction: 'incoming', handler: new DepositHandler({ addresses: service, money: deps.money }) }],
  };
  return { module, service };
}
