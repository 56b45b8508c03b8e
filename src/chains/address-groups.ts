import type { ChainConfig } from '../config/schema';
import { familyOf } from './families';

/**
 * The groups of chains that share one watched set and one deposit-address counter per account:
 * the chains of a family whose address is the same key on every chain of it (EVM, PRODUCT §17), by
 * chain id. A chain not named is a group of its own.
 */
export function addressGroups(chains: readonly ChainConfig[]): Map<string, string> {
  const groups = new Map<string, string>();
  for (const c of chains) if (familyOf(c.kind).addresses.sharedAcrossChains) groups.set(c.id, `family:${c.kind}`);
  return groups;
}
