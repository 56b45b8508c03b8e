import { createHash } from 'node:crypto';
import { sha256 } from 'ethers/crypto';
import { decodeBase58, getBytes, toBeHex } from 'ethers/utils';
import { evmAddress } from '../evm/derive';
import type { AddressScheme } from '../address-scheme';

/** Tron's address version byte: base58check of 0x41 ‖ the 20-byte keccak hash gives `T...`. */
const TRON_PREFIX = 0x41;

const checksum = (payload: Uint8Array): Uint8Array => getBytes(sha256(sha256(payload))).subarray(0, 4);

const BASE58 = Buffer.from('123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz', 'latin1');

/**
 * `T...` from the 20 bytes shared with the EVM form (0x hex, any case). Node's sha256 and a base58
 * of the 25 bytes by long division: a block's every transaction has its sender's written so. The
 * text is made in one piece from its bytes: one appended a character at a time is a chain of
 * fragments, which the chain core's first read of it (the watched set's hash of every recipient
 * and sender of a block) had to join, a scattered walk that cost more than the rest of screening
 * the block (`npm run bench chains`).
 */
export function tronFromHex(hex20: string): string {
  const hex = hex20.startsWith('0x') || hex20.startsWith('0X') ? hex20.slice(2) : hex20;
  if (!/^[0-9a-fA-F]{40}$/.test(hex)) throw new Error('tron address: 20 bytes expected');
  const payload = Buffer.from('41' + hex, 'hex');
  const sum = createHash('sha256').update(createHash('sha256').update(payload).digest()).digest();
  const bytes = [...payload, ...sum.subarray(0, 4)];
  // Base58 digits, least significant first (0x41 leads, so no leading zeros to carry over).
  const digits: number[] = [];
  for (const byte of bytes) {
    let carry = byte;
    for (let i = 0; i < digits.length; i++) {
      carry += digits[i]! * 256;
      digits[i] = carry % 58;
      carry = (carry / 58) | 0;
    }
    while (carry > 0) {
      digits.push(carry % 58);
      carry = (carry / 58) | 0;
    }
  }
  const text = Buffer.allocUnsafe(digits.length);
  for (let i = 0; i < digits.length; i++) text[i] = BASE58[digits[digits.length - 1 - i]!]!;
  return text.toString('latin1');
}

/** The 20 address bytes (0x hex, lower-case) of a `T...` address; throws on a bad checksum or prefix. */
export function tronToHex(base58: string): string {
  const raw = getBytes(toBeHex(decodeBase58(base58), 25));
  const payload = raw.subarray(0, 21);
  const sum = checksum(payload);
  if (raw[0] !== TRON_PREFIX || !raw.subarray(21).every((b, i) => b === sum[i])) throw new Error('not a Tron address');
  return '0x' + Buffer.from(payload.subarray(1)).toString('hex');
}

/** The 20 address bytes of a `T...` address as 40 lower-case hex digits (a log's address form). */
export const tronDigits = (base58: string): string => tronToHex(base58).slice(2);

/** The base58check `T...` address of a secp256k1 public key (keccak-256 of the key, as on EVM). */
export const tronAddress = (publicKey: Uint8Array): string => tronFromHex(evmAddress(publicKey));

/** BIP44 coin 195: m/44'/195'/account'/0/index. */
export function tronScheme(): AddressScheme {
  return { purpose: 44, coinType: 195, compressedKey: false, address: tronAddress };
}
