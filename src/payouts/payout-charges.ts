import type { WithdrawalRow, WithdrawalStatus } from '../db/entities/withdrawals';
import { Amount } from '../shared/amount';

/**
 * What a confirmed payout charges each of its withdrawals (PRODUCT §8, §8a, §14), as pure values:
 * the share of the fee the chain took, the network fee charged, and which move completes a
 * withdrawal.
 */

/** `fee` split in `n` shares that add up to it, the larger ones first. */
export function splitFee(fee: bigint, n: number): bigint[] {
  const base = fee / BigInt(n);
  const rest = Number(fee % BigInt(n));
  return Array.from({ length: n }, (_, i) => base + (i < rest ? 1n : 0n));
}

/**
 * The network fee a withdrawal is charged: its reserve; in `actual` mode, for the chain's native
 * coin (the coin the fee is paid in), its share of the fee the transaction paid, never above the
 * reserve (the rest returns to available).
 */
export function networkFeeCharged(
  w: Pick<WithdrawalRow, 'network_fee_reserved' | 'network_fee_mode' | 'coin_id'>,
  share: bigint,
  native: { coinId: string; decimals: number },
): Amount {
  const reserved = Amount.of(w.network_fee_reserved);
  if (w.network_fee_mode !== 'actual' || w.coin_id !== native.coinId) return reserved;
  const paid = Amount.fromBaseUnits(share, native.decimals);
  return paid.cmp(reserved) < 0 ? paid : reserved;
}

/**
 * The move that completes a withdrawal of a confirmed payout: `confirm` from `broadcast`; `reopen`
 * for one failed before when the payout was reopened (mined after all, PRODUCT §14: completed and
 * charged again); none for any other (cancelled, rejected, or failed for good).
 */
export function completionMove(status: WithdrawalStatus, payoutReopened: boolean): 'confirm' | 'reopen' | null {
  if (status === 'broadcast') return 'confirm';
  return status === 'failed' && payoutReopened ? 'reopen' : null;
}

/** A withdrawal's depth once its payout is confirmed: what the chain core counted, at least the chain's confirmations. */
export function confirmationsOnCompletion(counted: number, required: number): number {
  return Math.max(counted, required);
}

/**
 * What of the withdrawn coin left the wallet without reaching the payee (`left`, a token taking a
 * fee on transfer) is charged to the withdrawal only when it is the payout's one withdrawal (account
 * families): in a batch nothing tells whose it was.
 */
export function leftCharged(legs: number, left: bigint, decimals: number): Amount {
  return legs === 1 ? Amount.fromBaseUnits(left, decimals) : Amount.zero();
}
