import { networks, payments, type Network } from 'bitcoinjs-lib';
import type { ChainConfig } from '../../config/schema';
import type { AddressScheme } from '../address-scheme';

/** The presets of a btc chain's `network`; regtest is Bitcoin Core's (`bcrt`). */
const PRESETS: Record<string, Network> = {
  mainnet: networks.bitcoin,
  testnet: networks.testnet,
  signet: networks.testnet,
  regtest: networks.regtest,
};

/**
 * The address parameters of a btc chain: the preset of its `network`, with the explicit overrides
 * of its `options` (`bech32`, `pub_key_hash`, `script_hash`, `wif`), e.g. bcoin's regtest (`rb`).
 */
export function btcNetwork(chain: Pick<ChainConfig, 'network' | 'options'>): Network {
  const preset = PRESETS[chain.network ?? 'mainnet'] ?? networks.testnet;
  const o = chain.options ?? {};
  const int = (k: string, def: number): number => (typeof o[k] === 'number' ? (o[k] as number) : def);
  return {
    ...preset,
    bech32: typeof o.bech32 === 'string' ? o.bech32 : preset.bech32,
    pubKeyHash: int('pub_key_hash', preset.pubKeyHash),
    scriptHash: int('script_hash', preset.scriptHash),
    wif: int('wif', preset.wif),
  };
}

/** SLIP-44 coin type: 0 on mainnet, 1 on every test network (BIP84). */
export const btcCoinType = (chain: Pick<ChainConfig, 'network'>): number => ((chain.network ?? 'mainnet') === 'mainnet' ? 0 : 1);

/** The P2WPKH (native segwit v0) address of a compressed public key, lower-case bech32. */
export function p2wpkhAddress(publicKey: Uint8Array, network: Network): string {
  const { address } = payments.p2wpkh({ pubkey: publicKey, network });
  if (!address) throw new Error('p2wpkh: no address for this key');
  return address;
}

/** BIP84: m/84'/coin'/account'/0/index, P2WPKH with the chain's address parameters. */
export function btcScheme(chain: Pick<ChainConfig, 'network' | 'options'>): AddressScheme {
  const network = btcNetwork(chain);
  return { purpose: 84, coinType: btcCoinType(chain), compressedKey: true, address: (pub) => p2wpkhAddress(pub, network) };
}
