import type { ReviewReason, WithdrawalStatus } from '../db/entities/withdrawals';
import type { Amount } from '../shared/amount';

/**
 * What decides a new withdrawal's first status (SPEC "POST /v1/withdrawals", PRODUCT §8), every
 * amount exact and already valued in the fiat it is compared in.
 */
export interface ReviewCase {
  /** The withdrawal's amount in the account's fiat (its default, else the install's). */
  value: Amount;
  /** `dual_approval_threshold` in the account's fiat; null: none. */
  dualApprovalThreshold: Amount | null;
  /** A change of the account's security in the last 24 hours (a key's withdraw granted, a member added, the whitelist changed). */
  recentSecurityChange: boolean;
  /** `daily_withdrawal_limit` in the account's fiat; null: none. */
  dailyLimit: Amount | null;
  /**
   * What the account's other withdrawals of the last 24 hours that still count are worth in the
   * account's fiat: exact, or an upper bound of it when that bound already keeps the day under the
   * limit (the decision is the same).
   */
  dayValue: Amount;
  /** The withdrawal's amount in the install's default fiat, and the signer's cap for its coin there (`payouts.max_per_transaction`); null: no cap. */
  signer: { value: Amount; cap: Amount | null };
}

export interface ReviewDecision {
  status: WithdrawalStatus;
  reviewReason: ReviewReason | null;
}

/**
 * The first status of a withdrawal, in SPEC's order: above the dual-approval threshold it awaits a
 * second approval; else a recent security change (`pattern`), the day's total past the daily limit
 * (`limit`) or the signer's cap (`signer_limit`) send it to review; else it is pending.
 */
export function reviewDecision(c: ReviewCase): ReviewDecision {
  if (c.dualApprovalThreshold !== null && c.value.cmp(c.dualApprovalThreshold) > 0) return { status: 'awaiting_approval', reviewReason: null };
  if (c.recentSecurityChange) return { status: 'review', reviewReason: 'pattern' };
  if (c.dailyLimit !== null && c.dayValue.plus(c.value).cmp(c.dailyLimit) > 0) return { status: 'review', reviewReason: 'limit' };
  if (c.signer.cap !== null && c.signer.value.cmp(c.signer.cap) > 0) return { status: 'review', reviewReason: 'signer_limit' };
  return { status: 'pending', reviewReason: null };
}
