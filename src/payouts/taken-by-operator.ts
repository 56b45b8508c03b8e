import type { EntityManager } from 'typeorm';
import type { Coin } from '../catalog/coins';
import { placeholder, rawQuery } from '../db/raw';
import { Amount } from '../shared/amount';

/**
 * What costs the operator's `network` book carries took from an account's native coin on an
 * account chain (EVM, Tron) at its treasury, and the gas station has not given back yet (base
 * units, 0 when nothing): each native sweep into the treasury moved less than its deposits were
 * credited with (its gas, and what it left behind at the deposit address); each send and payout
 * from the treasury paid its fee out of it (a token payout's gas, the bandwidth a Tron payout
 * burnt); less what the account was charged for its native withdrawals' network fees and what the
 * gas station's top-ups brought the treasury. Read from the wallet's own sends and payouts, never
 * from the balances: a treasury short for any other reason is never made up by the gas station.
 */
export async function takenByOperator(
  em: EntityManager,
  q: { chainId: string; accountId: string; treasury: string; native: Pick<Coin, 'id' | 'decimals'> },
): Promise<bigint> {
  const p = (i: number) => placeholder(em, i);
  const units = (coins: string | null): bigint => (coins === null ? 0n : Amount.of(coins).toBaseUnits(q.native.decimals));
  // The treasury's native sweeps: what their deposits were credited with, less what they moved.
  const sweeps = `FROM account_sends e WHERE e.chain_id = ${p(1)} AND e.kind = 'sweep' AND e.coin_id = ${p(2)} AND e.to_address = ${p(3)} AND e.status = 'mined' AND e.succeeded = 1`;
  const credited = await rawQuery<{ amount: string }>(
    em,
    `SELECT t.amount FROM evm_swept_transfers w JOIN chain_transfers t ON t.id = w.transfer_id WHERE w.send_id IN (SELECT e.id ${sweeps})`,
    [q.chainId, q.native.id, q.treasury],
  );
  const moved = await rawQuery<{ amount: string }>(em, `SELECT e.amount ${sweeps}`, [q.chainId, q.native.id, q.treasury]);
  let taken = credited.reduce((sum, t) => sum + units(t.amount), 0n) - moved.reduce((sum, e) => sum + BigInt(e.amount), 0n);
  const sent = await rawQuery<{ fee_paid: string }>(
    em,
    `SELECT fee_paid FROM account_sends WHERE chain_id = ${p(1)} AND from_address = ${p(2)} AND fee_paid IS NOT NULL AND booked_at IS NOT NULL`,
    [q.chainId, q.treasury],
  );
  for (const s of sent) taken += BigInt(s.fee_paid);
  const paid = await rawQuery<{ fee_booked: string | null }>(
    em,
    `SELECT fee_booked FROM chain_payouts WHERE chain_id = ${p(1)} AND account_id = ${p(2)} AND fee_booked IS NOT NULL`,
    [q.chainId, q.accountId],
  );
  for (const r of paid) taken += units(r.fee_booked);
  const charged = await rawQuery<{ network_fee_charged: string | null }>(
    em,
    `SELECT network_fee_charged FROM withdrawals WHERE account_id = ${p(1)} AND coin_id = ${p(2)} AND network_fee_charged IS NOT NULL`,
    [q.accountId, q.native.id],
  );
  for (const w of charged) taken -= units(w.network_fee_charged);
  const given = await rawQuery<{ amount: string }>(
    em,
    `SELECT amount FROM account_sends WHERE chain_id = ${p(1)} AND kind = 'topup' AND to_address = ${p(2)} AND status = 'mined' AND succeeded = 1`,
    [q.chainId, q.treasury],
  );
  for (const g of given) taken -= BigInt(g.amount);
  return taken > 0n ? taken : 0n;
}
