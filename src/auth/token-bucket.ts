/**
 * Per-key request rate (SPEC "Limits": token bucket, 600 per minute by
 * default, refilled continuously, adjustable per key; headers
 * X-RateLimit-Limit / X-RateLimit-Remaining; over it 429 with Retry-After).
 *
 * Call `take` only for authenticated requests: unauthenticated ones never
 * consume the key's tokens.
 */

/** Default request limit of a key, per minute. */
export const DEFAULT_REQUESTS_PER_MINUTE = 600;

const MINUTE_MS = 60_000;
/** Tolerance for floating-point refill so a token due at exactly t is available at t. */
const EPSILON = 1e-9;

export interface TakeResult {
  allowed: boolean;
  /** Value for X-RateLimit-Limit (the key's per-minute limit). */
  limit: number;
  /** Value for X-RateLimit-Remaining (whole tokens left after this request). */
  remaining: number;
  /** Value for Retry-After in whole seconds (>= 1) when refused; 0 when allowed. */
  retryAfterSeconds: number;
}

interface Bucket {
  tokens: number;
  updatedMs: number;
}

/**
 * Token buckets keyed by API key id. Capacity = perMinute, refill =
 * perMinute / 60000 tokens per ms, computed lazily on `take`.
 *
 * Any bucket reaches capacity after 60 s without use whatever its rate, and
 * a full bucket is indistinguishable from a new one, so buckets idle for
 * 60 s are dropped. The Map is kept in last-use order (delete + re-insert),
 * so eviction only looks at the front: O(1) amortised, and memory is bounded
 * by the number of keys used in the last minute.
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();
  private lastNowMs = -Infinity;
  /** No bucket is idle for a minute before this time (a lower bound: the front bucket only gets younger). */
  private nextIdleMs = Infinity;

  constructor(private readonly clockNowMs: () => number) {}

  /** Number of buckets currently held (for tests and metrics). */
  get size(): number {
    return this.buckets.size;
  }

  take(key: string, perMinute: number): TakeResult {
    const now = Math.max(this.clockNowMs(), this.lastNowMs);
    this.lastNowMs = now;
    this.evictIdle(now);

    if (!Number.isFinite(perMinute) || perMinute <= 0) {
      // A key with no allowance is always refused.
      return { allowed: false, limit: Math.max(0, Number.isFinite(perMinute) ? perMinute : 0), remaining: 0, retryAfterSeconds: 60 };
    }

    const capacity = perMinute;
    const ratePerMs = perMinute / MINUTE_MS;
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      bucket = { tokens: capacity, updatedMs: now };
      if (this.buckets.size === 0) this.nextIdleMs = now + MINUTE_MS;
    } else {
      this.buckets.delete(key); // re-inserted below, moving it to the back
      // Refill; also clamps to a lowered limit.
      bucket.tokens = Math.min(capacity, bucket.tokens + (now - bucket.updatedMs) * ratePerMs);
      bucket.updatedMs = now;
    }
    this.buckets.set(key, bucket);

    if (bucket.tokens >= 1 - EPSILON) {
      bucket.tokens = Math.max(0, bucket.tokens - 1);
      return { allowed: true, limit: perMinute, remaining: Math.floor(bucket.tokens), retryAfterSeconds: 0 };
    }
    const waitMs = (1 - bucket.tokens) / ratePerMs;
    return { allowed: false, limit: perMinute, remaining: 0, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };
  }

  private evictIdle(now: number): void {
    if (now < this.nextIdleMs) return;
    this.nextIdleMs = Infinity;
    for (const [key, bucket] of this.buckets) {
      if (now - bucket.updatedMs < MINUTE_MS) {
        this.nextIdleMs = bucket.updatedMs + MINUTE_MS;
        break;
      }
      this.buckets.delete(key);
    }
  }
}
