import type { EntityManager } from 'typeorm';
import type { Catalog } from '../catalog/coins';
import type { ChainCore } from '../chains/chain-core';
import { EvmAdapter } from '../chains/evm/evm-adapter';
import type { Config } from '../config/schema';
import type { Sealer } from '../db/seal';
import type { Store } from '../db/store';
import type { Job } from '../jobs/scheduler';
import type { MoneyMovement } from '../money/money-movement';
import { EvmChainPayouts } from '../chains/evm/payouts/evm-chain-payouts';
import { EvmRail } from '../chains/evm/payouts/evm-rail';
import { EvmSendQueue } from '../chains/evm/payouts/send-queue';
import type { PayoutRail } from '../payouts/rail';
import type { FeeCeiling } from '../payouts/fee-ceiling';
import { EvmSweeper } from '../chains/evm/payouts/sweeper';
import { TronAdapter } from '../chains/tron/tron-adapter';
import { TronChainPayouts } from '../chains/tron/payouts/tron-chain-payouts';
import { TronRail } from '../chains/tron/payouts/tron-rail';
import { TronSendQueue } from '../chains/tron/payouts/tron-sends';
import { TronSweeper } from '../chains/tron/payouts/tron-sweeper';
import type { Clock } from '../shared/clock';
import type { Logger } from '../shared/logger';
import type { AddressService } from '../wallet/address.service';
import type { WalletSigner } from '../wallet/signer';
import { gasStationAdminRoutes } from '../admin/gas-station.routes';
import { WALLET_PURPOSES, type DaemonModule, type TransferRoute } from './module';

export interface EvmPayoutsDeps {
  config: Config;
  store: Store;
  catalog: Catalog;
  chains: ChainCore;
  addresses: AddressService;
  signer: WalletSigner;
  sealer: Sealer;
  money: MoneyMovement;
  /** Each chain's `payouts.max_fee` (feeCeilings). */
  ceilings: ReadonlyMap<string, FeeCeiling>;
  clock: Clock;
  logger: Logger;
}

/**
 * Each watched EVM and Tron chain's own transactions (PRODUCT §8a): its send queue, its sweeper,
 * its gas station, the job that runs them, and its payout rail (for the one payout worker); the
 * transfer router learns to leave the gas station's top-ups alone.
 */
export function createEvmPayouts(deps: EvmPayoutsDeps) {
  const byChain = new Map<string, EvmChainPayouts | TronChainPayouts>();
  const rails = new Map<string, PayoutRail>();
  const transfers: TransferRoute[] = [];
  const screens: NonNullable<DaemonModule['screens']> = [];
  for (const chain of deps.config.chains) {
    const node = deps.chains.sender(chain.id);
    const ceiling = deps.ceilings.get(chain.id)!;
    if (chain.kind === 'tron' && node instanceof TronAdapter) {
      const logger = deps.logger.child({ component: 'tron-payouts', chain: chain.id });
      const queue = new TronSendQueue({ chain, node, store: deps.store, catalog: deps.catalog, signer: deps.signer, sealer: deps.sealer, clock: deps.clock, logger });
      const gasStation = deps.addresses.gasStation(chain.id);
      const treasuryOf = (em: EntityManager, accountId: string) => deps.addresses.treasury(em, accountId, chain.id);
      const sweeper = new TronSweeper({ chain, node, store: deps.store, catalog: deps.catalog, queue, money: deps.money, treasuryOf, gasStation, ceiling, clock: deps.clock, logger });
      for (const kind of ['sweep', 'topup', 'stake', 'delegate', 'undelegate'] as const) queue.own(kind, sweeper);
      screens.push((em, transfer) => sweeper.isTopUp(em, transfer));
      byChain.set(chain.id, new TronChainPayouts({ chain, node, store: deps.store, queue, sweeper, gasStation, clock: deps.clock }));
      rails.set(chain.id, new TronRail({ chain, node, store: deps.store, catalog: deps.catalog, queue, sweeper, signer: deps.signer, treasuryOf, gasStation, ceiling, logger }));
      continue;
    }
    if (chain.kind !== 'evm' || !(node instanceof EvmAdapter)) continue;
    const logger = deps.logger.child({ component: 'evm-payouts', chain: chain.id });
    const queue = new EvmSendQueue({ chain, node, store: deps.store, catalog: deps.catalog, signer: deps.signer, sealer: deps.sealer, replaceAfterBlocks: chain.payouts.replace_after_blocks, ceiling, clock: deps.clock, logger });
    const gasStation = deps.addresses.gasStation(chain.id);
    const sweeper = new EvmSweeper({
      chain,
      node,
      store: deps.store,
      catalog: deps.catalog,
      queue,
      money: deps.money,
      treasuryOf: (em, accountId) => deps.addresses.treasury(em, accountId, chain.id),
      gasStation,
      ceiling,
      clock: deps.clock,
      logger,
    });
    // The sweeper books what the chain takes for the wallet's own sends: its sweeps and top-ups, and the fillers of given-back nonces.
    queue.own('sweep', sweeper).own('topup', sweeper).own('filler', sweeper);
    screens.push((em, transfer) => sweeper.isTopUp(em, transfer));
    // The wallet's own spends from every kind of address: a final send reorganised away is followed again.
    transfers.push({ purposes: WALLET_PURPOSES, direction: 'outgoing', handler: queue });
    const payouts = new EvmChainPayouts({ chain, node, store: deps.store, queue, sweeper, gasStation, clock: deps.clock });
    const rail = new EvmRail({ chain, node, store: deps.store, catalog: deps.catalog, queue, sweeper, gasStation, treasuryOf: (em, accountId) => deps.addresses.treasury(em, accountId, chain.id), ceiling, money: deps.money, clock: deps.clock, logger });
    payouts.addGasNeed(() => rail.gasNeed());
    payouts.addFinisher((signal) => rail.bookFinished(signal));
    byChain.set(chain.id, payouts);
    rails.set(chain.id, rail);
  }
  const jobs: Job[] = [...byChain.values()].map((c) => ({
    name: `${c instanceof TronChainPayouts ? 'tron' : 'evm'}-sends-${c.chainId}`,
    schedule: { everyMs: deps.config.chains.find((x) => x.id === c.chainId)!.watch.poll_interval_ms },
    run: (signal) => c.pass(signal),
  }));
  const module: DaemonModule = { adminRoutes: [gasStationAdminRoutes(byChain)], jobs: jobs.map((job) => ({ job, runAtStart: true })), transfers, screens };
  return {
    module,
    byChain,
    /** Each chain's payout rail, for the one payout worker. */
    rails,
    /** The gas stations are the wallet's too: never a payout's destination. */
    isGasStation: (chainId: string, address: string) => byChain.get(chainId)?.gasStation.address === address,
    gasStations: () => [...byChain.values()].map((c) => c.status()),
  };
}
