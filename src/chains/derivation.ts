import type { ChainConfig } from '../config/schema';
import type { AddressScheme } from './address-scheme';
import { familyOf } from './families';

export type { AddressScheme };

/** The address scheme of a configured chain, from its family. */
export const schemeFor = (chain: ChainConfig): AddressScheme => familyOf(chain.kind).addressScheme(chain);

const MAX_INDEX = 0x7fffffff;

/** BIP44's change level: 0 the external (receive) chain, 1 the internal chain (Bitcoin change). */
export type KeyChain = 0 | 1;

/** A key chain of one wallet account: m/purpose'/coin'/account'/0 (receive) or /1 (change). */
export function receiveBranchPath(scheme: AddressScheme, account: number, keyChain: KeyChain = 0): string {
  if (!Number.isInteger(account) || account < 0 || account > MAX_INDEX) throw new Error('account out of range');
  return `m/${scheme.purpose}'/${scheme.coinType}'/${account}'/${keyChain}`;
}

/** m/purpose'/coin'/account'/keyChain/index. */
export function addressPath(scheme: AddressScheme, account: number, index: number, keyChain: KeyChain = 0): string {
  if (!Number.isInteger(index) || index < 0 || index > MAX_INDEX) throw new Error('index out of range');
  return `${receiveBranchPath(scheme, account, keyChain)}/${index}`;
}
