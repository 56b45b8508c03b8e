/** A FIFO async mutex: one holder at a time, the rest wait in order. */
export class AsyncLock {
  private tail: Promise<void> = Promise.resolve();
  private queued = 0;

  /** Callers holding or waiting for the lock. */
  get depth(): number {
    return this.queued;
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    this.queued++;
    let release!: () => void;
    const next = new Promise<void>((resolve) => (release = resolve));
    const prev = this.tail;
    this.tail = prev.then(() => next);
    await prev;
    try {
      return await fn();
    } finally {
      this.queued--;
      release();
    }
  }
}
