import type { Catalog } from '../catalog/coins';
import type { ChainCore } from '../chains/chain-core';
import { payoutsOf } from '../chains/payout-families';
import type { Config } from '../config/schema';
import type { Sealer } from '../db/seal';
import type { Store } from '../db/store';
import type { Job } from '../jobs/scheduler';
import type { MoneyMovement } from '../money/money-movement';
import type { ChainSends, WiredRail } from '../payouts/family-payouts';
import type { FeeCeiling } from '../payouts/fee-ceiling';
import type { Clock } from '../shared/clock';
import type { Logger } from '../shared/logger';
import type { AddressService } from '../wallet/address.service';
import type { RemoteSigner } from '../wallet/signer-client';
import { gasStationAdminRoutes } from '../admin/gas-station.routes';
import { WALLET_PURPOSES, type DaemonModule, type TransferRoute } from './module';

export interface EvmPayoutsDeps {
  config: Config;
  store: Store;
  catalog: Catalog;
  chains: ChainCore;
  addresses: AddressService;
  signer: RemoteSigner;
  sealer: Sealer;
  money: MoneyMovement;
  /** Each chain's `payouts.max_fee` (feeCeilings). */
  ceilings: ReadonlyMap<string, FeeCeiling>;
  clock: Clock;
  logger: Logger;
}

/**
 * Each watched account chain's own transactions (PRODUCT §8a), as its family wires them
 * (src/chains/<kind>/payouts/family-payouts.ts): its send queue, its sweeper, its gas station, the
 * job that runs them, and its payout rail (for the one payout worker); the transfer router learns to
 * leave the gas station's top-ups alone.
 */
export function createEvmPayouts(deps: EvmPayoutsDeps) {
  const byChain = new Map<string, ChainSends>();
  const rails = new Map<string, WiredRail>();
  const transfers: TransferRoute[] = [];
  const screens: NonNullable<DaemonModule['screens']> = [];
  const jobs: Job[] = [];
  for (const chain of deps.config.chains) {
    const own = payoutsOf(chain.kind).ownSends?.({ ...deps, chain, node: deps.chains.sender(chain.id), ceiling: deps.ceilings.get(chain.id)! });
    if (!own) continue;
    screens.push(own.screen);
    if (own.outgoing) transfers.push({ purposes: WALLET_PURPOSES, direction: 'outgoing', handler: own.outgoing });
    byChain.set(chain.id, own.sends);
    rails.set(chain.id, own);
    jobs.push({ name: own.job, schedule: { everyMs: chain.watch.poll_interval_ms }, run: (signal) => own.sends.pass(signal) });
  }
  const module: DaemonModule = { adminRoutes: [gasStationAdminRoutes(byChain)], jobs: jobs.map((job) => ({ job, runAtStart: true })), transfers, screens };
  return {
    module,
    byChain,
    /** Each chain's payout rail (and its pricing of a withdrawal's network fee), for the one payout worker. */
    rails,
    /** The gas stations are the wallet's too: never a payout's destination. */
    isGasStation: (chainId: string, address: string) => byChain.get(chainId)?.gasStation.address === address,
    gasStations: () => [...byChain.values()].map((c) => c.status()),
  };
}
