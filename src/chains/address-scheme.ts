/**
 * How a chain family turns the wallet's keys into deposit addresses: the BIP43 purpose and SLIP-44
 * coin type of its paths, and the canonical address of a child public key. Derivation is offline.
 */
export interface AddressScheme {
  purpose: number;
  coinType: number;
  /** The key form `address` takes cheapest: compressed (33 bytes) or uncompressed (65 bytes). */
  compressedKey: boolean;
  address(publicKey: Uint8Array): string;
}
