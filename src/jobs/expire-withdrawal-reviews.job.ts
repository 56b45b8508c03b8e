import type { WithdrawalService } from '../withdrawals/withdrawal.service';
import type { Job } from './scheduler';

/** Rejects withdrawals left in review for 24 hours, every minute; run at start, it catches up after downtime. */
export function expireWithdrawalReviewsJob(withdrawals: WithdrawalService): Job {
  return {
    name: 'expire-withdrawal-reviews',
    schedule: '*/1 * * * *',
    run: async () => void (await withdrawals.expireReviews()),
  };
}
