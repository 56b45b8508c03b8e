import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** Lower-case hex SHA-256 of the body bytes (of the empty string for none). */
export const bodySha256 = (body: string | Uint8Array = ''): string => createHash('sha256').update(body).digest('hex');

/** SPEC "Canonical string": timestamp, METHOD, target (path and query as sent), body hash; LF-joined. */
export const canonicalString = (timestamp: string, method: string, target: string, body: string | Uint8Array = ''): string =>
  `${timestamp}\n${method.toUpperCase()}\n${target}\n${bodySha256(body)}`;

/** X-Signature: lower-case hex HMAC-SHA256 keyed with the secret as given. */
export const requestSignature = (secret: string, canonical: string): string =>
  createHmac('sha256', Buffer.from(secret, 'utf8')).update(canonical, 'utf8').digest('hex');

/** A webhook's X-Signature: "sha256=" + hex HMAC-SHA256(secret, timestamp + "." + raw body). */
export function webhookSignature(secret: string, timestamp: string, rawBody: string | Uint8Array): string {
  const mac = createHmac('sha256', Buffer.from(secret, 'utf8'));
  mac.update(`${timestamp}.`, 'utf8');
  mac.update(rawBody);
  return `sha256=${mac.digest('hex')}`;
}

/** Constant-time equality of two strings (false at once when their lengths differ, which is no secret). */
export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}
