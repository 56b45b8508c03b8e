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
  { ok: true; seconds: number } | { ok: false; code: 'auth.invalid_timestamp' } | { ok: false; code: 'auth.expired_timestamp'; serverTime: number };

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
