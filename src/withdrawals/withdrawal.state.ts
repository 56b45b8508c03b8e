import type { WithdrawalStatus } from '../db/entities/withdrawals';
import type { EventType } from '../shared/events';

export const WITHDRAWAL_STATUSES: readonly WithdrawalStatus[] = [
  'pending',
  'review',
  'awaiting_approval',
  'processing',
  'broadcast',
  'completed',
  'failed',
  'rejected',
  'cancelled',
];

/** What makes a withdrawal move (PRODUCT §8, issue 16 §3). */
export type WithdrawalTrigger =
  | 'approve' // an owner or admin approves a review, or gives the second approval
  | 'reject' // an owner or admin refuses it
  | 'expire' // a review left undecided for 24 hours
  | 'cancel' // the merchant, before processing
  | 'claim' // the payout worker takes it
  | 'compliance' // the payout worker finds the account unverified, or the destination off its enforced whitelist (PRODUCT §14)
  | 'broadcast' // its signed transaction reached the node
  | 'confirm' // its transaction has the chain's confirmations
  | 'fail' // its transaction can no longer confirm
  | 'reorg' // the block that confirmed it was dropped
  | 'reopen'; // its payout, failed, was mined after all (PRODUCT §14)

/** What happens to the withdrawal's hold on a move; `recharge`: released before, its total_debit is taken again. */
export type HoldAction = 'keep' | 'settle' | 'release' | 'recharge';

export interface Move {
  to: WithdrawalStatus;
  hold: HoldAction;
  /** The event the move sends, when PRODUCT §10 names one for it. */
  event: EventType | null;
}

const release = (to: WithdrawalStatus): Move => ({ to, hold: 'release', event: `withdrawal.${to}` as EventType });
const keep = (to: WithdrawalStatus, event: EventType | null): Move => ({ to, hold: 'keep', event });

/** Every allowed move; anything not here is refused. */
const MOVES: Readonly<Partial<Record<WithdrawalStatus, Partial<Record<WithdrawalTrigger, Move>>>>> = {
  review: { approve: keep('pending', null), reject: release('rejected'), expire: release('rejected'), cancel: release('cancelled') },
  awaiting_approval: { approve: keep('pending', null), reject: release('rejected'), cancel: release('cancelled') },
  pending: { claim: keep('processing', 'withdrawal.processing'), compliance: keep('review', 'withdrawal.review'), cancel: release('cancelled') },
  processing: { broadcast: keep('broadcast', 'withdrawal.broadcast'), fail: release('failed') },
  broadcast: { confirm: { to: 'completed', hold: 'settle', event: 'withdrawal.completed' }, fail: release('failed') },
  // Settled money stays settled: the transaction is in the chain's hands again, never paid twice.
  completed: { reorg: keep('broadcast', 'withdrawal.broadcast') },
  // The coins left after all: charged again, whatever the balance becomes.
  failed: { reopen: { to: 'completed', hold: 'recharge', event: 'withdrawal.completed' } },
};

/** The move `trigger` makes from `from`; null when the state does not allow it. */
export function nextMove(from: WithdrawalStatus, trigger: WithdrawalTrigger): Move | null {
  return MOVES[from]?.[trigger] ?? null;
}

/** The event announcing a withdrawal created in `status` (pending has none in PRODUCT §10). */
export function creationEvent(status: WithdrawalStatus): EventType | null {
  return status === 'review' || status === 'awaiting_approval' ? `withdrawal.${status}` : null;
}

/** The merchant, or any member, may cancel only before processing (SPEC "Withdrawal" moves). */
export const isCancellable = (s: WithdrawalStatus): boolean => nextMove(s, 'cancel') !== null;
