import type { Store } from '../db/store';
import { REPLAY_RETENTION_MS, replayDigest, type ReplayGuard } from './replay-guard';

/** The database's clock as the stored time text (ISO 8601, UTC, milliseconds), `offset` seconds on. */
const dbTime = (offset: string): string => `to_char((now() + interval '${offset} seconds') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The replay guard of daemons that share PostgreSQL: a signature's digest is recorded by an insert
 * that does nothing when another request (of any daemon) recorded it first. Expiry is reckoned by
 * the database's clock, so daemons whose clocks differ neither purge each other's rows early nor
 * keep them late. A key's share is bounded by its rate limit (a request over it is forgotten).
 */
export class StoreReplayGuard implements ReplayGuard {
  private lastPurge = 0;

  constructor(private readonly store: Store) {
    if (store.dialect !== 'postgres') throw new Error('StoreReplayGuard is for PostgreSQL');
  }

  /** Keeps a digest of the signature itself (not the mark), as the rows written before the marks existed do. */
  async seen(_mark: string, _owner: string, _timestampSeconds: number, nowMs: number, signature: string): Promise<boolean> {
    const rows = (await this.store.ds.query(
      `INSERT INTO replay_signatures (signature, expires_at) VALUES ($1, ${dbTime(String(REPLAY_RETENTION_MS / 1000))}) ON CONFLICT (signature) DO NOTHING RETURNING signature`,
      [replayDigest(signature)],
    )) as unknown[];
    if (nowMs - this.lastPurge > 60_000) {
      this.lastPurge = nowMs;
      await this.store.ds.query(`DELETE FROM replay_signatures WHERE expires_at < ${dbTime('0')}`);
    }
    return rows.length === 0;
  }

  async forget(_mark: string, _owner: string, signature: string): Promise<void> {
    await this.store.ds.query('DELETE FROM replay_signatures WHERE signature = $1', [replayDigest(signature)]);
  }
}
