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
 * Only requests that passed every other check (signature, key status, IP
 * whitelist, and the key's token bucket: a claim refused by the bucket is
 * forgotten) are remembered, and each key holds at most its share, so one
 * key's flood can neither grow memory without bound nor crowd out another
 * key's requests. What is kept of a request is its replay mark (see `Hmac.replayMark`: the
 * HMAC's inner hash, which authentication computes anyway), never the signature.
 */
import { hash } from 'node:crypto';
import { TIMESTAMP_SKEW_SECONDS } from './signature';

/** What authentication asks of a replay guard (in memory on SQLite, in the store on PostgreSQL). */
export interface ReplayGuard {
  /**
   * Records a request that passed the other checks; true when it was recorded before (a replay).
   * `mark` names the signed request without being presentable (see `Hmac.replayMark`), `owner`
   * is the key it was signed with, `signature` its X-Signature (for a guard that keeps its own
   * digest of it). Throws ReplayShareFullError when that key already holds its whole share.
   */
  seen(mark: string, owner: string, timestampSeconds: number, nowMs: number, signature: string): boolean | Promise<boolean>;
  /** Forgets what `seen` just recorded for a request that was refused afterwards (over its key's rate). */
  forget(mark: string, owner: string, signature: string): void | Promise<void>;
}

/** How long an accepted signature is remembered: 2 × skew + 60 s margin (660 s). */
export const REPLAY_RETENTION_MS = 2 * TIMESTAMP_SKEW_SECONDS * 1000 + 60_000;
/** Width of one eviction bucket. */
export const REPLAY_BUCKET_MS = 30_000;
/**
 * Most signatures one key holds at once: 150 requests/s sustained over the retention (about 12 MiB).
 * A key at its share is refused (429, scope key) until its oldest signatures expire.
 */
export const REPLAY_KEY_SHARE = 100_000;

/** A digest of a signature, so nothing a guard holds or saves can be presented again (the PostgreSQL guard's rows). */
export const replayDigest = (signature: string): string => hash('sha256', signature, 'base64');

/** Thrown by `seen` when the signing key holds its whole share; that key alone is refused. */
export class ReplayShareFullError extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super('this key holds its whole share of the replay guard');
    this.name = 'ReplayShareFullError';
  }
}

/**
 * What the guard's marks are: a snapshot of another kind (an older version kept digests of the
 * signatures) cannot be restored, and the start then refuses what the last run may have accepted.
 */
export const REPLAY_MARK_KIND = 'hmac-inner-sha256';

/** The guard's content as saved at shutdown and restored at the next start. */
export interface ReplaySnapshot {
  marks: typeof REPLAY_MARK_KIND;
  /** [mark, owner, bucket index] of every remembered request. */
  entries: Array<[string, string, number]>;
}

interface Bucket {
  digests: string[];
  owners: string[];
}

/**
 * In-memory ReplayGuard for a single process.
 *
 * Marks live in one Map (O(1) lookup). Each is also listed in the time bucket of its arrival;
 * whole buckets are dropped once they are older than the retention, so eviction costs O(1)
 * amortised per signature. A bucket is kept while its end is after `now - retention`, so every
 * signature is remembered for at least REPLAY_RETENTION_MS.
 */
export class MemoryReplayGuard implements ReplayGuard {
  private readonly digests = new Map<string, number>();
  /** bucket index → signatures that arrived in it; insertion order = ascending index. */
  private readonly buckets = new Map<number, Bucket>();
  /** Signatures held per key. */
  private readonly held = new Map<string, number>();
  private lastNowMs = -Infinity;
  /** No bucket is old enough to drop before this time. */
  private nextEvictionMs = Infinity;
  /** After a start that could not restore the guard: signatures timestamped at or before this second are refused. */
  private refuseUpToSeconds = -Infinity;

