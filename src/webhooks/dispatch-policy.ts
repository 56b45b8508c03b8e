import { QUEUE_PER_TARGET, targetOf, type Claimed, type DueDelivery } from './attempt.store';
import { boundsOf, Slots, type Bounds, type DispatcherLimits } from './in-flight-limits';
import { RETRY_DELAYS_MS } from './retry-schedule';

/**
 * A claim is sent only while it is this fresh: its delivery falls due again (as if the attempt
 * failed) one retry delay after the claim, so a claim that waited longer than half the shortest
 * delay is given back and claimed anew rather than risk a second send of the same attempt.
 */
export const CLAIM_FRESH_MS = RETRY_DELAYS_MS[0] / 2;

/**
 * Rounds of slots claimed ahead for a target that answers quickly (and overall): each transaction
 * carries many claims (and the outcomes that came in meanwhile) instead of a few, which is most
 * of a delivery's cost. Any other target (and its account) gets SLOW_AHEAD_ROUNDS.
 */
const QUICK_AHEAD_ROUNDS = 16;
const SLOW_AHEAD_ROUNDS = 2;

/** An answer this fast makes a target quick: its deepest claim then waits well within CLAIM_FRESH_MS. */
const QUICK_ANSWER_MS = CLAIM_FRESH_MS / (2 * QUICK_AHEAD_ROUNDS);

/**
 * New deliveries from the fan-out (and attempts that fell due) queued in memory per target, and in
 * all: a burst then goes out without being read back from the store (a read holds
 * QUEUE_PER_TARGET); past these, the store keeps them and the refill reads them.
 */
const APPENDED_PER_TARGET = 4096;
const QUEUED_MAX = 20_000;

/** The periodic pass reads only what fell due since the last read; everything due, this often. */
const FULL_SCAN_EVERY_MS = 60_000;

// ---- what the next pass reads -------------------------------------------------------------------

/**
 * What the store must be asked next: `everything due` (at start, every FULL_SCAN_EVERY_MS, after
 * a claim given back or a retry), `fallen due` (the periodic tick: attempts whose planned time came
 * since the last read), or only `dry targets` (targets whose queue ran dry while the store holds
 * more of theirs). Strongest wins until a pass takes it.
 */
export type StoreRead = 'everything due' | 'fallen due' | 'dry targets';

/** A pass's read: `fallen due` carries the time of the last read (what came due after it is asked for). */
export type PassRead = { read: 'everything due' } | { read: 'fallen due'; since: Date } | { read: 'dry targets' } | { read: 'nothing' };

const STRENGTH: Record<StoreRead, number> = { 'dry targets': 0, 'fallen due': 1, 'everything due': 2 };

export class ReadPlan {
  private next: StoreRead = 'everything due';
  private outbox: 'new rows' | 'fanned out' = 'new rows';
  private lastFullScanAt: number | null = null;
  private lastReadAt: Date | null = null;

  /** The outbox has new rows. */
  outboxWritten(): void {
    this.outbox = 'new rows';
  }

  need(read: StoreRead): void {
    if (STRENGTH[read] > STRENGTH[this.next]) this.next = read;
  }

  /** The periodic tick: a full scan when one is due (or the clock went back), else what fell due. */
  tick(now: Date): void {
    const at = now.getTime();
    const full = this.lastFullScanAt === null || at - this.lastFullScanAt >= FULL_SCAN_EVERY_MS || at < this.lastFullScanAt;
    this.need(full ? 'everything due' : 'fallen due');
    this.outboxWritten();
  }

  /** Whether the pass fans out the outbox; taking it marks it done. */
  takeOutbox(): boolean {
    const fan = this.outbox === 'new rows';
    this.outbox = 'fanned out';
    return fan;
  }

  /**
   * The pass's read; taking it leaves only `dry targets` for the next. Nothing falls due by time
   * alone but retries: new deliveries come queued from the fan-out, and anything given back or
   * retried asks for everything due.
   */
  takeRead(now: Date): PassRead {
    const read = this.next;
    this.next = 'dry targets';
    if (read === 'dry targets') return { read };
    const since = this.lastReadAt;
    if (read === 'fallen due' && (since === null || now.getTime() <= since.getTime())) return { read: 'nothing' };
    this.lastReadAt = now;
    if (read === 'fallen due') return { read, since: since! };
    this.lastFullScanAt = now.getTime();
    return { read };
  }
}

