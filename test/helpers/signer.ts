/**
 * Client-side request signer for tests, written from SPEC "Authentication"
 * alone. It deliberately imports nothing from src/, so it can catch a server
 * implementation that drifts from the specification.
 *
 *   canonical = X-Timestamp "\n" UPPER(method) "\n" target "\n" hex(sha256(body bytes))
 *   X-Signature = hex(HMAC-SHA256(key = secret string as given, canonical))
 */
import * as crypto from 'node:crypto';

export type SignerBody = string | Buffer | Uint8Array | null | undefined;

export interface SignRequestInput {
  keyId: string;
  secret: string;
  method: string;
  /** Path plus query exactly as it will be sent, e.g. `/v1/invoices?limit=50`. */
  target: string;
  /** Exact body bytes (a string is sent as UTF-8). Empty/absent for GET and DELETE. */
  body?: SignerBody;
  /** Unix seconds; a string is used verbatim. Defaults to the current time. */
  timestamp?: number | string;
}

function bodyBytes(body: SignerBody): Buffer {
  if (body === undefined || body === null) return Buffer.alloc(0);
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
}

/** Lower-case hex SHA-256 of the body bytes. */
export function bodyHash(body?: SignerBody): string {
  return crypto.createHash('sha256').update(bodyBytes(body)).digest('hex');
}

/** The canonical string of SPEC "Canonical string". */
export function canonical(timestamp: number | string, method: string, target: string, body?: SignerBody): string {
  return canonicalOfHash(timestamp, method, target, bodyHash(body));
}

const canonicalOfHash = (timestamp: number | string, method: string, target: string, hash: string): string =>
  [String(timestamp), method.toUpperCase(), target, hash].join('\n');

/** Lower-case hex HMAC-SHA256 keyed with the secret's UTF-8 bytes as given (not base64-decoded). */
export function hmacHex(secret: string, message: string): string {
  return crypto.createHmac('sha256', Buffer.from(secret, 'utf8')).update(Buffer.from(message, 'utf8')).digest('hex');
}

const issued = new Set<string>();

/**
 * The current second, or a later one when this process already signed the same request in it:
 * SPEC's replay rule refuses a second identical signature, so a test that reads the same route
 * twice within one second must not produce one by accident. Later, not earlier: after a crash the
 * daemon refuses every signature timestamped up to its start (the replay guard was not saved).
 */
function freshTimestamp(keyId: string, method: string, target: string, hash: string): string {
  for (let ts = Math.floor(Date.now() / 1000); ; ts++) {
    const id = `${keyId}\n${canonicalOfHash(ts, method, target, hash)}`;
    if (!issued.has(id)) {
      issued.add(id);
      return String(ts);
    }
  }
}

/**
 * Headers for a signed request: X-API-Key, X-Timestamp, X-Signature (+ Content-Type when there is a body).
 * Without a timestamp, every call of the process signs a request that was not signed before.
 */
export function signRequest(input: SignRequestInput): Record<string, string> {
  const hash = bodyHash(input.body);
  const timestamp = input.timestamp === undefined ? freshTimestamp(input.keyId, input.method, input.target, hash) : String(input.timestamp);
  const headers: Record<string, string> = {
    'X-API-Key': input.keyId,
    'X-Timestamp': timestamp,
    'X-Signature': hmacHex(input.secret, canonicalOfHash(timestamp, input.method, input.target, hash)),
  };
  if (bodyBytes(input.body).length > 0) headers['Content-Type'] = 'application/json';
  return headers;
}
