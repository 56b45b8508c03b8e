/**
 * Blocking of client IPs that keep failing authentication (SPEC "Limits":
 * refused authentications counted per client IP; a repeatedly failing
 * address is blocked and every request from it, even a correct one, is 429
 * with `details.scope = ip` until the block ends).
 *
 * Intended use by the HTTP layer, per request:
 *   1. `blockedFor(ip) > 0` → 429 rate_limited, scope ip, Retry-After = ceil(ms / 1000).
 *      Checked before the signature, so a correct request is refused too.
 *   2. authentication refused (invalid signature, expired/invalid timestamp,
 *      missing header, replay...) → `recordFailure(ip)`.
 *   3. authentication accepted → `recordSuccess(ip)`.
 *
 * Rules (thresholds below):
 * - FAILURES refused authentications within a sliding WINDOW block the IP
 *   for the current block length (BLOCK initially).
 * - Repeating while blocked lengthens the block. The failure that starts a
 *   block was answered 401, so the first request refused by the block only
 *   tells the client (429 with Retry-After) and changes nothing. Every later
 *   request while still blocked doubles the block length (capped at
 *   MAX_BLOCK) and moves the block end to now + the new length, at most once
 *   per BLOCK period (the first such repeat doubles at once), so a burst of
 *   retries cannot jump straight to the cap, while a client that keeps
 *   hammering climbs to MAX_BLOCK and stays blocked until it stops for a
 *   whole block.
 * - A new block that starts sooner after the previous one ended than the
 *   previous block's length is a repeat offence: its length is double the
 *   previous one (capped). Staying clean for as long as the last block
 *   lasted resets the length to BLOCK.
 * - A successful authentication does not cancel failures already counted
 *   in the window (otherwise a client holding one valid key could interleave
 *   correct requests to keep an endless stream of bad ones under the
 *   threshold); it only lets the entry be forgotten early once nothing is
 *   left to remember.
 * - Memory: at most MAX_TRACKED IPs. Blocked addresses are held apart and
 *   are never evicted to make room: a flood of new addresses cannot lift a
 *   block. Unblocked entries are kept in last-touch order and expired ones
 *   are dropped from the front (O(1) amortised); above the cap the least
 *   recently touched unblocked entry is dropped. When every slot holds a
 *   blocked address, a new address is not tracked (its refusals are answered
 *   401 but not counted) until a block ends: the blocks that hold matter more
 *   than counting yet another address. Callers key IPv6 clients by their /64
 *   prefix (`blockKey`) so one host cannot spread over many entries.
 */

/** Refused authentications from one IP, within the window, that trigger a block. */
export const IP_BLOCK_FAILURES = 20;
/** Sliding window in which failures are counted: 1 minute. */
export const IP_BLOCK_WINDOW_MS = 60_000;
/** Length of a first block: 1 minute. */
export const IP_BLOCK_MS = 60_000;
/** Longest block, reached by repeating while blocked or by repeat offences: 1 hour. */
export const IP_MAX_BLOCK_MS = 3_600_000;
/** Most IPs tracked at once (roughly 200 bytes each). */
export const IP_MAX_TRACKED = 100_000;

export interface IpBlockerOptions {
  failures: number;
  windowMs: number;
  blockMs: number;
  maxBlockMs: number;
  maxTracked?: number;
}

interface IpState {
  /** Times of refused authentications within the window, ascending. */
  failures: number[];
  /** End of the current or last block; 0 if never blocked (or forgotten). */
  blockedUntil: number;
  /** Length of the current or last block. */
  blockLenMs: number;
  /** Last time a repeat while blocked doubled the block. */
  lastEscalationMs: number;
  /** The current block has already been reported once (a 429 was answered). */
  told: boolean;
}

export class IpBlocker {
  private readonly opts: Required<IpBlockerOptions>;
  /** Addresses not blocked now, in last-touch order (delete + set on touch). */
  private readonly entries = new Map<string, IpState>();
  /** Addresses whose block had not ended when last looked at; never evicted. */
  private readonly blocked = new Map<string, IpState>();
  /** No block in `blocked` ends before this time. */
  private nextBlockEndMs = Infinity;
  private lastNowMs = -Infinity;

  constructor(
    private readonly nowMs: () => number,
    opts?: Partial<IpBlockerOptions>,
  ) {
    this.opts = {
      failures: opts?.failures ?? IP_BLOCK_FAILURES,
      windowMs: opts?.windowMs ?? IP_BLOCK_WINDOW_MS,
      blockMs: opts?.blockMs ?? IP_BLOCK_MS,
      maxBlockMs: opts?.maxBlockMs ?? IP_MAX_BLOCK_MS,
      maxTracked: opts?.maxTracked ?? IP_MAX_TRACKED,
    };
    const o = this.opts;
    if (!(o.failures >= 1 && o.windowMs > 0 && o.blockMs > 0 && o.maxBlockMs >= o.blockMs && o.maxTracked >= 1)) {
      throw new RangeError('invalid IpBlocker options');
    }
  }

