import { placeholder, rawRun } from '../db/raw';
import type { Store } from '../db/store';
import { iso } from '../shared/clock';

/**
 * When each key was last used, without a write per request: authentication notes the time in
 * memory (a map set), and `flush` writes what changed since the last flush, one guarded update per
 * key (a later time only, so daemons sharing a database never move it back). Bounded by the number
 * of keys used between two flushes.
 */
export class KeyUsage {
  private pending = new Map<string, number>();

  /** The key (api_keys.id) made an authenticated request at `ms`. */
  touch(apiKeyId: string, ms: number): void {
    this.pending.set(apiKeyId, ms);
  }

  /** Writes the times noted since the last flush. */
  async flush(store: Store): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    try {
      await store.write(async (em) => {
        for (const [id, ms] of batch) {
          const at = iso(new Date(ms));
          await rawRun(
            em,
            `UPDATE api_keys SET last_used_at = ${placeholder(em, 1)} WHERE id = ${placeholder(em, 2)} AND (last_used_at IS NULL OR last_used_at < ${placeholder(em, 3)})`,
            [at, id, at],
          );
        }
      });
    } catch (err) {
      // Kept for the next flush (a newer time noted meanwhile wins).
      for (const [id, ms] of batch) if (!this.pending.has(id)) this.pending.set(id, ms);
      throw err;
    }
  }
}
