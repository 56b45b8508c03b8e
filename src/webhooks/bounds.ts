import { RETRY_DELAYS_MS } from './schedule';

/**
 * Every bound of webhook dispatch, in one place: attempts in flight (per target, per account,
 * overall), how far ahead attempts are claimed, how much is queued in memory, how fresh a claim
 * must be to be sent. Kept free of heavy imports: the sender thread counts its slots with `Slots`.
 */

export interface DispatcherLimits {
  /** Attempts in flight across all targets. */
  maxInFlight: number;
  /** Attempts in flight to one target (an endpoint, or one invoice webhook_url). */
  perTarget: number;
  /** Attempts in flight for one account, over all its targets; absent: only maxInFlight bounds it. */
  perAccount?: number;
}

/** Each bound with a value: what the slots are counted against. */
export type Bounds = Required<DispatcherLimits>;

/** One account's hanging receivers take at most three endpoints' worth of slots, leaving the rest to the others. */
export const DEFAULT_LIMITS: Bounds = { maxInFlight: 64, perTarget: 8, perAccount: 24 };

export const boundsOf = (limits: DispatcherLimits): Bounds => ({ ...limits, perAccount: limits.perAccount ?? limits.maxInFlight });

/** Due deliveries read per target at a time; a target cut there is read again once its queue runs dry. */
export const QUEUE_PER_TARGET = 128;

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
export const QUICK_AHEAD_ROUNDS = 16;
export const SLOW_AHEAD_ROUNDS = 2;

/** An answer this fast makes a target quick: its deepest claim then waits well within CLAIM_FRESH_MS. */
export const QUICK_ANSWER_MS = CLAIM_FRESH_MS / (2 * QUICK_AHEAD_ROUNDS);

/**
 * New deliveries from the fan-out (and attempts that fell due) queued in memory per target, and in
 * all: a burst then goes out without being read back from the store (a read holds
 * QUEUE_PER_TARGET); past these, the store keeps them and the refill reads them.
 */
export const APPENDED_PER_TARGET = 4096;
export const QUEUED_MAX = 20_000;

/** The periodic pass reads only what fell due since the last read; everything due, this often. */
export const FULL_SCAN_EVERY_MS = 60_000;

/**
 * Attempts in flight, counted per target, per account and in all against bounds. The dispatcher
 * counts what it handed over; the sender thread counts what it started, against the same bounds.
 */
export class Slots {
  private total = 0;
  private readonly byTarget = new Map<string, number>();
  private readonly byAccount = new Map<string, number>();

  get inFlight(): number {
    return this.total;
  }

  of(target: string): number {
    return this.byTarget.get(target) ?? 0;
  }

  ofAccount(account: string): number {
    return this.byAccount.get(account) ?? 0;
  }

  fits(target: string, account: string, bounds: Bounds): boolean {
    return this.total < bounds.maxInFlight && this.of(target) < bounds.perTarget && this.ofAccount(account) < bounds.perAccount;
  }

  take(target: string, account: string): void {
    this.total++;
    this.byTarget.set(target, this.of(target) + 1);
    this.byAccount.set(account, this.ofAccount(account) + 1);
  }

  /** Frees one; returns how many its target still has. */
  free(target: string, account: string): number {
    this.total--;
    const left = this.of(target) - 1;
    if (left > 0) this.byTarget.set(target, left);
    else this.byTarget.delete(target);
    const accountLeft = this.ofAccount(account) - 1;
    if (accountLeft > 0) this.byAccount.set(account, accountLeft);
    else this.byAccount.delete(account);
    return left;
  }
}