  /** Number of IPs currently tracked. */
  get size(): number {
    return this.entries.size + this.blocked.size;
  }

  /**
   * Milliseconds until the block on `ip` ends, 0 if not blocked. Call once
   * per incoming request: a request while blocked lengthens the block (see
   * the rules above), and the returned value already includes that.
   */
  blockedFor(ip: string): number {
    const now = this.now();
    const st = this.blocked.get(ip);
    if (st === undefined) return 0;
    const { blockMs, maxBlockMs } = this.opts;
    if (!st.told) {
      st.told = true;
    } else if (now - st.lastEscalationMs >= blockMs) {
      st.blockLenMs = Math.min(st.blockLenMs * 2, maxBlockMs);
      st.blockedUntil = Math.max(st.blockedUntil, now + st.blockLenMs);
      st.lastEscalationMs = now;
    }
    return st.blockedUntil - now;
  }

  /** Count one refused authentication from `ip`. */
  recordFailure(ip: string): void {
    const now = this.now();
    if (this.blocked.has(ip)) return; // already refused as blocked; blockedFor handles repeats
    let st = this.entries.get(ip);
    if (st === undefined) {
      st = { failures: [], blockedUntil: 0, blockLenMs: 0, lastEscalationMs: -Infinity, told: false };
      if (!this.makeRoom()) return;
    }
    this.touch(ip, st);
    this.pruneFailures(st, now);
    st.failures.push(now);
    if (st.failures.length < this.opts.failures) return;

    const { blockMs, maxBlockMs } = this.opts;
    const repeatOffence = st.blockedUntil > 0 && now - st.blockedUntil < st.blockLenMs;
    st.blockLenMs = repeatOffence ? Math.min(st.blockLenMs * 2, maxBlockMs) : blockMs;
    st.blockedUntil = now + st.blockLenMs;
    st.lastEscalationMs = -Infinity;
    st.told = false;
    st.failures = [];
    this.entries.delete(ip);
    this.blocked.set(ip, st);
    this.nextBlockEndMs = Math.min(this.nextBlockEndMs, st.blockedUntil);
  }

  /** Note an accepted authentication from `ip` (does not lift a block nor cancel counted failures). */
  recordSuccess(ip: string): void {
    const now = this.now();
    const st = this.entries.get(ip);
    if (st === undefined) return;
    this.pruneFailures(st, now);
    if (this.isStale(st, now)) this.entries.delete(ip);
  }

  private now(): number {
    const now = Math.max(this.nowMs(), this.lastNowMs);
    this.lastNowMs = now;
    if (now >= this.nextBlockEndMs) this.releaseEndedBlocks(now);
    this.evictStale(now);
    return now;
  }

  /** Blocks that ended go back among the unblocked entries (they still carry the escalation memory). */
  private releaseEndedBlocks(now: number): void {
    let next = Infinity;
    for (const [ip, st] of this.blocked) {
      if (now >= st.blockedUntil) {
        this.blocked.delete(ip);
        this.touch(ip, st);
      } else next = Math.min(next, st.blockedUntil);
    }
    this.nextBlockEndMs = next;
  }

  /** A free slot for a new address: the least recently touched unblocked entry goes; false when every slot is blocked. */
  private makeRoom(): boolean {
    if (this.size < this.opts.maxTracked) return true;
    const oldest = this.entries.keys().next();
    if (oldest.done) return false;
    this.entries.delete(oldest.value);
    return true;
  }

  private pruneFailures(st: IpState, now: number): void {
    const from = now - this.opts.windowMs;
    let drop = 0;
    while (drop < st.failures.length && st.failures[drop]! <= from) drop++;
    if (drop > 0) st.failures.splice(0, drop);
  }

  /** Nothing left to remember: not blocked, no failure in the window, escalation memory over. */
  private isStale(st: IpState, now: number): boolean {
    if (now < st.blockedUntil) return false;
    const lastFailure = st.failures.length > 0 ? st.failures[st.failures.length - 1]! : -Infinity;
    if (lastFailure > now - this.opts.windowMs) return false;
    return st.blockedUntil === 0 || now - st.blockedUntil >= st.blockLenMs;
  }

  private touch(ip: string, st: IpState): void {
    this.entries.delete(ip);
    this.entries.set(ip, st);
  }

  private evictStale(now: number): void {
    if (this.entries.size === 0) return;
    for (const [ip, st] of this.entries) {
      if (!this.isStale(st, now)) break;
      this.entries.delete(ip);
    }
  }
}
