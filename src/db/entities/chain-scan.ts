import { EntitySchema } from 'typeorm';

/**
 * How far the chain core has scanned a chain: the last block whose transfers are recorded. It moves
 * in the same transaction as the transfers and credits of the blocks it passes, so after a crash
 * the scan resumes exactly after what was committed.
 */
export interface ChainCursorRow {
  chain_id: string;
  /** Last scanned height; one below the start height for a fresh cursor (-1 before the genesis block). */
  height: number;
  /** Hash of the block at `height`; null only before the genesis block. */
  hash: string | null;
  updated_at: string;
}

/** A recent scanned block header: what the reorganisation walk-back compares with the node's chain. */
export interface ChainBlockRow {
  chain_id: string;
  height: number;
  hash: string;
  parent_hash: string;
}

export const ChainCursorEntity = new EntitySchema<ChainCursorRow>({
  name: 'ChainCursor',
  tableName: 'chain_cursors',
  columns: {
    chain_id: { type: 'varchar', length: 32, primary: true },
    height: { type: 'integer' },
    hash: { type: 'varchar', length: 128, nullable: true },
    updated_at: { type: 'varchar', length: 30 },
  },
});

export const ChainBlockEntity = new EntitySchema<ChainBlockRow>({
  name: 'ChainBlock',
  tableName: 'chain_blocks',
  columns: {
    chain_id: { type: 'varchar', length: 32, primary: true },
    height: { type: 'integer', primary: true },
    hash: { type: 'varchar', length: 128 },
    parent_hash: { type: 'varchar', length: 128 },
  },
});
