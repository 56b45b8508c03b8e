/**
 * The bounds on webhook attempts in flight (per target, per account, overall) and their count.
 * The dispatcher counts what it hands to the transport; the thread transport counts what it
 * started, against the same bounds. Free of imports: the transport's thread loads it.
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

/** Attempts in flight, counted per target, per account and in all against bounds. */
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
