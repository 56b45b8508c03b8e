/**
 * The EVM networks built in (PRODUCT §17): `chains[].preset` names one and the config parser fills
 * the chain from it (src/config/schema.ts), every field given in the file overriding it. An EVM
 * network is configuration of the one EVM family, never a copy of it: this table is data only and
 * imports nothing, so the config parser may read it below the chains layer.
 *
 * Every figure is checked against the network's and the issuer's own documentation; the sources
 * are listed in docs/chains-evm.md ("Built-in networks"). A testnet without an official USDT (or
 * USDC) leaves it out rather than name a look-alike.
 */

/** How an EVM chain prices and books its gas (the fee behaviour is the EVM family's payouts' to apply). */
export const EVM_FEE_MODELS = ['eip1559', 'legacy', 'op-stack', 'arbitrum'] as const;
export type EvmFeeModel = (typeof EVM_FEE_MODELS)[number];

export interface EvmPresetToken {
  ticker: string;
  /** EIP-55, as the issuer publishes it: the catalogue's asset (the coin id is derived from it). */
  contract: string;
  decimals: number;
  name: string;
}

export interface EvmPreset {
  /** EIP-155 chain id. */
  chain_id: number;
  /** The network's name for people ("Base", "BNB Smart Chain Testnet"). */
  display_name: string;
  native: { ticker: string; decimals: number; name: string };
  confirmations: number;
  fee_model: EvmFeeModel;
  /** USDT and USDC where their issuers publish them on this network. */
  tokens: readonly EvmPresetToken[];
  testnet: boolean;
}

const ETH = { ticker: 'ETH', decimals: 18, name: 'Ether' };
const POL = { ticker: 'POL', decimals: 18, name: 'Polygon' };
const BNB = { ticker: 'BNB', decimals: 18, name: 'BNB' };
const AVAX = { ticker: 'AVAX', decimals: 18, name: 'Avalanche' };

const usdt = (contract: string, decimals = 6): EvmPresetToken => ({ ticker: 'USDT', contract, decimals, name: 'Tether USD' });
const usdc = (contract: string, decimals = 6): EvmPresetToken => ({ ticker: 'USDC', contract, decimals, name: 'USD Coin' });

/** The built-in networks by preset name; mainnets first, then their public testnets in the same order. */
export const EVM_PRESETS: Readonly<Record<string, EvmPreset>> = {
  ethereum: {
    chain_id: 1,
    display_name: 'Ethereum',
    native: ETH,
    confirmations: 12,
    fee_model: 'eip1559',
    tokens: [usdt('0xdAC17F958D2ee523a2206206994597C13D831ec7'), usdc('0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48')],
    testnet: false,
  },
  base: {
    chain_id: 8453,
    display_name: 'Base',
    native: ETH,
    confirmations: 30,
    fee_model: 'op-stack',
    // Tether issues no USDT on Base (neither itself nor as USDT0): only Circle's USDC.
    tokens: [usdc('0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913')],
    testnet: false,
  },
  arbitrum: {
    chain_id: 42161,
    display_name: 'Arbitrum One',
    native: ETH,
    confirmations: 20,
    fee_model: 'arbitrum',
    // USDT: Tether's USDT0 (the bridged USDT's contract, upgraded in place).
    tokens: [usdt('0xFd086bC7CD5C481DCC9C85ebE478A1C0b69FCbb9'), usdc('0xaf88d065e77c8cC2239327C5EDb3A432268e5831')],
    testnet: false,
  },
  optimism: {
    chain_id: 10,
    display_name: 'OP Mainnet',
    native: ETH,
    confirmations: 30,
    fee_model: 'op-stack',
    // USDT: Tether's USDT0 (not the older bridged 0x94b0…8e58).
    tokens: [usdt('0x01bFF41798a0BcF287b996046Ca68b395DbC1071'), usdc('0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85')],
    testnet: false,
  },
  polygon: {
    chain_id: 137,
    display_name: 'Polygon PoS',
    native: POL,
    confirmations: 64,
    fee_model: 'eip1559',
    // USDC: Circle's native USDC (not the bridged USDC.e 0x2791…4174).
    tokens: [usdt('0xc2132D05D31c914a87C6611C10748AEb04B58e8F'), usdc('0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359')],
    testnet: false,
  },
  bsc: {
    chain_id: 56,
    display_name: 'BNB Smart Chain',
    native: BNB,
    confirmations: 15,
    fee_model: 'legacy',
    // Binance's pegged tokens, 18 decimals each: neither Tether nor Circle issues on BSC itself.
    tokens: [usdt('0x55d398326f99059fF775485246999027B3197955', 18), usdc('0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d', 18)],
    testnet: false,
  },
  avalanche: {
    chain_id: 43114,
    display_name: 'Avalanche C-Chain',
    native: AVAX,
    confirmations: 1,
    fee_model: 'eip1559',
    tokens: [usdt('0x9702230A8Ea53601f5cD2dc00fDBc13d4dF4A8c7'), usdc('0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E')],
    testnet: false,
  },
  sepolia: {
    chain_id: 11155111,
    display_name: 'Ethereum Sepolia',
    native: ETH,
    confirmations: 12,
    fee_model: 'eip1559',
    tokens: [usdc('0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238')],
    testnet: true,
  },
  'base-sepolia': {
    chain_id: 84532,
    display_name: 'Base Sepolia',
    native: ETH,
    confirmations: 30,
    fee_model: 'op-stack',
    tokens: [usdc('0x036CbD53842c5426634e7929541eC2318f3dCF7e')],
    testnet: true,
  },
  'arbitrum-sepolia': {
    chain_id: 421614,
    display_name: 'Arbitrum Sepolia',
    native: ETH,
    confirmations: 20,
    fee_model: 'arbitrum',
    tokens: [usdc('0x75faf114eafb1BDbe2F0316DF893fd58CE46AA4d')],
    testnet: true,
  },
  'optimism-sepolia': {
    chain_id: 11155420,
    display_name: 'OP Sepolia',
    native: ETH,
    confirmations: 30,
    fee_model: 'op-stack',
    tokens: [usdc('0x5fd84259d66Cd46123540766Be93DFE6D43130D7')],
    testnet: true,
  },
  'polygon-amoy': {
    chain_id: 80002,
    display_name: 'Polygon Amoy',
    native: POL,
    confirmations: 64,
    fee_model: 'eip1559',
    tokens: [usdc('0x41E94Eb019C0762f9Bfcf9Fb1E58725BfB0e7582')],
    testnet: true,
  },
  'bsc-testnet': {
    chain_id: 97,
    display_name: 'BNB Smart Chain Testnet',
    native: BNB,
    confirmations: 15,
    fee_model: 'legacy',
    // No issuer publishes USDT or USDC here (the faucet's tokens are nobody's): none built in.
    tokens: [],
    testnet: true,
  },
  'avalanche-fuji': {
    chain_id: 43113,
    display_name: 'Avalanche Fuji',
    native: AVAX,
    confirmations: 1,
    fee_model: 'eip1559',
    tokens: [usdc('0x5425890298aed601595a70AB815c96711a31Bc65')],
    testnet: true,
  },
};

/** The preset names, in the table's order (what an unknown name's error lists). */
export const EVM_PRESET_NAMES: readonly string[] = Object.keys(EVM_PRESETS);

export function evmPreset(name: string): EvmPreset | undefined {
  return Object.prototype.hasOwnProperty.call(EVM_PRESETS, name) ? EVM_PRESETS[name] : undefined;
}
