import type { SensitiveLimiter } from '../auth/sensitive-limiter';
import { custodyAdminRoutes } from '../admin/custody.routes';
import type { Catalog } from '../catalog/coins';
import type { Config } from '../config/schema';
import { CustodyService } from '../custody/custody.service';
import type { Store } from '../db/store';
import { forwardToColdStorageJob } from '../jobs/forward-to-cold-storage.job';
import type { MoneyMovement } from '../money/money-movement';
import type { Clock } from '../shared/clock';
import type { Logger } from '../shared/logger';
import type { TeamService } from '../team/team.service';
import type { WithdrawalService } from '../withdrawals/withdrawal.service';
import type { DaemonModule } from './module';

export interface CustodyWiringDeps {
  config: Config;
  store: Store;
  catalog: Catalog;
  withdrawals: WithdrawalService;
  money: MoneyMovement;
  team: TeamService;
  limiter: SensitiveLimiter;
  clock: Clock;
  logger: Logger;
}

/** Cold storage wired (PRODUCT §18): the rules' admin routes and the forwarding job. */
export function createCustody(deps: CustodyWiringDeps) {
  const service = new CustodyService({
    store: deps.store,
    catalog: deps.catalog,
    withdrawals: deps.withdrawals,
    money: deps.money,
    team: deps.team,
    limit: (subjects) => deps.limiter.check(subjects),
    clock: deps.clock,
    logger: deps.logger.child({ component: 'custody' }),
  });
  const module: DaemonModule = {
    adminRoutes: [custodyAdminRoutes(service)],
    jobs: [{ job: forwardToColdStorageJob(service, deps.config.custody.interval_seconds), runAtStart: false }],
  };
  return { module, service };
}
