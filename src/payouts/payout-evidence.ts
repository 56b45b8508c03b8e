import type { EntityManager } from 'typeorm';
import { inList, placeholder, rawQuery } from '../db/raw';
import { minedOwnSpends } from '../chains/own-spends';
import type { SpendKey } from './rail';

/** A candidate of a payout in a block the chain core scanned. */
export interface MinedCandidate {
  txid: string;
  height: number;
  /** Its depth under the chain core's scanned tip (1: in the newest scanned block). */
  confirmations: number;
}

/** What the chain core's own blocks say of a payout (PRODUCT §14). */
export interface PayoutEvidence {
  /** The candidate in a scanned block, if one is. */
  mined: MinedCandidate | null;
  /** Another transaction that took what the payout spends, in a block at the chain's confirmations. */
  rival: string | null;
  /** The chain core's scanned height; null before its first scan. */
  scanned: number | null;
}

/**
 * Reads a payout's fate from the chain core's records of the wallet's own spends (the outgoing
 * chain_transfers rows it writes for every scanned block), never from a node's lookup by txid:
 * that answers "not found" on a node without a transaction index once a changeless payout's output
 * is spent, and a node may drop or hide a transaction it holds. A rival counts only once the chain
 * core confirmed it (the chain's confirmations): until then a reorganisation may still take it away.
 */
export async function payoutEvidence(em: EntityManager, chainId: string, txids: readonly string[], key: SpendKey): Promise<PayoutEvidence> {
  const p = (i: number) => placeholder(em, i);
  const [cursor] = await rawQuery<{ height: number | string }>(em, `SELECT height FROM chain_cursors WHERE chain_id = ${p(1)}`, [chainId]);
  const scanned = cursor ? Number(cursor.height) : null;
  // The lowest block a candidate is in (two candidates in blocks only across a reorganisation).
  const [mined] = [...(await minedOwnSpends(em, chainId, txids)).entries()].sort((a, b) => a[1] - b[1]);
  if (mined) {
    const [txid, height] = mined;
    return { mined: { txid, height, confirmations: scanned === null ? 1 : Math.max(1, scanned - height + 1) }, rival: null, scanned };
  }
  return { mined: null, rival: key === null ? null : await rivalOf(em, chainId, txids, key), scanned };
}

async function rivalOf(em: EntityManager, chainId: string, txids: readonly string[], key: NonNullable<SpendKey>): Promise<string | null> {
  const p = (i: number) => placeholder(em, i);
  let rows: Array<{ txid: string }>;
  if ('coins' in key) {
    if (key.coins.length === 0) return null;
    const coins = inList(em, key.coins, 2);
    rows = await rawQuery(
      em,
      `SELECT txid FROM chain_transfers WHERE chain_id = ${p(1)} AND direction = 'outgoing' AND status = 'confirmed' AND spent_transfer_id ${coins.sql}`,
      [chainId, ...coins.params],
    );
  } else {
    rows = await rawQuery(
      em,
      `SELECT t.txid FROM chain_transfers t JOIN addresses a ON a.id = t.address_id WHERE a.chain_id = ${p(1)} AND a.address = ${p(2)} ` +
        `AND t.chain_id = ${p(3)} AND t.direction = 'outgoing' AND t.status = 'confirmed' AND t.nonce = ${p(4)}`,
      [chainId, key.sender, chainId, key.nonce],
    );
  }
  const ours = new Set(txids);
  return rows.find((r) => !ours.has(r.txid))?.txid ?? null;
}
