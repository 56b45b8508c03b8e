import type { EntityManager } from 'typeorm';
import type { Coin } from '../catalog/coins';
import { placeholder, rawQuery } from '../db/raw';
import type { MoneyMovement } from '../money/money-movement';
import { Amount } from '../shared/money';

/**
 * What an account's native coin on an account chain (EVM, Tron) lacks at its treasury because
 * costs the operator's `network` book carries came out of the account's own coins (base units, 0
 * when nothing): the gas of its native sweeps, taken from the deposits swept, and what they left
 * behind at the deposit addresses; its payouts' fees beyond what it was charged (a token payout's
 * gas from its treasury's native coin, say); deposits too small to be worth a sweep. It is the
 * account's balance of the coin (available and hold) less its withdrawals on their way (their
 * coins have left, or are counted as leaving) less what its treasury holds free of those. The gas
 * station gives it back when a payout needs it, so the account's coins again hold its balance.
 */
export async function takenByOperator(
  em: EntityManager,
  money: Pick<MoneyMovement, 'accountBalance'>,
  accountId: string,
  native: Pick<Coin, 'id' | 'decimals'>,
  treasuryFree: bigint,
): Promise<bigint> {
  const { available, hold } = await money.accountBalance(em, accountId, native.id);
  const leaving = await rawQuery<{ total_debit: string }>(
    em,
    `SELECT total_debit FROM withdrawals WHERE account_id = ${placeholder(em, 1)} AND coin_id = ${placeholder(em, 2)} AND status IN ('processing', 'broadcast')`,
    [accountId, native.id],
  );
  const owned = leaving.reduce((sum, w) => sum.minus(Amount.of(w.total_debit)), available.plus(hold));
  const taken = owned.toBaseUnits(native.decimals) - treasuryFree;
  return taken > 0n ? taken : 0n;
}
