import type { ChainConfig } from '../config/schema';
import type { AdapterFactory } from './chain-core';
import type { ChainAdapter } from './types';
import { BtcAdapter } from './btc/btc-adapter';
import { EvmAdapter } from './evm/evm-adapter';

/**
 * The adapter of each chain family: the only switch on `kind` outside the config. A family whose
 * adapter is not built yet answers null, and the core reports the chain as not watched.
 */
export const adapterFor: AdapterFactory = (chain: ChainConfig): ChainAdapter | null => {
  switch (chain.kind) {
    case 'evm':
      return new EvmAdapter(chain);
    case 'btc':
      return new BtcAdapter(chain);
    case 'tron':
      return null;
  }
};
