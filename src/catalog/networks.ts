import type { ChainConfig } from '../config/schema';
import { EVM_PRESETS } from '../chains/evm/presets';

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

/**
 * The token standard payers know a built-in EVM network's tokens by, where wallets and exchanges
 * name one; the other presets' names already say it. Names and chain ids are the presets' own.
 */
const TOKEN_STANDARDS: Readonly<Record<string, string>> = { ethereum: 'ERC-20', sepolia: 'ERC-20', bsc: 'BEP-20', 'bsc-testnet': 'BEP-20' };

const own = <T>(table: Readonly<Record<string, T>>, key: string | undefined): T | undefined =>
  key !== undefined && Object.hasOwn(table, key) ? table[key] : undefined;

/**
 * The preset a chain is: by its preset, else its EIP-155 chain id, else a config id that is a
 * preset name (a local node playing that network).
 */
const evmPresetName = (chain: NamedChain): string | undefined =>
  (own(EVM_PRESETS, chain.preset) && chain.preset) ??
  Object.keys(EVM_PRESETS).find((name) => EVM_PRESETS[name]!.chain_id === chain.chain_id) ??
  (own(EVM_PRESETS, chain.id) && chain.id);

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
    const preset = evmPresetName(chain);
    return preset === undefined ? {} : { name: EVM_PRESETS[preset]!.display_name, token_standard: own(TOKEN_STANDARDS, preset) ?? null };
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
