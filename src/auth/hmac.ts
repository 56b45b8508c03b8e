import { hash, timingSafeEqual } from 'node:crypto';

/** Length of a valid X-Signature value (hex of a 32-byte HMAC-SHA256). */
const SIGNATURE_HEX_LENGTH = 64;
/** SHA-256's block: an HMAC key is padded (or first hashed) to it. */
const BLOCK = 64;

/**
 * A secret made ready for HMAC-SHA256 (RFC 2104): its inner and outer padded blocks, computed
 * once per key, so a request's HMAC is two one-shot hashes over preallocated bytes instead of a
 * new HMAC context. Held in memory beside the open secret, never stored.
 */
export interface MacKey {
  readonly inner: Buffer;
  readonly outer: Buffer;
}

export function macKey(secret: string): MacKey {
  let k: Buffer = Buffer.from(secret, 'utf8');
  if (k.length > BLOCK) k = hash('sha256', k, 'buffer');
  const inner = Buffer.alloc(BLOCK, 0x36);
  const outer = Buffer.alloc(BLOCK + 32, 0);
  outer.fill(0x5c, 0, BLOCK);
  for (let i = 0; i < k.length; i++) {
    inner[i]! ^= k[i]!;
    outer[i]! ^= k[i]!;
  }
  return { inner, outer };
}

/**
 * HMAC-SHA256 for the hot path of signed requests (SPEC "Authentication"), equal to Node's
 * createHmac but over buffers kept from one request to the next (docs/benchmarks.md, `npm run
 * bench api`: a new HMAC context and a hex decode per request were a third of a signed request's
 * CPU). One instance per daemon, wired by main; not safe to share across threads.
 */
export class Hmac {
  /** The inner hash's input: padded key then message (grown when a message is longer). */
  private scratch: Buffer = Buffer.allocUnsafe(BLOCK + 2048);
  /** The outer hash's input: padded key then the inner digest. */
  private readonly outerScratch = Buffer.allocUnsafe(BLOCK + 32);
  /** The expected and the given X-Signature as bytes of their hex text, for the compare. */
  private readonly expectedHex = Buffer.allocUnsafe(SIGNATURE_HEX_LENGTH);
  private readonly givenHex = Buffer.allocUnsafe(SIGNATURE_HEX_LENGTH);
  private readonly dummyHex = Buffer.alloc(SIGNATURE_HEX_LENGTH);

  /** HMAC-SHA256 of `message` under `key`. */
  mac(key: MacKey, message: string): Buffer {
    return this.outerOf(key, this.innerOf(key, message));
  }

  /** Constant-time: `given` is the lower-case hex HMAC of `canonical` under `key`. */
  matches(key: MacKey, canonical: string, given: string): boolean {
    return this.sameSignature(this.outerOf(key, this.innerOf(key, canonical), 'hex'), given);
  }

  /**
   * `matches`, answering the request's replay mark when the signature matches (null otherwise):
   * the HMAC's inner hash, base64. It is computed on the way to the MAC anyway, names the signed
   * request (key and canonical string) as the signature does, and cannot be presented as a
   * signature: turning it into one takes the secret. The replay guard keeps it instead of a digest.
   */
  replayMark(key: MacKey, canonical: string, given: string): string | null {
    const inner = this.innerOf(key, canonical);
    return this.sameSignature(this.outerOf(key, inner, 'hex'), given) ? inner.toString('base64') : null;
  }

  /** The inner hash of HMAC-SHA256: SHA-256(key ⊕ ipad ‖ message). */
  private innerOf(key: MacKey, message: string): Buffer {
    const need = BLOCK + Buffer.byteLength(message, 'utf8');
    if (need > this.scratch.length) this.scratch = Buffer.allocUnsafe(need);
    key.inner.copy(this.scratch, 0);
    this.scratch.write(message, BLOCK, 'utf8');
    return hash('sha256', this.scratch.subarray(0, need), 'buffer');
  }

  /** The outer hash of HMAC-SHA256 over an inner digest: the MAC. */
  private outerOf(key: MacKey, inner: Buffer): Buffer;
  private outerOf(key: MacKey, inner: Buffer, encoding: 'hex'): string;
  private outerOf(key: MacKey, inner: Buffer, encoding: 'buffer' | 'hex' = 'buffer'): Buffer | string {
    key.outer.copy(this.outerScratch, 0, 0, BLOCK);
    inner.copy(this.outerScratch, BLOCK);
    return hash('sha256', this.outerScratch, encoding);
  }

  /**
   * Constant-time: `given` is the lower-case hex `expected`. Compared as the bytes of the two texts
   * over 64 bytes: a `given` of another length, or with a character outside ASCII (its UTF-8 would
   * not fit in 64 bytes), is compared against a dummy and is false; equal ASCII bytes are equal texts.
   */
  private sameSignature(expected: string, given: string): boolean {
    this.expectedHex.write(expected, 0, 'latin1');
    const wellFormed = typeof given === 'string' && given.length === SIGNATURE_HEX_LENGTH && this.givenHex.write(given, 0, 'utf8') === SIGNATURE_HEX_LENGTH;
    const equal = timingSafeEqual(this.expectedHex, wellFormed ? this.givenHex : this.dummyHex);
    return wellFormed && equal;
  }
}
