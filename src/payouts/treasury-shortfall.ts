import type { EntityManager } from 'typeorm';
import { NATIVE_ASSET, type Coin } from '../catalog/coins';
import type { PayoutOrder } from './rail';
import { unsweptCredited } from './sweep-groups';
import { takenByOperator } from './taken-by-operator';

/** What an account chain's rail does for a payout its treasury is short of (treasuryShortfall). */
export type ShortfallStep = { step: 'sweep' } | { step: 'topup' } | { step: 'uncovered'; missing: bigint };

/**
 * A treasury holds `short` less of the order's coin than its payout needs (PRODUCT §14, EVM and
 * Tron alike). A sweep brings it when a deposit of the coin is worth sweeping (more than `worth`,
 * what its own sweep may cost). Else, for the native coin, the gas station gives back what the
 * operator's book took from the account's coins (takenByOperator), its deposits too small to be
 * worth a sweep, and what the payout's fee costs now above the withdrawal's reserve (`fee`): a
 * top-up when that covers the shortfall. Else what stays `missing`: the payout waits while
 * something on its way may still bring it, and cannot be funded once nothing is.
 */
export async function treasuryShortfall(
  em: EntityManager,
  q: { chainId: string; accountId: string; treasury: string; coin: Coin; order: PayoutOrder; short: bigint; fee: bigint; worth: bigint },
): Promise<ShortfallStep> {
  const native = q.coin.asset === NATIVE_ASSET;
  const unswept = await unsweptCredited(em, q.chainId, q.accountId, q.coin);
  if (unswept.some((credited) => credited > (native ? q.worth : 0n))) return { step: 'sweep' };
  if (!native) return { step: 'uncovered', missing: q.short };
  const dearer = q.fee - (q.order.networkFee ?? q.fee);
  const taken = await takenByOperator(em, { chainId: q.chainId, accountId: q.accountId, treasury: q.treasury, native: q.coin });
  const covered = taken + unswept.reduce((sum, c) => sum + c, 0n) + (dearer > 0n ? dearer : 0n);
  return q.short <= covered ? { step: 'topup' } : { step: 'uncovered', missing: q.short - covered };
}
