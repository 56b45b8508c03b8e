import { WebhookVerificationError } from './errors';
import { safeEqual, webhookSignature } from './signing';
import type { WebhookEvent } from './types';

export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** Largest accepted difference between X-Timestamp and now, in seconds. Default 300. */
  toleranceSeconds?: number;
  /** Unix time in seconds (tests). */
  nowSeconds?: number;
}

const header = (headers: WebhookHeaders, name: string): string | undefined => {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const want = name.toLowerCase();
  for (const [k, v] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (k.toLowerCase() === want) return Array.isArray(v) ? undefined : v;
  }
  return undefined;
};

/**
 * Verifies one webhook delivery over its raw body bytes (SPEC "Signature"): X-Signature must be
 * exactly "sha256=" + lower-case hex HMAC-SHA256(secret, X-Timestamp + "." + body), compared in
 * constant time, and X-Timestamp within the tolerance. Returns the event; throws
 * WebhookVerificationError otherwise. Pass the body as received, before any JSON parsing.
 */
export function verifyWebhook(rawBody: string | Uint8Array, headers: WebhookHeaders, secret: string, options: VerifyOptions = {}): WebhookEvent {
  const timestamp = header(headers, 'X-Timestamp');
  const signature = header(headers, 'X-Signature');
  if (timestamp === undefined || !/^\d{1,12}$/.test(timestamp)) throw new WebhookVerificationError('X-Timestamp is missing or not Unix seconds');
  if (signature === undefined) throw new WebhookVerificationError('X-Signature is missing');
  if (!safeEqual(signature, webhookSignature(secret, timestamp, rawBody)))
    throw new WebhookVerificationError('X-Signature does not match the body, the timestamp and the secret');
  const tolerance = options.toleranceSeconds ?? 300;
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - Number(timestamp)) > tolerance) throw new WebhookVerificationError(`X-Timestamp is more than ${tolerance} s from now`);
  let event: unknown;
  try {
    event = JSON.parse(typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody).toString('utf8'));
  } catch {
    throw new WebhookVerificationError('the body is not JSON');
  }
  const e = event as Partial<WebhookEvent> | null;
  if (!e || typeof e !== 'object' || typeof e.event_id !== 'string' || typeof e.type !== 'string' || typeof e.data !== 'object') {
    throw new WebhookVerificationError('the body is not an event');
  }
  return e as WebhookEvent;
}
