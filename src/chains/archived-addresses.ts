import type { EntityManager } from 'typeorm';
import { placeholder, rawQuery, rawRun } from '../db/raw';
import type { WatchedAddresses } from './watched-addresses';

/** The address row an archived static address was issued as: what the watched set and the slow scan need. */
export interface UnwatchedAddress {
  id: string;
  chainId: string;
  address: string;
}

/** The height the chain core has scanned a chain up to, in `em`'s transaction; -1 before its cursor exists. */
export async function cursorHeight(em: EntityManager, chainId: string): Promise<number> {
  const [row] = await rawQuery<{ height: number | string }>(em, `SELECT height FROM chain_cursors WHERE chain_id = ${placeholder(em, 1)}`, [chainId]);
  return row ? Number(row.height) : -1;
}

/**
 * Archived static addresses leave the real-time watched set (SPEC "Static address"); the slow scan
 * (ArchivedScan) finds their transfers instead. Both moves happen inside the caller's transaction:
 * `unwatch` records from which height the slow scan takes over (the chain core's cursor: the
 * address was watched in real time up to there), `rewatch` from which height the real-time scan has
 * it again (the slow scan still covers the blocks before). The watched set itself changes after the
 * commit (`forget`) or before it (`rewatch`), so a rolled-back change only ever leaves an address
 * watched more than needed, never less.
 */
export class ArchivedAddresses {
  constructor(private readonly watched: WatchedAddresses) {}

  async unwatch(em: EntityManager, a: UnwatchedAddress, now: string): Promise<void> {
    const height = await cursorHeight(em, a.chainId);
    const p = (i: number) => placeholder(em, i);
    // Archived again before the slow scan passed its last restore: its checked height stays (lower).
    await rawRun(
      em,
      `INSERT INTO archived_scans (address_id, chain_id, address, checked_height, rewatched_height, balances, updated_at) VALUES (${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, NULL, NULL, ${p(5)})
       ON CONFLICT (address_id) DO UPDATE SET rewatched_height = NULL, updated_at = ${p(6)}`,
      [a.id, a.chainId, a.address, height, now, now],
    );
    await rawRun(em, `UPDATE addresses SET status = 'archived', updated_at = ${p(1)} WHERE id = ${p(2)}`, [now, a.id]);
  }

  /** After the commit of `unwatch`: the real-time scan stops matching the address. */
  forget(a: UnwatchedAddress): void {
    this.watched.remove(a.chainId, a.address);
  }

  async rewatch(em: EntityManager, a: UnwatchedAddress, now: string): Promise<void> {
    const height = await cursorHeight(em, a.chainId);
    const p = (i: number) => placeholder(em, i);
    await rawRun(em, `UPDATE archived_scans SET rewatched_height = ${p(1)}, updated_at = ${p(2)} WHERE address_id = ${p(3)}`, [height, now, a.id]);
    await rawRun(em, `UPDATE addresses SET status = 'active', updated_at = ${p(1)} WHERE id = ${p(2)}`, [now, a.id]);
    this.watched.restore(a.chainId, a.address, a.id, Date.parse(now));
  }
}
