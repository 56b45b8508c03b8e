/**
 * Limits for sensitive operations (SPEC "Limits": payouts via
 * POST /v1/withdrawals, and in the cabinet API-key changes, payouts,
 * whitelist changes, 2FA changes; counted per API key, per merchant, per
 * person and per client IP; 429 with `details.scope`; repeating while
 * blocked makes the next block longer).
 *
 * Rules:
 * - Each (scope, subject) has a sliding window of `windowMs` in which at
 *   most `max` operations are counted.
 * - `check` counts one operation against every given subject only if all of
 *   them allow it. A subject whose count is already at `max` is over its
 *   limit: it is blocked for `windowMs` (the base block) and nothing is
 *   counted.
 * - Repeating while blocked lengthens the block. The request that goes over
 *   the limit is itself refused (429), so the client knows; every later
 *   request while a subject is blocked doubles that subject's block length
 *   (capped at SENSITIVE_MAX_BLOCK_MS, 24 h) and moves its block end to
 *   now + the new length, at most once per `windowMs` (the first repeat
 *   doubles at once), so a burst of retries does not jump straight to the
 *   cap while a client that keeps trying stays blocked.
 * - A new block that starts sooner after the previous one ended than the
 *   previous block's length doubles that length (capped); staying clean
 *   for as long as the last block lasted resets it to the base.
 * - When several subjects refuse, the one with the longest remaining block
 *   is reported (ties: key, merchant, account, person, ip order).
 * - Memory: entries are kept in last-touch order, expired ones dropped from
 *   the front (O(1) amortised), at most SENSITIVE_MAX_TRACKED in all.
 */

export type SensitiveScope = 'key' | 'merchant' | 'account' | 'person' | 'ip';

export const SENSITIVE_SCOPES: readonly SensitiveScope[] = ['key', 'merchant', 'account', 'person', 'ip'];

export interface ScopeLimit {
  max: number;
  windowMs: number;
}

export type SensitiveLimits = Record<SensitiveScope, ScopeLimit>;

/**
 * Default limits (the SPEC leaves the numbers open). Sensitive operations
 * are rare for a legitimate user, so the limits are tight:
 * - key: 10 per minute per API key (a single integration's payouts),
 * - merchant: 30 per minute across all keys and members of a merchant,
 * - account: 30 per minute per account (same as merchant, for callers that
 *   count the team account separately),
 * - person: 10 per minute per cabinet user,
 * - ip: 30 per minute per client IP.
 * A subject over its limit is blocked for one window (1 minute), doubling
 * on repeats up to 24 hours.
 */
export const DEFAULT_SENSITIVE_LIMITS: Readonly<SensitiveLimits> = Object.freeze({
  key: { max: 10, windowMs: 60_000 },
  merchant: { max: 30, windowMs: 60_000 },
  account: { max: 30, windowMs: 60_000 },
  person: { max: 10, windowMs: 60_000 },
  ip: { max: 30, windowMs: 60_000 },
});

/** Longest block: 24 hours. */
export const SENSITIVE_MAX_BLOCK_MS = 24 * 3_600_000;
/** Most (scope, subject) entries tracked at once. */
export const SENSITIVE_MAX_TRACKED = 100_000;

export type SensitiveCheckResult = { allowed: true } | { allowed: false; scope: SensitiveScope; retryAfterSeconds: number };

interface SubjectState {
  scope: SensitiveScope;
  /** Times of counted operations within the window, ascending. */
  ops: number[];
  blockedUntil: number;
  blockLenMs: number;
  lastEscalationMs: number;
}

export class SensitiveLimiter {
  private readonly entries = new Map<string, SubjectState>();
  private lastNowMs = -Infinity;

  constructor(
    private readonly nowMs: () => number,
    private readonly limits: SensitiveLimits = DEFAULT_SENSITIVE_LIMITS,
    private readonly maxBlockMs: number = SENSITIVE_MAX_BLOCK_MS,
    private readonly maxTracked: number = SENSITIVE_MAX_TRACKED,
  ) {
    for (const scope of SENSITIVE_SCOPES) {
      const l = limits[scope];
      if (!l || !(l.max >= 1) || !(l.windowMs > 0) || l.windowMs > maxBlockMs) {
        throw new RangeError(`invalid sensitive limit for scope ${scope}`);
      }
    }
    if (!(maxTracked >= 1)) throw new RangeError('invalid maxTracked');
  }

