import type { KeyService } from '../auth/key.service';
import type { SensitiveLimiter } from '../auth/sensitive-limiter';
import type { Catalog } from '../catalog/coins';
import { Amount } from '../shared/amount';
import type { Config } from '../config/schema';
import type { ChainCore } from '../chains/chain-core';
import type { WatchedAddresses } from '../chains/watched-addresses';
import type { Store } from '../db/store';
import type { Outbox } from '../events/outbox';
import type { RouteGuards } from '../http/context';
import { expireWithdrawalReviewsJob } from '../jobs/expire-withdrawal-reviews.job';
import { withdrawalsAdminRoutes } from '../admin/withdrawals.routes';
import { payoutsAdminRoutes } from '../admin/payouts.routes';
import { PayoutCancels } from '../payouts/payout-cancel';
import type { MoneyMovement } from '../money/money-movement';
import type { RateEngine } from '../rates/engine';
import type { Clock } from '../shared/clock';
import type { Logger } from '../shared/logger';
import type { TeamService } from '../team/team.service';
import { withdrawalRoutes } from '../withdrawals/withdrawal.routes';
import type { Sealer } from '../db/seal';
import type { AddressAllocator } from '../wallet/allocator';
import type { RemoteSigner } from '../wallet/signer-client';
import { PayoutStore } from '../payouts/payout-store';
import { PayoutTransfers } from '../payouts/payout-transfers';
import { PayoutWorker, type PayoutCheckpoint } from '../payouts/payout-worker';
import { payoutsOf } from '../chains/payout-families';
import type { WiredRail } from '../payouts/family-payouts';
import type { FeeCeiling } from '../payouts/fee-ceiling';
import type { PayoutRail } from '../payouts/rail';
import type { Job } from '../jobs/scheduler';
import type { ChainConfig } from '../config/schema';
import { WithdrawalService } from '../withdrawals/withdrawal.service';
import { WhitelistService, type WhitelistDeps } from '../withdrawals/whitelist.service';
import { WALLET_PURPOSES, type DaemonModule } from './module';

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
  /** The auth and Idempotency-Key guards the routes are mounted with. */
  guards: RouteGuards;
  /** The payout side: the wallet's signer, the change addresses, the master key's sealer. */
  signer: Pick<RemoteSigner, 'signBitcoin'>;
  addresses: AddressAllocator;
  sealer: Sealer;
  /** Crash tests: called at each payout checkpoint (DaemonOptions.payoutCheckpoint). */
  payoutCheckpoint?: (point: PayoutCheckpoint) => void;
  /** The simulator's planted bugs (DaemonOptions.parts.payoutRail): the rail the worker uses, made from the chain's. */
  wrapRail?: (rail: PayoutRail, chain: ChainConfig) => PayoutRail;
  /** Addresses of the wallet outside the watched set (the EVM gas stations). */
  isOperatorAddress?: (chainId: string, address: string) => boolean;
  /** The account chains' payout rails, wired with their own sends (evm-payouts.wiring). */
  evmRails?: ReadonlyMap<string, WiredRail>;
  /** Each chain's `payouts.max_fee` (feeCeilings). */
  ceilings: ReadonlyMap<string, FeeCeiling>;
}

