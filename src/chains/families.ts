import { btcFamily } from './btc/family';
import { evmFamily } from './evm/family';
import type { ChainFamily, ChainKind } from './family';
import { tronFamily } from './tron/family';

export type { ChainFamily, ChainKind };

/** The registry of chain families: the only switch on `kind` outside the config parser and the sandbox (checked in `npm test`). */
export function familyOf(kind: ChainKind): ChainFamily {
  switch (kind) {
    case 'btc':
      return btcFamily;
    case 'evm':
      return evmFamily;
    case 'tron':
      return tronFamily;
  }
}
