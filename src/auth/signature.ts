/**
 * Request signing (SPEC "Authentication" → "Canonical string").
 *
 * Pure and I/O-free: the HTTP layer supplies the header values, the request
 * target exactly as sent and the raw body bytes.
 */
import { createHmac, hash, timingSafeEqual } from 'node:crypto';

/** Allowed clock difference between X-Timestamp and server time, in seconds. */
export const TIMESTAMP_SKEW_SECONDS = 300;

/** Length of a valid X-Signature value (hex of a 32-byte HMAC-SHA256). */
export const SIGNATURE_HEX_LENGTH = 64;

const SIGNATURE_RE = /^[0-9a-f]{64}$/;

/** Most signed requests have no body: its hash is computed once. */
const EMPTY_BODY_SHA256 = hash('sha256', '', 'hex');

/** Lower-case hex SHA-256 of the raw body bytes (empty body → hash of the empty string). */
export function bodySha256(rawBody: Buffer): string {
  return rawBody.length === 0 ? EMPTY_BODY_SHA256 : hash('sha256', rawBody, 'hex');
}

/**
 * The four lines joined with LF, no trailing newline:
 * timestamp as sent, upper-case method, target as sent (path + query, not
 * re-encoded), hex SHA-256 of the raw body.
 */
export function canonicalString(timestamp: string, method: string, target: string, rawBody: Buffer): string {
  return `${timestamp}\n${method.toUpperCase()}\n${target}\n${bodySha256(rawBody)}`;
}

function hmac(secret: string, canonical: string): Buffer {
  // The secret is used as given (its UTF-8 bytes), never base64-decoded.
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(canonical, 'utf8').digest();
}

/** Lower-case hex HMAC-SHA256(key = secret string's UTF-8 bytes, message = canonical). */
export function sign(secret: string, canonical: string): string {
  return hmac(secret, canonical).toString('hex');
}

const DUMMY = Buffer.alloc(32);

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

/** Scratch space for the inner hash's input: padded key then message (grown when a message is longer). */
let scratch: Buffer = Buffer.allocUnsafe(BLOCK + 2048);
/** Scratch space for the outer hash's input: padded key then the inner digest. */
const outerScratch = Buffer.allocUnsafe(BLOCK + 32);
/** The expected and the given X-Signature as bytes of their hex text, for the compare. */
const expectedHex = Buffer.allocUnsafe(SIGNATURE_HEX_LENGTH);
const givenHex = Buffer.allocUnsafe(SIGNATURE_HEX_LENGTH);
const DUMMY_HEX = Buffer.alloc(SIGNATURE_HEX_LENGTH);

/** The inner hash of HMAC-SHA256: SHA-256(key ⊕ ipad ‖ message). */
function innerOf(key: MacKey, message: string): Buffer {
  const need = BLOCK + Buffer.byteLength(message, 'utf8');
  if (need > scratch.length) scratch = Buffer.allocUnsafe(need);
  key.inner.copy(scratch, 0);
  scratch.write(message, BLOCK, 'utf8');
  return hash('sha256', scratch.subarray(0, need), 'buffer');
}

/** The outer hash of HMAC-SHA256 over an inner digest: the MAC. */
function outerOf(key: MacKey, inner: Buffer): Buffer;
function outerOf(key: MacKey, inner: Buffer, encoding: 'hex'): string;
function outerOf(key: MacKey, inner: Buffer, encoding: 'buffer' | 'hex' = 'buffer'): Buffer | string {
  key.outer.copy(outerScratch, 0, 0, BLOCK);
  inner.copy(outerScratch, BLOCK);
  return hash('sha256', outerScratch, encoding);
}

/** HMAC-SHA256 of `message` under `key`; equal to createHmac('sha256', secret). */
export function macOf(key: MacKey, message: string): Buffer {
  return outerOf(key, innerOf(key, message));
}

/**
 * Constant-time: `given` is the lower-case hex `expected`. Compared as the bytes of the two texts
 * over 64 bytes: a `given` of another length, or with a character outside ASCII (its UTF-8 would not
 * fit in 64 bytes), is compared against a dummy and is false; equal ASCII bytes are equal texts.
 */
function sameSignature(expected: string, given: string): boolean {
  expectedHex.write(expected, 0, 'latin1');
  const wellFormed = typeof given === 'string' && given.length === SIGNATURE_HEX_LENGTH && givenHex.write(given, 0, 'utf8') === SIGNATURE_HEX_LENGTH;
  const equal = timingSafeEqual(expectedHex, wellFormed ? givenHex : DUMMY_HEX);
  return wellFormed && equal;
}

/** signatureMatches with a key made ready by macKey: the same checks and the same constant work. */
export function signatureMatchesKey(key: MacKey, canonical: string, given: string): boolean {
  return sameSignature(outerOf(key, innerOf(key, canonical), 'hex'), given);
}

/**
 * signatureMatchesKey that also answers the request's replay mark when the signature matches (null
 * otherwise): the HMAC's inner hash, base64. It is computed on the way to the MAC anyway, names the
 * signed request (key and canonical string) as the signature does, and cannot be presented as a
 * signature: turning it into one takes the secret. The replay guard keeps it instead of a digest.
 */
export function matchingReplayMark(key: MacKey, canonical: string, given: string): string | null {
  const inner = innerOf(key, canonical);
  return sameSignature(outerOf(key, inner, 'hex'), given) ? inner.toString('base64') : null;
}

/**
 * Constant-time check of X-Signature. The HMAC is always computed and always
 * compared over 32 bytes; a value that is not exactly 64 lower-case hex
 * characters is compared against a dummy (so the work is the same) and the
 * result is false.
 */
export function signatureMatches(secret: string, canonical: string, given: string): boolean {
  const expected = hmac(secret, canonical);
  const wellFormed = typeof given === 'string' && SIGNATURE_RE.test(given);
  const candidate = wellFormed ? Buffer.from(given, 'hex') : DUMMY;
  const equal = timingSafeEqual(expected, candidate);
  return wellFormed && equal;
}

export type TimestampCheck =
  | { ok: true; seconds: number }
  | { ok: false; code: 'auth.invalid_timestamp' }
  | { ok: false; code: 'auth.expired_timestamp'; serverTime: number };

/**
 * Check X-Timestamp: an integer of whole Unix seconds (optional leading '-',
 * digits only) within TIMESTAMP_SKEW_SECONDS of server time.
 * `serverTime` (whole seconds) is meant for `details.server_time`.
 */
export function checkTimestamp(value: string, nowMs: number, skewSeconds: number = TIMESTAMP_SKEW_SECONDS): TimestampCheck {
  if (typeof value !== 'string' || !/^-?[0-9]{1,16}$/.test(value)) return { ok: false, code: 'auth.invalid_timestamp' };
  const seconds = Number(value);
  if (!Number.isSafeInteger(seconds)) return { ok: false, code: 'auth.invalid_timestamp' };
  const serverTime = Math.floor(nowMs / 1000);
  if (Math.abs(serverTime - seconds) > skewSeconds) return { ok: false, code: 'auth.expired_timestamp', serverTime };
  return { ok: true, seconds };
}
