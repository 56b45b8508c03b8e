import type { EntityManager } from 'typeorm';
import { inList, placeholder, rawQuery } from '../db/raw';

/**
 * Which of `txids` the chain core recorded as the wallet's own spend (an outgoing chain transfer)
 * in a scanned block not reorganised away, each with its lowest block height. What the chain core
 * saw mined is mined, whatever a node's lookups by hash answer (a node without a transaction index,
 * a backend behind the one that served the block, one that lost its index): the payout rail's
 * evidence and the account-send queue both read a transaction's fate from here.
 */
export async function minedOwnSpends(em: EntityManager, chainId: string, txids: readonly string[]): Promise<Map<string, number>> {
  if (txids.length === 0) return new Map();
  const ours = inList(em, txids, 2);
  const rows = await rawQuery<{ txid: string; block_height: number | string }>(
    em,
    `SELECT txid, MIN(block_height) AS block_height FROM chain_transfers WHERE chain_id = ${placeholder(em, 1)} AND txid ${ours.sql} ` +
      `AND direction = 'outgoing' AND status <> 'reverted' AND block_height IS NOT NULL GROUP BY txid`,
    [chainId, ...ours.params],
  );
  return new Map(rows.map((r) => [r.txid, Number(r.block_height)]));
}
