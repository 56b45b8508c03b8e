import type { KeyService } from '../auth/key.service';
import type { SensitiveLimiter } from '../auth/sensitive-limiter';
import type { Catalog } from '../catalog/coins';
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
import type { WalletSigner } from '../wallet/signer';
import { BtcRail } from '../chains/btc/payouts/btc-rail';
import { TronRail } from '../chains/tron/payouts/tron-rail';
import { PayoutStore } from '../payouts/payout-store';
import { PayoutTransfers } from '../payouts/payout-transfers';
import { PayoutWorker, type PayoutCheckpoint } from '../payouts/payout-worker';
import type { PayoutRail } from '../payouts/rail';
import type { FeeCeiling } from '../payouts/fee-ceiling';
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
  signer: Pick<WalletSigner, 'signBitcoin'>;
  addresses: AddressAllocator;
  sealer: Sealer;
  /** Crash tests: called at each payout checkpoint (DaemonOptions.payoutCheckpoint). */
  payoutCheckpoint?: (point: PayoutCheckpoint) => void;
  /** Addresses of the wallet outside the watched set (the EVM gas stations). */
  isOperatorAddress?: (chainId: string, address: string) => boolean;
  /** The EVM and Tron chains' payout rails (evm-payouts.wiring). */
  evmRails?: ReadonlyMap<string, PayoutRail>;
  /** Each chain's `payouts.max_fee` (feeCeilings). */
  ceilings: ReadonlyMap<string, FeeCeiling>;
}

/** Withdrawals wired: the service, its API and admin routes, the review expiry job, a payout worker per chain with a rail, and the handler of the wallet's own spends. */
export function createWithdrawals(deps: WithdrawalsDeps) {
  const btcRails = new Map<string, BtcRail>();
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
    signerLimits: deps.config.payouts.max_per_transaction,
    limit,
    clock: deps.clock,
    networkCost: (chainId) => {
      const btc = btcRails.get(chainId);
      if (btc) return (req) => (req.quote.kind === 'btc' ? btc.networkCost(deps.store.read, { ...req, satPerVbyte: req.quote.satPerVbyte }) : Promise.reject(new Error('not a Bitcoin fee quote')));
      const rail = deps.evmRails?.get(chainId);
      return rail instanceof TronRail ? (req) => rail.networkCost(req) : null;
    },
  });
  // The payout worker: one per chain with a payout rail, each run once across daemons.
  const payouts = new PayoutStore(deps.sealer);
  const payoutJobs: Job[] = [];
  // `payouts.enabled: false`: no worker at all; withdrawals wait in pending.
  for (const chain of deps.config.payouts.enabled ? deps.config.chains : []) {
    const rail = railFor(chain, deps);
    if (!rail) continue;
    if (rail instanceof BtcRail) btcRails.set(chain.id, rail);
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

/** The payout rail of a chain whose node can send; null for a family without one yet. */
function railFor(chain: ChainConfig, deps: WithdrawalsDeps): PayoutRail | null {
  const node = deps.chains.node(chain.id);
  if (!node) return null;
  if (chain.kind === 'evm' || chain.kind === 'tron') return deps.evmRails?.get(chain.id) ?? null;
  if (chain.kind === 'btc') return new BtcRail({ chain, signer: deps.signer, addresses: deps.addresses, clock: deps.clock }, node, deps.ceilings.get(chain.id)!);
  return null;
}