// ---- the queues ----------------------------------------------------------------------------------

/** How fast a target answered last: a quick one is claimed further ahead and handed over ahead of its slots. */
type Pace = 'quick' | 'slow';

/** Whether the memory queue of a target holds all of its due rows, or the store holds more (a read was cut). */
type Supply = 'all in memory' | 'more in store';

/**
 * The queueing policy of the dispatcher, without I/O: due deliveries queued per target, claims
 * waiting for a slot, slots per target, per account and in all, and each target's pace. The
 * dispatcher feeds it what it read and claimed, asks it what to claim and what to start, and tells
 * it when an attempt ends.
 */
export class DispatchPolicy {
  readonly slots = new Slots();
  /** Due, unclaimed rows per target, in the order targets are served. */
  private due = new Map<string, DueDelivery[]>();
  private supply = new Map<string, Supply>();
  /** Claimed attempts waiting for a slot of their target. */
  private readonly claims = new Map<string, Claimed[]>();
  private readonly claimsOfAccount = new Map<string, number>();
  private readonly pace = new Map<string, Pace>();
  readonly bounds: Bounds;
  /** What a quick target may hand over to a transport that keeps the bounds itself: the bounds times its window. */
  private readonly handOver: Bounds;
  /** A slow target's: its own and its account's bounds, within the hand-over overall. */
  private readonly slowHandOver: Bounds;

  constructor(limits: DispatcherLimits, transportWindow: number) {
    this.bounds = boundsOf(limits);
    this.handOver = {
      maxInFlight: this.bounds.maxInFlight * transportWindow,
      perTarget: this.bounds.perTarget * transportWindow,
      perAccount: this.bounds.perAccount * transportWindow,
    };
    this.slowHandOver = { ...this.bounds, maxInFlight: this.handOver.maxInFlight };
  }

  /** A read of everything due: fresh queues. */
  replaceDue(rows: DueDelivery[]): void {
    const byTarget = new Map<string, DueDelivery[]>();
    for (const d of rows) {
      const t = targetOf(d);
      const list = byTarget.get(t);
      if (list) list.push(d);
      else byTarget.set(t, [d]);
    }
    this.due = new Map();
    this.supply = new Map();
    for (const [t, list] of byTarget) this.refill(t, list);
  }

  /**
   * New deliveries from the fan-out, or attempts that fell due, join their target's queue as they
   * are, without a read: behind what is queued, unless the store holds more of the target's (then
   * older due rows wait there and the refill reads these in their turn). The rows are already in
   * hand, so a queue takes more of them than a read would, within a bound on all queues.
   */
  append(rows: DueDelivery[]): void {
    let room = QUEUED_MAX;
    for (const list of this.due.values()) room -= list.length;
    for (const d of rows) {
      const t = targetOf(d);
      if (this.supply.get(t) === 'more in store') continue;
      const list = this.due.get(t);
      if (room <= 0 || (list?.length ?? 0) >= APPENDED_PER_TARGET) {
        this.supply.set(t, 'more in store');
        continue;
      }
      if (list) list.push(d);
      else this.due.set(t, [d]);
      room--;
    }
  }

  /** One target's queue, read from the store (at most QUEUE_PER_TARGET: a full read may have left more there). */
  refill(target: string, rows: DueDelivery[]): void {
    if (rows.length === 0) {
      this.due.delete(target);
      this.supply.delete(target);
      return;
    }
    this.due.set(target, rows);
    if (rows.length >= QUEUE_PER_TARGET) this.supply.set(target, 'more in store');
    else this.supply.delete(target);
  }

  /** Targets with room whose queue ran dry while the store holds more of theirs. */
  dryTargets(): string[] {
    const dry: string[] = [];
    for (const [t, s] of this.supply) {
      if (s === 'more in store' && (this.due.get(t)?.length ?? 0) === 0 && this.slots.of(t) < this.handOver.perTarget) dry.push(t);
    }
    return dry;
  }