  /** Number of (scope, subject) entries currently tracked. */
  get size(): number {
    return this.entries.size;
  }

  check(subjects: Partial<Record<SensitiveScope, string>>): SensitiveCheckResult {
    const now = Math.max(this.nowMs(), this.lastNowMs);
    this.lastNowMs = now;
    this.evictStale(now);

    const given: Array<[string, SensitiveScope]> = [];
    for (const scope of SENSITIVE_SCOPES) {
      const subject = subjects[scope];
      if (subject !== undefined) given.push([`${scope}\u0000${subject}`, scope]);
    }

    // 1. Subjects already blocked: refuse, and lengthen their blocks.
    const blocked: SubjectState[] = [];
    for (const [id, scope] of given) {
      const st = this.entries.get(id);
      if (st === undefined || now >= st.blockedUntil) continue;
      const base = this.limits[scope].windowMs;
      if (now - st.lastEscalationMs >= base) {
        st.blockLenMs = Math.min(st.blockLenMs * 2, this.maxBlockMs);
        st.blockedUntil = Math.max(st.blockedUntil, now + st.blockLenMs);
        st.lastEscalationMs = now;
      }
      this.touch(id, st);
      blocked.push(st);
    }
    if (blocked.length > 0) return this.refuse(blocked, now);

    // 2. Subjects that would go over their limit: block them, count nothing.
    const states: Array<[string, SubjectState]> = [];
    const over: SubjectState[] = [];
    for (const [id, scope] of given) {
      const st = this.entries.get(id) ?? { scope, ops: [], blockedUntil: 0, blockLenMs: 0, lastEscalationMs: -Infinity };
      const { max, windowMs } = this.limits[scope];
      this.pruneOps(st, now, windowMs);
      states.push([id, st]);
      if (st.ops.length >= max) {
        const repeatOffence = st.blockedUntil > 0 && now - st.blockedUntil < st.blockLenMs;
        st.blockLenMs = repeatOffence ? Math.min(st.blockLenMs * 2, this.maxBlockMs) : windowMs;
        st.blockedUntil = now + st.blockLenMs;
        st.lastEscalationMs = -Infinity; // the first repeat while blocked doubles at once
        st.ops = [];
        over.push(st);
      }
    }
    if (over.length > 0) {
      for (const [id, st] of states) if (over.includes(st)) this.touch(id, st);
      return this.refuse(over, now);
    }

    // 3. All allow: count one operation against every subject.
    for (const [id, st] of states) {
      st.ops.push(now);
      this.touch(id, st);
    }
    return { allowed: true };
  }

  private refuse(states: SubjectState[], now: number): SensitiveCheckResult {
    // `states` follows SENSITIVE_SCOPES order, so on ties the first scope wins.
    let worst = states[0]!;
    for (const st of states) if (st.blockedUntil > worst.blockedUntil) worst = st;
    return { allowed: false, scope: worst.scope, retryAfterSeconds: Math.max(1, Math.ceil((worst.blockedUntil - now) / 1000)) };
  }

  private pruneOps(st: SubjectState, now: number, windowMs: number): void {
    const from = now - windowMs;
    let drop = 0;
    while (drop < st.ops.length && st.ops[drop]! <= from) drop++;
    if (drop > 0) st.ops.splice(0, drop);
  }

  private isStale(st: SubjectState, now: number): boolean {
    if (now < st.blockedUntil) return false;
    const last = st.ops.length > 0 ? st.ops[st.ops.length - 1]! : -Infinity;
    if (last > now - this.limits[st.scope].windowMs) return false;
    return st.blockedUntil === 0 || now - st.blockedUntil >= st.blockLenMs;
  }

  private touch(id: string, st: SubjectState): void {
    this.entries.delete(id);
    this.entries.set(id, st);
    if (this.entries.size > this.maxTracked) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
  }

  private evictStale(now: number): void {
    for (const [id, st] of this.entries) {
      if (!this.isStale(st, now)) break;
      this.entries.delete(id);
    }
  }
}
