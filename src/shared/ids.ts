import { createHash, randomBytes, randomUUID } from 'node:crypto';

export const newId = (): string => randomUUID();

const hyphenate = (h: string): string => `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;

/**
 * A time-ordered UUID (RFC 9562 version 7: 48-bit Unix milliseconds, then 74 random bits). Rows
 * written at a high rate (invoices, their addresses) keyed by it land at the end of their indexes
 * instead of on a random page each (docs/benchmarks.md, invoices). It shows
 * its creation time to the millisecond, which the row's `created_at` shows anyway.
 */
export function newTimeOrderedId(nowMs: number = Date.now()): string {
  // randomUUID draws from a cached entropy pool (a fresh randomBytes per id cost more than the
  // insert it speeds up); its first 48 bits become the time and its version nibble 7.
  const r = randomUUID();
  const t = nowMs.toString(16).padStart(12, '0');
  return `${t.slice(0, 8)}-${t.slice(8)}-7${r.slice(15)}`;
}

/** A string that sorts after every time-ordered id made before `ms` and before every one made at `ms` or later. */
export function timeOrderedIdFloor(ms: number): string {
  const t = Math.max(ms, 0).toString(16).padStart(12, '0');
  return `${t.slice(0, 8)}-${t.slice(8)}`;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
export const isUuid = (s: unknown): s is string => typeof s === 'string' && UUID_RE.test(s);

/** RFC 4122 name-based UUID (version 5, SHA-1). */
export function uuidv5(name: string, namespace: string): string {
  const ns = Buffer.from(namespace.replace(/-/g, ''), 'hex');
  const hash = createHash('sha1').update(ns).update(name, 'utf8').digest();
  const b = hash.subarray(0, 16);
  b[6] = (b[6]! & 0x0f) | 0x50;
  b[8] = (b[8]! & 0x3f) | 0x80;
  return hyphenate(b.toString('hex'));
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Uniform base62 string (rejection sampling, no modulo bias). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export const randomSecret = (): string => randomBytes(32).toString('base64url');
