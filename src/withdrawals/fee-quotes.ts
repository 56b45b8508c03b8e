import { NodeUnavailable, type ChainSender, type FeeQuote } from '../chains/types';

/** How long a node's fee quote answers for the reserve of estimates and creations. */
export const FEE_QUOTE_TTL_MS = 5_000;

/**
 * How old a quote may still price a reserve while the node cannot answer now (rate limited, busy,
 * unreachable: PRODUCT §15): a hosted endpoint's 429 should not refuse a withdrawal whose reserve a
 * minute-old quote prices as well; the payout worker asks the node again when it signs.
 */
export const FEE_QUOTE_FALLBACK_MS = 60_000;

/**
 * The fee quotes that price the network-fee reserve of estimates and withdrawals: one node round
 * trip per sender every few seconds at most, not one per request (the mempool does not move faster
 * than that, and the payout worker asks the node again when it signs). Concurrent requests share
 * one call in flight; a failed call is not kept, so the next request asks the node again. While the
 * node cannot answer now (NodeUnavailable), the last quote serves up to FEE_QUOTE_FALLBACK_MS.
 */
export class FeeQuotes {
  private readonly cached = new WeakMap<ChainSender, { quote: FeeQuote; atMs: number }>();
  private readonly inflight = new WeakMap<ChainSender, Promise<FeeQuote>>();

  constructor(
    private readonly nowMs: () => number,
    private readonly ttlMs = FEE_QUOTE_TTL_MS,
    private readonly fallbackMs = FEE_QUOTE_FALLBACK_MS,
  ) {}

  quote(sender: ChainSender): Promise<FeeQuote> {
    const hit = this.cached.get(sender);
    const now = this.nowMs();
    if (hit && now - hit.atMs < this.ttlMs && now >= hit.atMs) return Promise.resolve(hit.quote);
    let pending = this.inflight.get(sender);
    if (!pending) {
      pending = sender.feeQuote().then(
        (quote) => {
          this.cached.set(sender, { quote, atMs: this.nowMs() });
          this.inflight.delete(sender);
          return quote;
        },
        (err: unknown) => {
          this.inflight.delete(sender);
          const last = this.cached.get(sender);
          const age = last ? this.nowMs() - last.atMs : Infinity;
          if (err instanceof NodeUnavailable && last && age >= 0 && age < this.fallbackMs) return last.quote;
          throw err;
        },
      );
      this.inflight.set(sender, pending);
    }
    return pending;
  }
}
