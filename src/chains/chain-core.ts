import type { ChainConfig } from '../config/schema';
import type { Clock } from '../shared/clock';
import { ChainWatcher, type ChainStatus, type ChainWatcherDeps, type HeadSource } from './chain-watcher';
import { familyOf } from './families';
import type { ChainReader, ChainSender, HoldingsReader } from './types';

/** Builds the adapter of a configured chain (`clock`: its endpoints' pauses and staleness); null for a family this version does not watch yet. */
export type AdapterFactory = (chain: ChainConfig, clock: Clock) => ChainReader | null;

export interface ChainCoreDeps extends Omit<ChainWatcherDeps, 'chain' | 'adapter'> {
  chains: readonly ChainConfig[];
  adapterFor: AdapterFactory;
}

/** Every configured chain's watcher, and the status lines of `coinkeep status`. */
export class ChainCore {
  readonly watchers: ChainWatcher[] = [];
  private readonly adapters = new Map<string, ChainReader>();
  private readonly unwatched: ChainConfig[] = [];
  private readonly heads: HeadSource[] = [];

  constructor(deps: ChainCoreDeps) {
    for (const chain of deps.chains) {
      const adapter = deps.adapterFor(chain, deps.clock);
      if (!adapter) {
        // Its coins would issue invoices nobody watches: they stay in maintenance instead.
        deps.logger.warn('chain not watched: no adapter for its kind in this version; its coins are in maintenance', { chain: chain.id, kind: chain.kind });
        for (const coin of deps.catalog.coins()) if (coin.chain_id === chain.id) deps.catalog.setMaintenance(coin.id, true);
        this.unwatched.push(chain);
        continue;
      }
      this.adapters.set(chain.id, adapter);
      // What the node offers to tell new blocks at once (EVM `ws_url`, Core's waitfornewblock) wakes the scanner; polling stays the fallback.
      const heads = familyOf(chain.kind).headSource?.(chain, deps.logger.child({ chain: chain.id }));
      if (heads) this.heads.push(heads);
      this.watchers.push(new ChainWatcher({ ...deps, chain, adapter, heads }));
    }
  }

  /** Every watcher's first contact with its node (ChainWatcher.prepare), side by side. */
  async prepare(signal: AbortSignal): Promise<void> {
    await Promise.all(this.watchers.map((w) => w.prepare(signal)));
  }

  status(): ChainStatus[] {
    return [
      ...this.watchers.map((w) => w.status()),
      ...this.unwatched.map((c) => ({
        chain_id: c.id,
        kind: c.kind,
        node_tip: null,
        scanned_height: null,
        lag: null,
        maintenance: true,
        maintenance_reason: `chains of kind ${c.kind} are not watched by this version`,
        scanning: false,
        last_error: `chains of kind ${c.kind} are not watched by this version: its coins are in maintenance`,
        last_error_at: null,
        last_poll_at: null,
      })),
    ];
  }

  /** Every watched chain's configuration and adapter. */
  readers(): Array<{ chain: ChainConfig; adapter: ChainReader }> {
    return this.watchers.map((w) => ({ chain: w.chain, adapter: this.adapters.get(w.chainId)! }));
  }

  /** The send half of a watched chain's adapter (fee quote, payable destinations); null when it has none. */
  sender(chainId: string): ChainSender | null {
    const adapter = this.adapters.get(chainId);
    return adapter && 'feeQuote' in adapter ? (adapter as ChainReader & ChainSender) : null;
  }

  /** What the node of a watched chain shows the wallet holds (`coinkeep ledger reconcile`); null when its adapter cannot say. */
  holdings(chainId: string): HoldingsReader | null {
    const adapter = this.adapters.get(chainId);
    return adapter && 'holdings' in adapter ? (adapter as ChainReader & HoldingsReader) : null;
  }

  /** A watched chain's whole adapter (the payout rails read its tip and send through it); null when it has no send half. */
  node(chainId: string): (ChainReader & ChainSender) | null {
    return this.sender(chainId) as (ChainReader & ChainSender) | null;
  }

  async close(): Promise<void> {
    for (const h of this.heads) h.stop();
    await Promise.all([...this.adapters.values()].map((a) => a.close?.()));
  }
}
