/** What the signer is asked to sign (types only: the daemon's rails build these, the signer process signs them). */
import type { SentTransaction } from '../chains/types';
import type { ChainConfig } from '../config/schema';

/** A coin of the wallet's: a P2WPKH output paying the key at `path`. */
export interface BtcCoin {
  txid: string;
  vout: number;
  /** Satoshi. */
  value: bigint;
  path: string;
}

export interface BtcSpend {
  chain: Pick<ChainConfig, 'id' | 'network' | 'options'>;
  coins: BtcCoin[];
  /**
   * What each output pays. `script`, when given, is the address's output script, used as it is
   * (a witness v1 address needs no elliptic-curve library to be read then).
   */
  outputs: Array<{ address: string; value: bigint; script?: Uint8Array; path?: string }>;
  /** nSequence of every input; 0xfffffffd signals replaceability (BIP125). Default 0xffffffff. */
  sequence?: number;
}

/** A signed Bitcoin transaction and its virtual size (what its fee rate is measured over). */
export interface SignedBtc extends SentTransaction {
  vsize: number;
}

/**
 * An EIP-1559 transaction from the key at `path` (`data`: a contract call, e.g. an ERC-20
 * transfer); `legacy`: a type 0 (EIP-155) transaction paying `maxFeePerGas` as its gas price, for a
 * chain without EIP-1559.
 */
export interface EvmSpend {
  chainId: number;
  path: string;
  nonce: number;
  to: string;
  /** Wei. */
  value: bigint;
  data?: string;
  gasLimit: bigint;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
  legacy?: boolean;
}
