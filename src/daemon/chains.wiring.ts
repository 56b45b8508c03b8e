import { adapterFor } from '../chains/adapters';
import { ArchivedScan } from '../chains/archived-scan';
import { ChainCore, type AdapterFactory } from '../chains/chain-core';
import { checkTokenDecimals } from '../chains/token-decimals';
import { TransferRecorder } from '../chains/transfer-recorder';
import type { TransferRouter } from '../chains/transfer-router';
import { WalletCoins } from '../chains/wallet-coins';
import type { WatchedAddresses } from '../chains/watched-addresses';
import type { Catalog } from '../catalog/coins';
import type { Config } from '../config/schema';
import type { Store } from '../db/store';
import { scanArchivedAddressesJob } from '../jobs/scan-archived-addresses.job';
import { watchChainJob } from '../jobs/watch-chain.job';
import type { Clock } from '../shared/clock';
import type { Logger } from '../shared/logger';
import type { DaemonModule } from './module';

export interface ChainsDeps {
  config: Config;
  store: Store;
  catalog: Catalog;
  watched: WatchedAddresses;
  /** Hands each transfer to the handlers the other modules registered. */
  router: TransferRouter;
  /** On a shared database: learns the addresses other daemons issued, before each batch. */
  learnAddresses?: () => Promise<unknown>;
  /** Tests: chain adapters from this factory instead of the families' own. */
  adapterFor?: AdapterFactory;
  clock: Clock;
  logger: Logger;
  /** The daemon's shutdown signal. */
  signal: AbortSignal;
}

/**
 * The chain core wired: each chain's watcher and its job, the recorder every transfer goes
 * through, and the slow scan of archived static addresses. At start it meets each node and checks
 * the tokens' decimals against their contracts; a failure there closes what it opened.
 */
export async function createChains(deps: ChainsDeps) {
  const coins = new WalletCoins(deps.watched);
  await coins.load(deps.store);
  const recorder = new TransferRecorder(deps.router, coins, deps.clock, (a, b) => deps.watched.shares(a, b));
  const core = new ChainCore({
    chains: deps.config.chains,
    adapterFor: deps.adapterFor ?? adapterFor,
    store: deps.store,
    recorder,
    watched: deps.watched,
    coins,
    learnAddresses: deps.learnAddresses,
    catalog: deps.catalog,
    clock: deps.clock,
    logger: deps.logger,
  });
  try {
    await core.prepare(deps.signal);
    await checkTokenDecimals(deps.config.chains, (chainId) => core.sender(chainId), deps.logger, deps.signal);
  } catch (err) {
    await core.close();
    throw err;
  }
  const { store, watched, catalog, clock, logger } = deps;
  const archivedScans = core.readers().map(({ chain, adapter }) => new ArchivedScan({ chain, adapter, store, recorder, watched, catalog, clock, logger }));
  const module: DaemonModule = {
    jobs: [
      ...core.watchers.map((watcher) => ({ job: watchChainJob(watcher), runAtStart: true })),
      { job: scanArchivedAddressesJob(archivedScans, deps.config.static_addresses.archived_scan_hours * 3600_000), runAtStart: true },
    ],
    close: () => core.close(),
  };
  return { module, core, recorder, archivedScans };
}
