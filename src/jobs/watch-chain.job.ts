import type { ChainWatcher } from '../chains/chain-watcher';
import type { Job } from './scheduler';

/**
 * Polls one chain's node, as often as the chain's options ask (also more than once a second), less
 * often when an endpoint's requests_per_day asks it; at once when the node pushes a new head (EVM `ws_url`).
 */
export const watchChainJob = (watcher: ChainWatcher): Job => ({
  name: `watch-chain-${watcher.chainId}`,
  schedule: { everyMs: () => watcher.nextPollDelayMs() },
  run: (signal) => watcher.poll(signal),
  onWake: (wake) => watcher.onNewHead(wake),
});
