import type { Catalog } from '../catalog/coins';
import type { Store } from '../db/store';
import type { Outbox } from '../events/outbox';
import type { RouteGuards } from '../http/context';
import type { MoneyMovement } from '../money/money-movement';
import type { Clock } from '../shared/clock';
import { StrayHandler } from '../strays/stray.handler';
import { strayRoutes } from '../strays/stray.routes';
import { StrayService } from '../strays/stray.service';
import type { DaemonModule } from './module';

export interface StraysDeps {
  store: Store;
  catalog: Catalog;
  money: MoneyMovement;
  outbox: Outbox;
  clock: Clock;
  guards: RouteGuards;
}

/** Stray payments wired (PRODUCT §17): the service, its API routes and the handler of `stray` transfers. */
export function createStrays(deps: StraysDeps) {
  const service = new StrayService(deps);
  const module: DaemonModule = {
    routes: [strayRoutes({ strays: service, guards: deps.guards })],
    transfers: [{ purposes: ['stray'], direction: 'incoming', handler: new StrayHandler(service) }],
  };
  return { module, service };
}
