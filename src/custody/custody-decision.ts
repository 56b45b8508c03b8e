import { Amount } from '../shared/amount';

/** What the forwarding job knows of one cold-storage rule at a run (PRODUCT §18). */
export interface ForwardCase {
  /** The account's available balance of the coin. */
  available: Amount;
  /** What stays available. */
  keep: Amount;
  /** The account is frozen: it forwards nothing. */
  frozen: boolean;
  /** The account is not verified: it withdraws nothing. */
  unverified: boolean;
  /** The rule's address is still inside the security-change window. */
  waiting: boolean;
  /** The rule's last forward may still move money (not completed, failed, rejected or cancelled). */
  openForward: boolean;
}

export type ForwardDecision =
  | { forward: false; reason: 'frozen' | 'unverified' | 'waiting' | 'open_forward' | 'within_keep' }
  | {
      forward: true;
      /** What the forward may take from `available` in all (its amount and every fee): the excess over `keep`. */
      budget: Amount;
    };

/**
 * Whether a rule forwards now, and what it may spend: the excess of `available` over `keep`, of
 * which the withdrawal's amount is the largest whose total debit (platform fee and reserved network
 * fee included) fits, so `keep` is left available after the fees (withdraw-all.ts prices it).
 */
export function forwardDecision(c: ForwardCase): ForwardDecision {
  if (c.frozen) return { forward: false, reason: 'frozen' };
  if (c.unverified) return { forward: false, reason: 'unverified' };
  if (c.waiting) return { forward: false, reason: 'waiting' };
  if (c.openForward) return { forward: false, reason: 'open_forward' };
  const budget = c.available.minus(c.keep);
  if (!budget.isPositive()) return { forward: false, reason: 'within_keep' };
  return { forward: true, budget };
}

/** Withdrawal statuses after which a forward moves no more money (a completed one stays settled). */
export const CLOSED_FORWARD = ['completed', 'failed', 'rejected', 'cancelled'] as const;

/** The payout_id of a rule's `seq`-th forward: the same for every run that would make it. */
export const forwardPayoutId = (ruleId: string, seq: number): string => `cold-storage:${ruleId}:${seq}`;

/** The sum of exact decimal amounts. */
export function sumAmounts(amounts: Iterable<string>): Amount {
  let total = Amount.zero();
  for (const a of amounts) total = total.plus(Amount.of(a));
  return total;
}
