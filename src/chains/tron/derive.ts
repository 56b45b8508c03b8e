import { concat, decodeBase58, encodeBase58, getBytes, sha256, toBeHex } from 'ethers';
import { evmAddress } from '../evm/derive';
import type { AddressScheme } from '../derivation';

/** Tron's address version byte: base58check of 0x41 ‖ the 20-byte keccak hash gives `T...`. */
const TRON_PREFIX = 0x41;

const checksum = (payload: Uint8Array): Uint8Array => getBytes(sha256(sha256(payload))).subarray(0, 4);

/** `T...` from the 20 bytes shared with the EVM form (0x hex, any case). */
export function tronFromHex(hex20: string): string {
  const payload = getBytes(concat([new Uint8Array([TRON_PREFIX]), getBytes(hex20)]));
  if (payload.length !== 21) throw new Error('tron address: 20 bytes expected');
  return encodeBase58(concat([payload, checksum(payload)]));
}

/** The 20 address bytes (0x hex, lower-case) of a `T...` address; throws on a bad checksum or prefix. */
export function tronToHex(base58: string): string {
  const raw = getBytes(toBeHex(decodeBase58(base58), 25));
  const payload = raw.subarray(0, 21);
  const sum = checksum(payload);
  if (raw[0] !== TRON_PREFIX || !raw.subarray(21).every((b, i) => b === sum[i])) throw new Error('not a Tron address');
  return '0x' + Buffer.from(payload.subarray(1)).toString('hex');
}

/** The base58check `T...` address of a secp256k1 public key (keccak-256 of the key, as on EVM). */
export const tronAddress = (publicKey: Uint8Array): string => tronFromHex(evmAddress(publicKey));

/** BIP44 coin 195: m/44'/195'/account'/0/index. */
export function tronScheme(): AddressScheme {
  return { purpose: 44, coinType: 195, compressedKey: false, address: tronAddress };
}
