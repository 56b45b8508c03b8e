import type { RefundStatus } from '../db/entities/refund';
import type { EventType } from '../shared/events';
import { WITHDRAWAL_STATUSES } from '../withdrawals/withdrawal.state';

/** Every refund status (PRODUCT §16): waiting for the payer's address, its withdrawal's, or expired unused. */
export const REFUND_STATUSES = ['awaiting_address', ...WITHDRAWAL_STATUSES, 'expired'] as const satisfies readonly RefundStatus[];

/** Statuses in which a refund no longer takes anything from what was received (its hold released). */
const ENDED: ReadonlySet<RefundStatus> = new Set(['failed', 'rejected', 'cancelled', 'expired']);

/** Whether a refund in `status` counts in its invoice's and transaction's `refunded_amount`. */
export const countsAsRefunded = (status: RefundStatus): boolean => !ENDED.has(status);

/**
 * The event a refund's move from `from` to `to` sends (PRODUCT §16); null for the moves that only
 * follow its withdrawal (review, processing, broadcast: the withdrawal's own events tell those).
 * A refund rejected in review did not happen: `refund.failed`, as one whose payout failed.
 */
export function refundEvent(from: RefundStatus, to: RefundStatus): EventType | null {
  if (from === to) return null;
  switch (to) {
    case 'completed':
      return 'refund.completed';
    case 'failed':
    case 'rejected':
      return 'refund.failed';
    case 'cancelled':
      return 'refund.cancelled';
    case 'expired':
      return 'refund.expired';
    default:
      return null;
  }
}
