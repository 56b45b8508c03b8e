import { createHmac } from 'node:crypto';
import * as ecc from 'tiny-secp256k1';

/** The parts of a BIP32 node a non-hardened child needs. */
export interface BranchKey {
  privateKey: Uint8Array;
  /** Compressed (33 bytes). */
  publicKey: Uint8Array;
  chainCode: Uint8Array;
}

const HARDENED = 0x80000000;

/**
 * The public key of the non-hardened child `index` of a branch (BIP32 CKDpriv, then point(k)).
 * Written out rather than taken from bip32's `derive`, which also hashes the parent for the
 * child's fingerprint and always yields a compressed key: issuing an address then costs one
 * HMAC-SHA512 and one base-point multiplication (the hot path of invoice creation).
 */
export function childPublicKey(branch: BranchKey, index: number, compressed: boolean): Uint8Array {
  if (!Number.isInteger(index) || index < 0 || index >= HARDENED) throw new Error('non-hardened index expected');
  const data = Buffer.allocUnsafe(37);
  data.set(branch.publicKey, 0);
  data.writeUInt32BE(index, 33);
  const i = createHmac('sha512', branch.chainCode).update(data).digest();
  const tweak = i.subarray(0, 32);
  // BIP32 says to skip to the next index when IL ≥ n or the key is zero (odds about 2^-127);
  // bip32 would do so silently and the recorded path would lie, so refuse instead.
  const child = ecc.isPrivate(tweak) ? ecc.privateAdd(branch.privateKey, tweak) : null;
  if (!child) throw new Error(`index ${index} gives no valid key; skip it`);
  const pub = ecc.pointFromScalar(child, compressed);
  if (!pub) throw new Error(`index ${index} gives no valid key; skip it`);
  return pub;
}
