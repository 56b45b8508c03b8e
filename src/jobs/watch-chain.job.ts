import type { ChainWatcher } from '../chains/chain-watcher';
import type { Job } from './scheduler';

/** Polls one chain's node, as often as the chain's options ask (also more than once a second). */
export const watchChainJob = (watcher: ChainWatcher): Job => ({
  name: `watch-chain-${watcher.chainId}`,
  schedule: { everyMs: watcher.pollIntervalMs },
  run: (signal) => watcher.poll(signal),
});
