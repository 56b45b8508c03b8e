import type { Permission } from '../auth/auth.middleware';
import type { KeyService } from '../auth/key.service';
import type { SensitiveLimiter } from '../auth/sensitive-limiter';
import type { Catalog } from '../catalog/coins';
import type { Config } from '../config/schema';
import type { ChainCore } from '../chains/chain-core';
import type { WatchedAddresses } from '../chains/watched-addresses';
import type { Store } from '../db/store';
import type { Outbox } from '../events/outbox';
import type { AppMiddleware } from '../http/context';
import { expireWithdrawalReviewsJob } from '../jobs/expire-withdrawal-reviews.job';
import { withdrawalsAdminRoutes } from '../admin/withdrawals.routes';
import type { MoneyMovement } from '../money/money-movement';
import type { RateEngine } from '../rates/engine';
import type { Clock } from '../shared/clock';
import type { Logger } from '../shared/logger';
import type { TeamService } from '../team/team.service';
import { withdrawalRoutes } from '../withdrawals/withdrawal.routes';
import { WithdrawalService } from '../withdrawals/withdrawal.service';

export interface WithdrawalsDeps {
  config: Config;
  store: Store;
  catalog: Catalog;
  rates: RateEngine;
  chains: ChainCore;
  /** The wallet's addresses, all of them in memory. */
  watched: WatchedAddresses;
  money: MoneyMovement;
  outbox: Outbox;
  team: TeamService;
  keys: KeyService;
  limiter: SensitiveLimiter;
  clock: Clock;
  logger: Logger;
  authenticate: (permission: Permission | null) => AppMiddleware;
  signed: () => AppMiddleware;
  idempotent: AppMiddleware;
  /** Addresses of the wallet outside the watched set (the EVM gas stations). */
  isOperatorAddress?: (chainId: string, address: string) => boolean;
}

/** Withdrawals wired: the service, its API and admin routes, the review expiry job. */
export function createWithdrawals(deps: WithdrawalsDeps) {
  const service = new WithdrawalService({
    store: deps.store,
    catalog: deps.catalog,
    rates: deps.rates,
    senderOf: (chainId) => deps.chains.sender(chainId),
    isOwnAddress: (chainId, address) => {
      // The wallet stores one spelling of an address (EVM: EIP-55); a destination may use another.
      const canonical = deps.chains.sender(chainId)?.canonicalAddress?.(address) ?? address;
      return deps.watched.lookup(chainId, canonical) !== undefined || deps.isOperatorAddress?.(chainId, canonical) === true;
    },
    money: deps.money,
    outbox: deps.outbox,
    team: deps.team,
    signerLimits: deps.config.payouts.max_per_transaction,
    limit: (subjects) => deps.limiter.check(subjects),
    clock: deps.clock,
  });
  const routes = withdrawalRoutes({
    withdrawals: service,
    keys: deps.keys,
    authenticate: deps.authenticate,
    signed: deps.signed,
    idempotent: deps.idempotent,
    clock: deps.clock,
    logger: deps.logger,
  });
  return { service, routes, adminRoutes: withdrawalsAdminRoutes(service), reviewExpiryJob: expireWithdrawalReviewsJob(service) };
}
