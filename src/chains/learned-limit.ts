/**
 * A limit learned from a node's answers (PRODUCT §15): how many calls one batched request may carry,
 * how many blocks one log query may span. It starts at the configured upper bound, shrinks when the
 * node says it was too much (a response too large, a provider's range or result cap, a timeout),
 * and grows back after successes, never above the bound nor, for a long while, up to a size that
 * failed. Counts answers, not time: one instance per endpoint and kind of limit.
 */
export interface LearnedLimitOptions {
  /** Successes in a row at the current size before it doubles. */
  growAfter?: number;
  /** Successes in a row after which a size that failed may be tried again. */
  forgetAfter?: number;
}

export class LearnedLimit {
  private current: number;
  /** The smallest size that failed and is not yet forgotten; null: none. */
  private failedAt: number | null = null;
  /** The endpoint's fixed limit as it stated it (a provider's plan): never grown past, never forgotten. */
  private stated: number | null = null;
  private streak = 0;
  private sinceFailure = 0;
  private readonly growAfter: number;
  private readonly forgetAfter: number;

  constructor(
    readonly max: number,
    options: LearnedLimitOptions = {},
  ) {
    if (!Number.isInteger(max) || max < 1) throw new Error('a learned limit needs a positive integer bound');
    this.current = max;
    this.growAfter = options.growAfter ?? 20;
    this.forgetAfter = options.forgetAfter ?? 500;
  }

  get value(): number {
    return this.current;
  }

  /**
   * `size` was too much: the limit goes below it, to `stated` when the node said what it takes
   * (QuickNode's "limited to a 5 range", a suggested range), else to half of it. `planLimit`: the
   * stated size is the endpoint's fixed limit (its plan's), not one this request's data set, so
   * the limit never grows past it again. Returns the new value.
   */
  tooMuch(size: number, stated?: number, planLimit = false): number {
    const named = stated !== undefined && Number.isInteger(stated) && stated >= 1 && stated < size;
    const below = named ? stated : Math.max(1, Math.floor(size / 2));
    if (named && planLimit) this.stated = this.stated === null ? stated : Math.min(this.stated, stated);
    this.current = Math.min(this.current, below);
    this.failedAt = this.failedAt === null ? size : Math.min(this.failedAt, size);
    this.streak = 0;
    this.sinceFailure = 0;
    return this.current;
  }

  /** A request of the current size (or less) was answered in full. */
  succeeded(): void {
    this.sinceFailure++;
    if (this.failedAt !== null && this.sinceFailure >= this.forgetAfter) this.failedAt = null;
    if (this.current >= this.max) return;
    if (++this.streak < this.growAfter) return;
    this.streak = 0;
    const ceiling = Math.min(this.max, this.failedAt === null ? Infinity : this.failedAt - 1, this.stated ?? Infinity);
    this.current = Math.max(this.current, Math.min(ceiling, this.current * 2));
  }
}
