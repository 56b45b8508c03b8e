/**
 * Replay protection (SPEC "Checks and rules" 2: an identical signature
 * accepted once is refused afterwards with `auth.replay`).
 *
 * A signature embeds its timestamp, and a timestamp is accepted only within
 * ±TIMESTAMP_SKEW_SECONDS of server time, so a signature can be presented
 * successfully during at most 2 × 300 s of server time. Remembering every
 * accepted signature for that long (plus a margin for clock steps and bucket
 * granularity) is enough; after that the timestamp check refuses it anyway.
 *
 * Call `seen` only after the signature has been verified, so that only
 * authenticated requests (already limited by the per-key token buckets)
 * occupy memory.
 */
import { TIMESTAMP_SKEW_SECONDS } from './signature';

export interface ReplayGuard {
  /** Returns true if the signature was already seen; otherwise records it and returns false. */
  seen(signature: string, nowMs: number): boolean;
}

/** How long an accepted signature is remembered: 2 × skew + 60 s margin (660 s). */
export const REPLAY_RETENTION_MS = 2 * TIMESTAMP_SKEW_SECONDS * 1000 + 60_000;
/** Width of one eviction bucket. */
export const REPLAY_BUCKET_MS = 30_000;
/** Default hard cap on remembered signatures (about 1500 authenticated requests/s sustained; roughly 150 MB worst case). */
export const REPLAY_MAX_ENTRIES = 1_000_000;

/**
 * Thrown by MemoryReplayGuard.seen when the cap is reached and nothing can be
 * evicted yet. The caller answers 503 `unavailable` (the request could not be
 * checked) rather than risk accepting a replay.
 */
export class ReplayGuardFullError extends Error {
  constructor() {
    super('replay guard is full');
    this.name = 'ReplayGuardFullError';
  }
}

/**
 * In-memory ReplayGuard for a single process.
 *
 * Signatures live in one Map (O(1) lookup). Each is also listed in the
 * time bucket of its arrival; whole buckets are dropped once they are older
 * than the retention, so eviction costs O(1) amortised per signature.
 * A bucket is kept while its end is after `now - retention`, so every
 * signature is remembered for at least REPLAY_RETENTION_MS.
 */
export class MemoryReplayGuard implements ReplayGuard {
  private readonly signatures = new Map<string, number>();
  /** bucket index → signatures that arrived in it; insertion order = ascending index. */
  private readonly buckets = new Map<number, string[]>();
  private lastNowMs = -Infinity;

  constructor(
    private readonly retentionMs: number = REPLAY_RETENTION_MS,
    private readonly bucketMs: number = REPLAY_BUCKET_MS,
    private readonly maxEntries: number = REPLAY_MAX_ENTRIES,
  ) {
    if (!(bucketMs > 0) || !(retentionMs > 0) || !(maxEntries > 0)) throw new RangeError('invalid replay guard options');
  }

  /** Number of signatures currently remembered. */
  get size(): number {
    return this.signatures.size;
  }

  seen(signature: string, nowMs: number): boolean {
    // A clock that steps backwards must not shorten retention or reorder buckets.
    const now = Math.max(nowMs, this.lastNowMs);
    this.lastNowMs = now;
    this.evict(now);

    if (this.signatures.has(signature)) return true;
    if (this.signatures.size >= this.maxEntries) throw new ReplayGuardFullError();

    const index = Math.floor(now / this.bucketMs);
    let bucket = this.buckets.get(index);
    if (bucket === undefined) {
      bucket = [];
      this.buckets.set(index, bucket);
    }
    bucket.push(signature);
    this.signatures.set(signature, index);
    return false;
  }

  private evict(now: number): void {
    // Bucket i covers [i*w, (i+1)*w); drop it once (i+1)*w <= now - retention.
    const cutoff = now - this.retentionMs;
    for (const [index, bucket] of this.buckets) {
      if ((index + 1) * this.bucketMs > cutoff) break;
      for (const sig of bucket) {
        if (this.signatures.get(sig) === index) this.signatures.delete(sig);
      }
      this.buckets.delete(index);
    }
  }
}
