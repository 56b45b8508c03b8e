import type { EntityManager } from 'typeorm';
import { placeholder, rawQuery, rawRun } from '../../../db/raw';
import { Amount } from '../../../shared/amount';

/** A coin an account can spend: a received output the chain core recorded, and the key that owns it. */
export interface SpendableCoin {
  /** The received output's chain transfer row. */
  transferId: string;
  txid: string;
  vout: number;
  /** Satoshi. */
  value: bigint;
  /** Derivation path of the address it pays (receive or change chain of the account's branch). */
  path: string;
}

/**
 * The account's coins on a Bitcoin chain that a new payout may spend: its confirmed incoming
 * outputs (invoice and static deposits, and its change), less those the chain shows spent (an
 * outgoing transfer row spending it, not reverted) and those reserved by a stored payout. A
 * reversed deposit (status `reverted`) is not the account's.
 */
export async function spendableCoins(em: EntityManager, chainId: string, accountId: string): Promise<SpendableCoin[]> {
  const p = (i: number) => placeholder(em, i);
  const rows = await rawQuery<{ id: string; txid: string; output_index: number; amount: string; derivation_path: string }>(
    em,
    `SELECT t.id, t.txid, t.output_index, t.amount, a.derivation_path FROM chain_transfers t JOIN addresses a ON a.id = t.address_id ` +
      `WHERE t.account_id = ${p(1)} AND t.chain_id = ${p(2)} AND t.direction = 'incoming' AND t.status = 'confirmed' ` +
      `AND NOT EXISTS (SELECT 1 FROM chain_transfers s WHERE s.spent_transfer_id = t.id AND s.direction = 'outgoing' AND s.status <> 'reverted') ` +
      `AND NOT EXISTS (SELECT 1 FROM btc_coin_reservations r WHERE r.transfer_id = t.id) ORDER BY t.id`,
    [accountId, chainId],
  );
  return rows.map((r) => ({
    transferId: r.id,
    txid: r.txid,
    vout: Number(r.output_index),
    value: Amount.of(r.amount).toBaseUnits(8),
    path: r.derivation_path,
  }));
}

/** Thrown when a coin chosen for a payout was reserved by another payout in the meantime. */
export class CoinTaken extends Error {
  constructor() {
    super('a coin chosen for this payout is reserved by another payout; build it again');
    this.name = 'CoinTaken';
  }
}

/**
 * Reserves `coins` for the payout `payoutId` in the caller's transaction; throws CoinTaken (the
 * caller's transaction must roll back) if any is reserved already.
 */
export async function reserveCoins(
  em: EntityManager,
  at: { payoutId: string; accountId: string; chainId: string; now: string },
  coins: readonly SpendableCoin[],
): Promise<void> {
  const params: unknown[] = [];
  const values = coins.map((c) => {
    const base = params.length;
    params.push(c.transferId, at.payoutId, at.accountId, at.chainId, at.now);
    return `(${[1, 2, 3, 4, 5].map((i) => placeholder(em, base + i)).join(', ')})`;
  });
  const inserted = await rawRun(
    em,
    `INSERT INTO btc_coin_reservations (transfer_id, payout_id, account_id, chain_id, created_at) VALUES ${values.join(', ')} ON CONFLICT DO NOTHING`,
    params,
  );
  if (inserted !== coins.length) throw new CoinTaken();
}

/** Gives back the coins of a payout that will never be broadcast or can no longer confirm. */
export async function releaseCoins(em: EntityManager, payoutId: string): Promise<number> {
  return rawRun(em, `DELETE FROM btc_coin_reservations WHERE payout_id = ${placeholder(em, 1)}`, [payoutId]);
}

/**
 * Whether coins may still come back to the account on a Bitcoin chain: a payout of its on its way
 * (a withdrawal of `coinId` processing or broadcast: it returns change, or fails and gives its
 * coins back), or change of its seen and not yet confirmed. While they may, a withdrawal its
 * spendable coins cannot pay waits; once none may, it cannot be funded.
 */
export async function coinsComing(em: EntityManager, chainId: string, accountId: string, coinId: string): Promise<boolean> {
  const p = (i: number) => placeholder(em, i);
  const rows = await rawQuery(
    em,
    `SELECT 1 FROM withdrawals WHERE account_id = ${p(1)} AND coin_id = ${p(2)} AND status IN ('processing', 'broadcast') ` +
      `UNION ALL SELECT 1 FROM chain_transfers WHERE account_id = ${p(3)} AND chain_id = ${p(4)} AND direction = 'incoming' AND purpose = 'change' AND status = 'seen' LIMIT 1`,
    [accountId, coinId, accountId, chainId],
  );
  return rows.length > 0;
}
