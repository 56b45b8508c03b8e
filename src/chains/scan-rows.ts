import type { EntityManager } from 'typeorm';
import type { ChainBlockRow } from '../db/entities/chain-scan';
import { placeholder, rawQuery } from '../db/raw';

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

/** The chain's cursor row, created or moved. */
export async function saveCursor(em: EntityManager, chainId: string, height: number, hash: string | null, updatedAt: string): Promise<void> {
  const p = (i: number) => placeholder(em, i);
  await rawQuery(
    em,
    `INSERT INTO chain_cursors (chain_id, height, hash, updated_at) VALUES (${p(1)}, ${p(2)}, ${p(3)}, ${p(4)})
     ON CONFLICT (chain_id) DO UPDATE SET height = excluded.height, hash = excluded.hash, updated_at = excluded.updated_at`,
    [chainId, height, hash, updatedAt],
  );
}

/** Drops the chain's headers below `height`: deeper than any reorganisation the core follows. */
export async function pruneHeaders(em: EntityManager, chainId: string, height: number): Promise<void> {
  await rawQuery(em, `DELETE FROM chain_blocks WHERE chain_id = ${placeholder(em, 1)} AND height < ${placeholder(em, 2)}`, [chainId, height]);
}