  /**
   * What to claim now: what the slots can take plus more rounds per target and per account, so
   * attempts start without waiting for a transaction. A target is topped up only once half its
   * depth has gone, unless fewer than a round wait: claims come in large batches and the slots
   * never run dry for want of one. A slow target (and its account) is claimed only a round or two
   * ahead, so its claims do not go stale while they wait.
   */
  chooseClaims(): DueDelivery[] {
    const round = this.bounds.perTarget;
    let room = QUICK_AHEAD_ROUNDS * this.bounds.maxInFlight - this.slots.inFlight - this.claimsWaiting();
    const chosen: DueDelivery[] = [];
    const chosenOfAccount = new Map<string, number>();
    for (const [t, list] of this.due) {
      if (room <= 0) break;
      const account = list[0]!.account_id;
      const rounds = this.pace.get(t) === 'quick' ? QUICK_AHEAD_ROUNDS : SLOW_AHEAD_ROUNDS;
      const depth = rounds * round;
      const waiting = this.claims.get(t)?.length ?? 0;
      const accountRoom =
        rounds * this.bounds.perAccount - this.slots.ofAccount(account) - (this.claimsOfAccount.get(account) ?? 0) - (chosenOfAccount.get(account) ?? 0);
      const want = Math.min(room, accountRoom, depth - this.slots.of(t) - waiting);
      if (want <= 0 || (want < depth / 2 && waiting >= round)) continue;
      const taken = list.splice(0, want);
      chosen.push(...taken);
      room -= taken.length;
      chosenOfAccount.set(account, (chosenOfAccount.get(account) ?? 0) + taken.length);
      if (list.length === 0) this.due.delete(t);
    }
    return chosen;
  }

  /** Claims made: they wait for a slot of their target. */
  addClaims(claimed: Claimed[]): void {
    for (const c of claimed) {
      const t = targetOf(c.delivery);
      const list = this.claims.get(t);
      if (list) list.push(c);
      else this.claims.set(t, [c]);
      this.countClaim(c.delivery.account_id, 1);
    }
  }

  /**
   * Claims to start now, each with its slot taken, while its target, its account and the total
   * have room, and those no longer fresh (to give back). Only a quick target gets attempts handed
   * over ahead of its slots: a slow one's would wait behind the transport for whole timeouts, and a
   * claim must be sent while fresh.
   */
  startable(nowMs: number): { start: Claimed[]; expired: Claimed[] } {
    const start: Claimed[] = [];
    const expired: Claimed[] = [];
    for (const [t, list] of this.claims) {
      const bounds = this.pace.get(t) === 'quick' ? this.handOver : this.slowHandOver;
      while (list.length > 0 && this.slots.fits(t, list[0]!.delivery.account_id, bounds)) {
        const c = list.shift()!;
        this.countClaim(c.delivery.account_id, -1);
        if (nowMs - c.claimedAt >= CLAIM_FRESH_MS) expired.push(c);
        else {
          this.slots.take(t, c.delivery.account_id);
          start.push(c);
        }
      }
      if (list.length === 0) this.claims.delete(t);
    }
    return { start, expired };
  }

  /**
   * An attempt handed over ended: `answeredInMs` is how long its answer took, or null when the
   * transport gave it back unstarted. Its slot frees; a target with no work left is forgotten.
   */
  ended(c: Claimed, answeredInMs: number | null): void {
    const t = targetOf(c.delivery);
    if (answeredInMs !== null) this.pace.set(t, answeredInMs < QUICK_ANSWER_MS ? 'quick' : 'slow');
    const left = this.slots.free(t, c.delivery.account_id);
    if (left === 0 && !this.claims.has(t)) this.pace.delete(t);
  }

  /** A target changed: its claims (to give back) and its queue go. */
  dropTarget(target: string): Claimed[] {
    const dropped = this.claims.get(target) ?? [];
    this.claims.delete(target);
    for (const c of dropped) this.countClaim(c.delivery.account_id, -1);
    this.due.delete(target);
    return dropped;
  }

  /** Every claim not started (at a stop). */
  takeAllClaims(): Claimed[] {
    const all = [...this.claims.values()].flat();
    this.claims.clear();
    this.claimsOfAccount.clear();
    return all;
  }

  private claimsWaiting(): number {
    let n = 0;
    for (const list of this.claims.values()) n += list.length;
    return n;
  }

  private countClaim(account: string, by: number): void {
    const n = (this.claimsOfAccount.get(account) ?? 0) + by;
    if (n > 0) this.claimsOfAccount.set(account, n);
    else this.claimsOfAccount.delete(account);
  }
}
