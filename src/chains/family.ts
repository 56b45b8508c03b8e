import type { Coin } from '../catalog/coins';
import type { ChainConfig, NodeEndpoint } from '../config/schema';
import type { Clock } from '../shared/clock';
import type { Logger } from '../shared/logger';
import type { HeadSource } from './chain-watcher';
import type { AddressScheme } from './address-scheme';
import type { DoctorEndpoint } from './doctor';
import type { ChainAdapter, FeeQuote } from './types';

export type ChainKind = ChainConfig['kind'];

/**
 * A chain family (issue 31 §1): what the rest of the house asks of Bitcoin, EVM or Tron instead of
 * branching on `kind`. Each family's folder exports one of these (src/chains/<kind>/family.ts) and
 * src/chains/families.ts finds it by kind. The money-moving half (payout rail, sweeper, send queue)
 * is the family's `payouts/` (src/chains/<kind>/payouts/family-payouts.ts): it works with the
 * payout worker and the wallet, a layer above this one.
 */
export interface ChainFamily {
  readonly kind: ChainKind;
  /** The node adapter of one configured chain of the family, reading through a pool of its endpoints. */
  adapter(chain: ChainConfig, clock: Clock): ChainAdapter;
  /** One endpoint on its own with the family's checks (`coinkeep doctor`). */
  doctorEndpoint(chain: ChainConfig, endpoint: NodeEndpoint): DoctorEndpoint;
  /** How the wallet's keys become the chain's addresses (paths and address form). */
  addressScheme(chain: ChainConfig): AddressScheme;
  /**
   * What a wallet scans to pay `amount` (a decimal in the coin) of `coin` to `address`;
   * `evmChainId` is the chain's EIP-155 id where it has one.
   */
  paymentUri(coin: Coin, address: string, amount: string, evmChainId: number | undefined): string;
  /**
   * The network fee a withdrawal reserves when no payout rail prices it, in base units of the
   * native coin, at `quote` (this family's quote); `token` when a token is withdrawn. Null when
   * the family has no such fallback (the withdrawal then waits for a price: 503).
   */
  networkFeeReserve(quote: FeeQuote, token: boolean): bigint | null;
  /**
   * How `ledger reconcile` asks the node what the wallet holds: by the wallet's stored outputs
   * (UTXO) or by its addresses (accounts); `pastHeight` when the node answers for a past block (so
   * the books are compared at the height they were scanned to), otherwise at its tip.
   */
  readonly holdings: { by: 'outputs' | 'addresses'; pastHeight: boolean };
  /**
   * The wallet's own addresses beside deposit addresses: per-account treasuries and a gas station
   * (account families: payouts leave from one address), change addresses (UTXO: a payout's change
   * comes back to the wallet). `sharedAcrossChains`: an address is the same key on every chain of
   * the family (EVM), so every such chain watches every address of the family (PRODUCT §17), and
   * the deposit addresses of all its chains are numbered by one counter per account.
   */
  readonly addresses: { treasuries: boolean; change: boolean; sharedAcrossChains?: boolean };
  /**
   * What the node offers to learn of new blocks at once (EVM: `ws_url`'s pushed heads; Bitcoin:
   * Core's `waitfornewblock`), waking the chain's scanner beside its polling; none: polled only.
   */
  headSource?(chain: ChainConfig, log: Logger): HeadSource | undefined;
}
