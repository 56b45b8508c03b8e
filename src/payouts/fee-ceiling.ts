import type { ChainConfig } from '../config/schema';
import { iso, type Clock } from '../shared/clock';
import { Amount } from '../shared/amount';

/** What waits for a chain's fee to come down under its ceiling. */
export type FeeWaitKind = 'payouts' | 'sweeps' | 'replacements';

/** A chain whose node asks more than its `payouts.max_fee`, as `coinkeep status` names it. */
export interface FeeCeilingStatus {
  chain_id: string;
  /** What the node asks now and the ceiling, in the chain's fee unit (`612 gwei`, `12000 sat/vB`, `54.6 TRX`). */
  quote: string;
  ceiling: string;
  /** What waits: new payouts, sweeps and top-ups, replacements of stuck transactions. */
  waiting: FeeWaitKind[];
  since: string;
}

/**
 * One chain's fee ceiling (`chains[].payouts.max_fee`, PRODUCT §14) and what waits under it. Each
 * part that prices a transaction of the chain asks `admits` with what the node's quote asks of it:
 * above the ceiling the transaction waits (nothing is ever sent above it) and the chain is named in
 * `coinkeep status` until a quote fits again. Kept in memory by the daemon that prices them.
 */
export class FeeCeiling {
  private wait: { quote: bigint; kinds: Set<FeeWaitKind>; since: Date } | null = null;

  constructor(
    readonly chainId: string,
    /** Base units of the chain's fee: sat/vB, wei per gas, sun per transfer. */
    readonly max: bigint,
    private readonly show: (v: bigint) => string,
    private readonly clock: Clock,
  ) {}

  /** Whether a fee of `quote` (the ceiling's units) may be paid; above the ceiling, `kind` is named as waiting. */
  admits(kind: FeeWaitKind, quote: bigint): boolean {
    if (quote <= this.max) {
      this.wait = null;
      return true;
    }
    if (this.wait) {
      this.wait.quote = quote;
      this.wait.kinds.add(kind);
    } else {
      this.wait = { quote, kinds: new Set([kind]), since: this.clock.now() };
    }
    return false;
  }

  status(): FeeCeilingStatus | null {
    const w = this.wait;
    return w && { chain_id: this.chainId, quote: this.show(w.quote), ceiling: this.show(this.max), waiting: [...w.kinds], since: iso(w.since) };
  }
}

const SHOW: Record<ChainConfig['kind'], (v: bigint) => string> = {
  btc: (v) => `${v} sat/vB`,
  evm: (v) => `${Amount.fromBaseUnits(v, 9).toString()} gwei`,
  tron: (v) => `${Amount.fromBaseUnits(v, 6).toString()} TRX`,
};

/** Each configured chain's ceiling, by chain id. */
export function feeCeilings(chains: readonly ChainConfig[], clock: Clock): Map<string, FeeCeiling> {
  return new Map(chains.map((c) => [c.id, new FeeCeiling(c.id, c.payouts.max_fee, SHOW[c.kind], clock)]));
}
