import type { ChainConfig } from '../config/schema';
import type { AdapterFactory } from './chain-core';
import type { ChainAdapter } from './types';
import { BtcAdapter } from './btc/btc-adapter';
import { EvmAdapter } from './evm/evm-adapter';
import { TronAdapter } from './tron/tron-adapter';

/** The adapter of each chain family: the only switch on `kind` outside the config. */
export const adapterFor: AdapterFactory = (chain: ChainConfig): ChainAdapter | null => {
  switch (chain.kind) {
    case 'evm':
      return new EvmAdapter(chain);
    case 'btc':
      return new BtcAdapter(chain);
    case 'tron':
      return new TronAdapter(chain);
  }
};
