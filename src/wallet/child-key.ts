import { createHmac } from 'node:crypto';
import * as ecc from 'tiny-secp256k1';

/** The public half of a BIP32 branch node: enough to derive its non-hardened children's keys. */
export interface PublicBranchKey {
  /** Compressed (33 bytes). */
  publicKey: Uint8Array;
  chainCode: Uint8Array;
}

const HARDENED = 0x80000000;

/** IL of BIP32's CKD for a non-hardened index: HMAC-SHA512(chain code, serP(K) ‖ ser32(i))[0..32]. */
function tweakOf(branch: PublicBranchKey, index: number): Buffer {
  if (!Number.isInteger(index) || index < 0 || index >= HARDENED) throw new Error('non-hardened index expected');
  const data = Buffer.allocUnsafe(37);
  data.set(branch.publicKey, 0);
  data.writeUInt32BE(index, 33);
  return createHmac('sha512', branch.chainCode).update(data).digest().subarray(0, 32);
}

// BIP32 says to skip to the next index when IL ≥ n or the key is zero (odds about 2^-127); bip32
// would do so silently and the recorded path would lie, so this refuses instead.
const noKey = (index: number): Error => new Error(`index ${index} gives no valid key; skip it`);

/**
 * The public keys of a branch's non-hardened children from the public branch alone (CKDpub:
 * K + IL·G). Written out rather than taken from bip32's `derive`, which also hashes the parent for
 * the child's fingerprint and always yields a compressed key: an address then costs one
 * HMAC-SHA512, one base-point multiplication (IL·G) and a cheap addition of two uncompressed points
 * (less work than libsecp256k1's tweak-add, which multiplies the general way: docs/benchmarks.md).
 * This is the hot path of invoice creation.
 */
export function publicChildKeys(branch: PublicBranchKey): (index: number, compressed: boolean) => Uint8Array {
  const parent = ecc.pointCompress(branch.publicKey, false);
  return (index, compressed) => {
    const tweak = tweakOf(branch, index);
    const step = ecc.isPrivate(tweak) ? ecc.pointFromScalar(tweak, false) : null;
    const pub = step ? ecc.pointAdd(parent, step, compressed) : null;
    if (!pub) throw noKey(index);
    return pub;
  };
}