  constructor(
    private readonly retentionMs: number = REPLAY_RETENTION_MS,
    private readonly bucketMs: number = REPLAY_BUCKET_MS,
    private readonly keyShare: number = REPLAY_KEY_SHARE,
  ) {
    if (!(bucketMs > 0) || !(retentionMs > 0) || !(keyShare > 0)) throw new RangeError('invalid replay guard options');
  }

  /** Number of signatures currently remembered. */
  get size(): number {
    return this.digests.size;
  }

  seen(mark: string, owner: string, timestampSeconds: number, nowMs: number, _signature?: string): boolean {
    // A clock that steps backwards must not shorten retention or reorder buckets.
    const now = nowMs > this.lastNowMs ? nowMs : this.lastNowMs;
    this.lastNowMs = now;
    if (now >= this.nextEvictionMs) this.evict(now);

    if (timestampSeconds <= this.refuseUpToSeconds) return true;
    if (this.digests.has(mark)) return true;
    const held = this.held.get(owner) ?? 0;
    if (held >= this.keyShare) throw new ReplayShareFullError(this.secondsUntilEviction(now));

    const index = Math.floor(now / this.bucketMs);
    this.add(mark, owner, index);
    this.held.set(owner, held + 1);
    return false;
  }

  forget(mark: string, owner: string, _signature?: string): void {
    if (this.digests.delete(mark)) this.release(owner);
  }

  /**
   * After a start whose previous run ended without saving the guard (a crash): every signature
   * timestamped at or before `startMs` may have been accepted by that run, so it is a replay.
   */
  refuseSignedUpTo(startMs: number): void {
    this.refuseUpToSeconds = Math.floor(startMs / 1000);
  }

  snapshot(): ReplaySnapshot {
    const entries: ReplaySnapshot['entries'] = [];
    for (const [index, bucket] of this.buckets) {
      bucket.digests.forEach((digest, i) => {
        if (this.digests.get(digest) === index) entries.push([digest, bucket.owners[i]!, index]);
      });
    }
    return { marks: REPLAY_MARK_KIND, entries };
  }

  restore(snapshot: ReplaySnapshot, nowMs: number): void {
    for (const [digest, owner, index] of snapshot.entries) {
      if (this.digests.has(digest)) continue;
      this.add(digest, owner, index);
      this.held.set(owner, (this.held.get(owner) ?? 0) + 1);
    }
    this.evict(Math.max(nowMs, this.lastNowMs));
  }

  private add(digest: string, owner: string, index: number): void {
    let bucket = this.buckets.get(index);
    if (bucket === undefined) {
      bucket = { digests: [], owners: [] };
      this.buckets.set(index, bucket);
      this.nextEvictionMs = Math.min(this.nextEvictionMs, this.dropAt(index));
    }
    bucket.digests.push(digest);
    bucket.owners.push(owner);
    this.digests.set(digest, index);
  }

  private release(owner: string): void {
    const held = (this.held.get(owner) ?? 1) - 1;
    if (held > 0) this.held.set(owner, held);
    else this.held.delete(owner);
  }

  /** Seconds until the oldest bucket is dropped (at least 1). */
  private secondsUntilEviction(now: number): number {
    const first = this.buckets.keys().next();
    if (first.done) return 1;
    return Math.max(1, Math.ceil((this.dropAt(first.value) - now) / 1000));
  }

  /** Bucket i covers [i*w, (i+1)*w); it is dropped once (i+1)*w <= now - retention. */
  private dropAt(index: number): number {
    return (index + 1) * this.bucketMs + this.retentionMs;
  }

  private evict(now: number): void {
    this.nextEvictionMs = Infinity;
    for (const [index, bucket] of this.buckets) {
      if (this.dropAt(index) > now) {
        this.nextEvictionMs = this.dropAt(index);
        break;
      }
      bucket.digests.forEach((digest, i) => {
        if (this.digests.get(digest) !== index) return;
        this.digests.delete(digest);
        this.release(bucket.owners[i]!);
      });
      this.buckets.delete(index);
    }
  }
}