/** Withdrawals wired: the service, its API and admin routes, the review expiry job, a payout worker per chain with a rail, and the handler of the wallet's own spends. */
export function createWithdrawals(deps: WithdrawalsDeps) {
  // Each chain's rail as wired, for its pricing of a withdrawal's network fee.
  const wired = new Map<string, WiredRail>(deps.evmRails);
  const senderOf = (chainId: string) => deps.chains.sender(chainId);
  // The wallet stores one spelling of an address (EVM: EIP-55); a destination may use another.
  const isOwnAddress = (chainId: string, address: string) => {
    const canonical = deps.chains.sender(chainId)?.canonicalAddress?.(address) ?? address;
    return deps.watched.lookup(chainId, canonical) !== undefined || deps.isOperatorAddress?.(chainId, canonical) === true;
  };
  const limit = (subjects: Parameters<WhitelistDeps['limit']>[0]) => deps.limiter.check(subjects);
  const whitelist = new WhitelistService({ store: deps.store, catalog: deps.catalog, senderOf, isOwnAddress, team: deps.team, limit, clock: deps.clock });
  const service = new WithdrawalService({
    store: deps.store,
    catalog: deps.catalog,
    rates: deps.rates,
    senderOf,
    isOwnAddress,
    money: deps.money,
    outbox: deps.outbox,
    team: deps.team,
    whitelist,
    signerLimits: signerCaps(deps.config),
    limit,
    clock: deps.clock,
    networkCost: (chainId) => wired.get(chainId)?.networkCost ?? null,
  });
  // The payout worker: one per chain with a payout rail, each run once across daemons.
  const payouts = new PayoutStore(deps.sealer);
  const payoutJobs: Job[] = [];
  // `payouts.enabled: false`: no worker at all; withdrawals wait in pending.
  for (const chain of deps.config.payouts.enabled ? deps.config.chains : []) {
    const found = railFor(chain, deps);
    if (!found) continue;
    wired.set(chain.id, found);
    const rail = deps.wrapRail ? deps.wrapRail(found.rail, chain) : found.rail;
    const worker = new PayoutWorker({
      chain,
      rail,
      store: deps.store,
      payouts,
      withdrawals: service,
      money: deps.money,
      catalog: deps.catalog,
      settings: { batchWindowMs: deps.config.payouts.batch_window_seconds * 1000, replaceAfterBlocks: chain.payouts.replace_after_blocks },
      clock: deps.clock,
      logger: deps.logger.child({ component: 'payouts' }),
      checkpoint: deps.payoutCheckpoint,
      securityLog: (em, accountId, action, details) => deps.team.log(em, accountId, 'system', action, details),
    });
    payoutJobs.push({ name: `payouts-${chain.id}`, schedule: { everyMs: chain.watch.poll_interval_ms }, run: (signal) => worker.run(signal) });
  }
  const payoutTransfers = new PayoutTransfers({ payouts, withdrawals: service, clock: deps.clock, logger: deps.logger.child({ component: 'payouts' }) });
  const cancels = new PayoutCancels({ store: deps.store, payouts, team: deps.team, clock: deps.clock });
  const module: DaemonModule = {
    routes: [withdrawalRoutes({ withdrawals: service, keys: deps.keys, guards: deps.guards, clock: deps.clock, logger: deps.logger })],
    adminRoutes: [withdrawalsAdminRoutes(service, whitelist), payoutsAdminRoutes(cancels)],
    jobs: [{ job: expireWithdrawalReviewsJob(service), runAtStart: true }, ...payoutJobs.map((job) => ({ job, runAtStart: true }))],
    // The wallet's own spends, whatever address they spend from, go to the payouts' handler.
    transfers: [{ purposes: WALLET_PURPOSES, direction: 'outgoing', handler: payoutTransfers }],
  };
  return { module, service, whitelist, payoutJobs };
}

/** The payout rail of a chain whose node can send: wired with the chain's own sends, or made by its family; null for a family without one. */
function railFor(chain: ChainConfig, deps: WithdrawalsDeps): WiredRail | null {
  const node = deps.chains.node(chain.id);
  if (!node) return null;
  const family = payoutsOf(chain.kind);
  if (family.ownSends) return deps.evmRails?.get(chain.id) ?? null;
  return (
    family.rail?.({
      chain,
      node,
      store: deps.store,
      signer: deps.signer,
      addresses: deps.addresses,
      ceiling: deps.ceilings.get(chain.id)!,
      clock: deps.clock,
    }) ?? null
  );
}

/**
 * The review's `signer_limit` cap per ticker: `payouts.max_per_transaction`, and no more than the
 * signer's `signer.max_per_hour` (a withdrawal the signer could never sign within an hour waits
 * for a person, named, instead of being refused at each payout run).
 */
export function signerCaps(config: Config): Record<string, string> {
  const caps: Record<string, string> = { ...config.payouts.max_per_transaction };
  for (const [ticker, hour] of Object.entries(config.signer.max_per_hour)) {
    const own = caps[ticker];
    caps[ticker] = own === undefined || Amount.of(hour).cmp(Amount.of(own)) < 0 ? hour : own;
  }
  return caps;
}
