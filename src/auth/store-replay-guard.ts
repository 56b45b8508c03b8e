import type { Store } from '../db/store';
import { REPLAY_RETENTION_MS } from './replay-guard';

/**
 * The replay guard of daemons that share PostgreSQL: a signature is recorded by an insert that
 * does nothing when another request (of any daemon) recorded it first.
 */
export class StoreReplayGuard {
  private lastPurge = 0;

  constructor(private readonly store: Store) {
    if (store.dialect !== 'postgres') throw new Error('StoreReplayGuard is for PostgreSQL');
  }

  async seen(signature: string, nowMs: number): Promise<boolean> {
    const rows = (await this.store.ds.query(
      'INSERT INTO replay_signatures (signature, expires_at) VALUES ($1, $2) ON CONFLICT (signature) DO NOTHING RETURNING signature',
      [signature, new Date(nowMs + REPLAY_RETENTION_MS).toISOString()],
    )) as unknown[];
    if (nowMs - this.lastPurge > 60_000) {
      this.lastPurge = nowMs;
      await this.store.ds.query('DELETE FROM replay_signatures WHERE expires_at < $1', [new Date(nowMs).toISOString()]);
    }
    return rows.length === 0;
  }
}
