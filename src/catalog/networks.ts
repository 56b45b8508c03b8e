import type { ChainConfig } from '../config/schema';

/**
 * What a payer is told to send on (PRODUCT §11, §17): a configured chain's name for people
 * ("Tron", "Base", "BNB Smart Chain") and the token standard its tokens are known by where wallets
 * and exchanges name one (TRC-20 on Tron, ERC-20 on Ethereum, BEP-20 on BNB Smart Chain; none on
 * the other EVM networks, whose name already says it). Data only: the chain's own config decides.
 */
export interface NetworkLabel {
  /** The network's name for people. */
  name: string;
  /** The standard of the chain's tokens as payers know it, or null (natives never show one). */
  token_standard: string | null;
}

/**
 * The chain fields a name is derived from. `preset` and `name` are read when the config gives
 * them (a built-in network's preset name; an operator's display name), so the label follows
 * whichever the parser fills.
 */
export type NamedChain = Pick<ChainConfig, 'id' | 'kind' | 'network' | 'chain_id'> & { preset?: string; name?: string };

interface EvmNetwork {
  chain_id: number;
  name: string;
  token_standard: string | null;
}

/**
 * The EVM networks named here, by preset name: the built-in presets' networks and their public
 * testnets, with the names their own projects use. A chain is matched by its preset, else its
 * EIP-155 chain id, else a config id that is a preset name (a local node playing that network).
 */
const EVM_NETWORKS: Readonly<Record<string, EvmNetwork>> = {
  ethereum: { chain_id: 1, name: 'Ethereum', token_standard: 'ERC-20' },
  base: { chain_id: 8453, name: 'Base', token_standard: null },
  arbitrum: { chain_id: 42161, name: 'Arbitrum One', token_standard: null },
  optimism: { chain_id: 10, name: 'OP Mainnet', token_standard: null },
  polygon: { chain_id: 137, name: 'Polygon PoS', token_standard: null },
  bsc: { chain_id: 56, name: 'BNB Smart Chain', token_standard: 'BEP-20' },
  avalanche: { chain_id: 43114, name: 'Avalanche C-Chain', token_standard: null },
  sepolia: { chain_id: 11155111, name: 'Ethereum Sepolia', token_standard: 'ERC-20' },
  'base-sepolia': { chain_id: 84532, name: 'Base Sepolia', token_standard: null },
  'arbitrum-sepolia': { chain_id: 421614, name: 'Arbitrum Sepolia', token_standard: null },
  'optimism-sepolia': { chain_id: 11155420, name: 'OP Sepolia', token_standard: null },
  'polygon-amoy': { chain_id: 80002, name: 'Polygon Amoy', token_standard: null },
  'bsc-testnet': { chain_id: 97, name: 'BNB Smart Chain Testnet', token_standard: 'BEP-20' },
  'avalanche-fuji': { chain_id: 43113, name: 'Avalanche Fuji', token_standard: null },
};

const own = <T>(table: Readonly<Record<string, T>>, key: string | undefined): T | undefined =>
  key !== undefined && Object.hasOwn(table, key) ? table[key] : undefined;

const evmNetwork = (chain: NamedChain): EvmNetwork | undefined =>
  own(EVM_NETWORKS, chain.preset) ?? Object.values(EVM_NETWORKS).find((n) => n.chain_id === chain.chain_id) ?? own(EVM_NETWORKS, chain.id);

/** Bitcoin by `network`: a test network says so, so no payer sends real coins to it. */
const BITCOIN_NAMES: Readonly<Record<string, string>> = {
  mainnet: 'Bitcoin',
  testnet: 'Bitcoin testnet',
  signet: 'Bitcoin signet',
  regtest: 'Bitcoin regtest',
};

/** Tron by `network` (none: mainnet, or a private chain such as the sandbox's). */
const TRON_NAMES: Readonly<Record<string, string>> = { mainnet: 'Tron', nile: 'Tron Nile testnet', shasta: 'Tron Shasta testnet' };

/** Per family (a table, not a switch on the kind): the network's name and token standard before the config's own name. */
const BY_FAMILY: Readonly<Record<ChainConfig['kind'], (chain: NamedChain) => Partial<NetworkLabel>>> = {
  btc: (chain) => ({ name: own(BITCOIN_NAMES, chain.network) ?? 'Bitcoin', token_standard: null }),
  evm: (chain) => {
    const known = evmNetwork(chain);
    return known ? { name: known.name, token_standard: known.token_standard } : {};
  },
  tron: (chain) => ({ name: own(TRON_NAMES, chain.network) ?? 'Tron', token_standard: 'TRC-20' }),
};

/**
 * The label of a configured chain: the config's display name when it gives one, else the known
 * network's name, else the chain's config id as written (an EVM chain nothing here knows).
 */
export function networkLabel(chain: NamedChain): NetworkLabel {
  const known = BY_FAMILY[chain.kind](chain);
  const given = chain.name?.trim();
  return { name: given || known.name || chain.id, token_standard: known.token_standard ?? null };
}
