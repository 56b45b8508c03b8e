/**
 * Webhook signatures, for merchants and for the daemon that signs.
 *
 * Self-contained on purpose (it imports only node:crypto): a merchant's receiver can import it
 * from this package or copy the file as it is.
 *
 *   X-Signature = "sha256=" + lower-case hex HMAC-SHA256(secret as given, X-Timestamp + "." + raw body)
 *
 * Verify over the raw bytes of the body exactly as received (before any JSON parsing).
 */
import { createHmac, timingSafeEqual, type KeyObject } from 'node:crypto';

export type RawBody = string | Buffer | Uint8Array;

/** Node's `req.headers`, a plain object with any capitalisation, or a Fetch `Headers`. */
export type WebhookHeaders = { get(name: string): string | null } | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** How far X-Timestamp may be from now, in seconds (default 300). */
  toleranceSeconds?: number;
  /** The current time in Unix seconds (default: the system clock). */
  now?: number;
}

export interface WebhookEvent {
  event_id: string;
  type: string;
  created_at: string;
  data: Record<string, unknown>;
}

export type VerificationFailure = 'missing_header' | 'invalid_timestamp' | 'invalid_signature' | 'timestamp_outside_tolerance';

export class WebhookVerificationError extends Error {
  constructor(
    readonly reason: VerificationFailure,
    message: string,
  ) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

const bytes = (b: RawBody): Buffer => (typeof b === 'string' ? Buffer.from(b, 'utf8') : Buffer.from(b.buffer, b.byteOffset, b.byteLength));

/** The X-Signature value for a body sent at `timestamp` (decimal Unix seconds); the secret as given, or made a key once (createSecretKey of its UTF-8 bytes). */
export function signWebhook(secret: string | KeyObject, timestamp: string | number, rawBody: RawBody): string {
  const mac = createHmac('sha256', typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret);
  mac.update(`${timestamp}.`, 'utf8');
  mac.update(bytes(rawBody));
  return `sha256=${mac.digest('hex')}`;
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    return (headers as { get(n: string): string | null }).get(name) ?? undefined;
  }
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name.toLowerCase());
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? (value.length === 1 ? value[0] : undefined) : value;
}

/**
 * Checks a delivery and returns its event. Throws WebhookVerificationError when a header is
 * missing, the signature does not match the raw body, timestamp and secret (compared in constant
 * time; upper-case hex and a missing `sha256=` prefix do not match), or the timestamp is more than
 * `toleranceSeconds` from now. Receivers should then still deduplicate by `event_id`.
 */
export function verifyWebhook(rawBody: RawBody, headers: WebhookHeaders, secret: string, options: VerifyOptions = {}): WebhookEvent {
  const toleranceSeconds = options.toleranceSeconds ?? 300;
  const timestamp = header(headers, 'X-Timestamp');
  const signature = header(headers, 'X-Signature');
  if (timestamp === undefined || signature === undefined) {
    throw new WebhookVerificationError('missing_header', 'X-Timestamp and X-Signature are required');
  }
  if (!/^\d{1,12}$/.test(timestamp)) throw new WebhookVerificationError('invalid_timestamp', 'X-Timestamp must be decimal Unix seconds');

  const expected = Buffer.from(signWebhook(secret, timestamp, rawBody), 'utf8');
  const given = Buffer.from(signature, 'utf8');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw new WebhookVerificationError('invalid_signature', 'the signature does not match the body, timestamp and secret');
  }

  const now = options.now ?? Date.now() / 1000;
  if (Math.abs(now - Number(timestamp)) > toleranceSeconds) {
    throw new WebhookVerificationError('timestamp_outside_tolerance', `X-Timestamp is more than ${toleranceSeconds} seconds from now`);
  }
  return JSON.parse(bytes(rawBody).toString('utf8')) as WebhookEvent;
}
