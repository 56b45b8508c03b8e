import { refundsAdminRoutes } from '../admin/refunds.routes';
import type { KeyService } from '../auth/key.service';
import type { Catalog } from '../catalog/coins';
import type { Config } from '../config/schema';
import type { Sealer } from '../db/seal';
import type { Store } from '../db/store';
import type { Outbox } from '../events/outbox';
import type { RouteGuards } from '../http/context';
import { expireRefundLinksJob } from '../jobs/expire-refund-links.job';
import { refundRoutes } from '../refunds/refund.routes';
import { RefundService } from '../refunds/refund.service';
import type { Clock } from '../shared/clock';
import type { Logger } from '../shared/logger';
import type { StrayService } from '../strays/stray.service';
import type { TeamService } from '../team/team.service';
import type { WithdrawalService } from '../withdrawals/withdrawal.service';
import type { DaemonModule } from './module';

export interface RefundsDeps {
  config: Config;
  store: Store;
  catalog: Catalog;
  withdrawals: WithdrawalService;
  team: TeamService;
  strays: StrayService;
  outbox: Outbox;
  sealer: Sealer;
  keys: KeyService;
  clock: Clock;
  logger: Logger;
  guards: RouteGuards;
}

/** Refunds wired (PRODUCT §16): the service following the withdrawal service, its API and admin routes and the link expiry job. */
export function createRefunds(deps: RefundsDeps) {
  const service = new RefundService({
    store: deps.store,
    catalog: deps.catalog,
    withdrawals: deps.withdrawals,
    team: deps.team,
    strays: deps.strays,
    outbox: deps.outbox,
    sealer: deps.sealer,
    clock: deps.clock,
    baseUrl: deps.config.base_url,
    linkTtlHours: deps.config.refunds.link_ttl_hours,
    chains: deps.config.chains,
  });
  const module: DaemonModule = {
    routes: [refundRoutes({ refunds: service, keys: deps.keys, guards: deps.guards, clock: deps.clock, logger: deps.logger })],
    adminRoutes: [refundsAdminRoutes(service)],
    jobs: [{ job: expireRefundLinksJob(service), runAtStart: true }],
  };
  return { module, service };
}
