import type { EntityManager } from 'typeorm';
import type { ChainBlockRow } from '../db/entities/chain-scan';
import { placeholder, rawQuery, rawRun } from '../db/raw';

/**
 * The chain core's fixed writes per batch of blocks (headers, cursor, pruning), as plain SQL: run
 * once a block, they cost more through TypeORM than in the database (`npm run bench btc`). Same
 * SQL on SQLite and PostgreSQL.
 */

/** Header rows per INSERT: far below any database's bound-parameter limit. */
const INSERT_CHUNK = 200;
const HEADER_COLUMNS = 4;

export async function insertHeaders(em: EntityManager, headers: readonly ChainBlockRow[]): Promise<void> {
  for (let i = 0; i < headers.length; i += INSERT_CHUNK) {
    const chunk = headers.slice(i, i + INSERT_CHUNK);
    const values = chunk.map((_, r) => `(${Array.from({ length: HEADER_COLUMNS }, (_, c) => placeholder(em, r * HEADER_COLUMNS + c + 1)).join(', ')})`);
    await rawQuery(
      em,
      `INSERT INTO chain_blocks (chain_id, height, hash, parent_hash) VALUES ${values.join(', ')}`,
      chunk.flatMap((h) => [h.chain_id, h.height, h.hash, h.parent_hash]),
    );
  }
}

/** A new chain's cursor row; fails on the primary key if another daemon created it first. */
export async function createCursor(em: EntityManager, chainId: string, height: number, hash: string | null, updatedAt: string): Promise<void> {
  const p = (i: number) => placeholder(em, i);
  await rawQuery(em, `INSERT INTO chain_cursors (chain_id, height, hash, updated_at) VALUES (${p(1)}, ${p(2)}, ${p(3)}, ${p(4)})`, [
    chainId,
    height,
    hash,
    updatedAt,
  ]);
}

/**
 * Moves the chain's cursor from `from` to `to` (a guarded update); false when the row was not at
 * `from`: another daemon scanned the chain since this one read its cursor. The first write of a
 * scan's transaction, so the row lock orders two daemons' scans of one chain before either records
 * anything (on PostgreSQL the second waits, then finds the row moved).
 */
export async function moveCursor(em: EntityManager, chainId: string, from: ScanPoint, to: ScanPoint, updatedAt: string): Promise<boolean> {
  const p = (i: number) => placeholder(em, i);
  const changed = await rawRun(
    em,
    `UPDATE chain_cursors SET height = ${p(1)}, hash = ${p(2)}, updated_at = ${p(3)}
     WHERE chain_id = ${p(4)} AND height = ${p(5)} AND COALESCE(hash, '') = ${p(6)}`,
    [to.height, to.hash, updatedAt, chainId, from.height, from.hash ?? ''],
  );
  return changed === 1;
}

/** A scanned block: `hash` null only before the genesis block. */
export interface ScanPoint {
  height: number;
  hash: string | null;
}

/** Drops the chain's headers below `height`: deeper than any reorganisation the core follows. */
export async function pruneHeaders(em: EntityManager, chainId: string, height: number): Promise<void> {
  await rawQuery(em, `DELETE FROM chain_blocks WHERE chain_id = ${placeholder(em, 1)} AND height < ${placeholder(em, 2)}`, [chainId, height]);
}
